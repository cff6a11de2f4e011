"""``external`` reads a TEXT2SPARQL system's reply through the bounded exchange (issue 51): a reply dripping a byte
at a time ends at ``timeout_s``, a gzip bomb is refused once its decoded size passes the cap, and the system's
self-description is read up to a cap and kept small."""

from __future__ import annotations

import gzip
import json
import time

import pytest

from sparqlab.core.event_loops import run_sync
from sparqlab.data.question import Question
from sparqlab.kg import EndpointKG
from sparqlab.kg.profiles import generic_profile
from sparqlab.platform.context import PrepareContext, QuestionContext
from sparqlab.text2sparql.external import ExternalSystem
from sparqlab.text2sparql.external.system import MAX_REPLY_BYTES, SELF_DESCRIPTION_CHARS
from support.hostile_http import hostile_server, http_reply, scripted_server

REPLY = json.dumps({"dataset": "urn:d", "question": "q", "query": "SELECT * WHERE { ?s ?p ?o }"}).encode()
KG = EndpointKG("http://127.0.0.1:9/sparql", generic_profile("unused"))


def ask(url: str, **config):
    system = ExternalSystem(endpoint=url + "/", retries=0, dataset_iri="urn:d", **config)
    ctx = QuestionContext(Question("q1", "Who directed Alien?"), KG)
    return run_sync(system.answer(ctx.question, ctx)), ctx


def test_a_dripping_reply_ends_at_the_timeout():
    reply = http_reply(REPLY)
    with hostile_server(reply, drip_from=len(reply) - len(REPLY) + 3, interval_s=0.5) as url:
        started = time.monotonic()
        output, _ = ask(url, timeout_s=1.0)
    assert output.error_category == "external_timeout" and time.monotonic() - started < 2.5


def test_a_gzip_bomb_is_refused_by_its_decoded_size():
    bomb = gzip.compress(b" " * (64 * MAX_REPLY_BYTES), compresslevel=9)  # 64 KiB that decode to 64 MiB
    with hostile_server(http_reply(bomb, headers={"Content-Encoding": "gzip"})) as url:
        output, ctx = ask(url, timeout_s=10.0)
    assert output.error_category == "external_bad_reply"
    assert any("larger than" in str(event.data.get("body")) for event in ctx.trace.events
               if event.kind == "external_bad_reply")


@pytest.mark.parametrize("size", [100_000, 3 * 2**20], ids=["long", "over the cap"])
def test_the_self_description_is_capped(size):
    document = json.dumps({"info": {"title": "big", "description": "x" * size}, "paths": {"/": {}}}).encode()

    def respond(path, conn):
        conn.sendall(http_reply(document if path.endswith("openapi.json") else REPLY))

    with scripted_server(respond) as url:
        system = ExternalSystem(endpoint=url + "/", retries=0, dataset_iri="urn:d")
        run_sync(system.prepare(PrepareContext(KG)))
    if size > 2**20:
        assert system.self_description is None
    else:
        assert system.self_description == {"info": {"title": "big", "description": "x" * SELF_DESCRIPTION_CHARS},
                                           "paths": ["/"]}
