"""The endpoint client's bounds (issue 40): ``timeout_s`` is a total deadline per attempt however slowly the bytes
come, an oversized answer is refused while it arrives, and a redirect to another origin is refused."""

from __future__ import annotations

import json
import time

import pytest

from sparqlab.kg import EndpointError, EndpointKG, QueryOptions, QueryTimeout, transport
from sparqlab.kg.profiles import generic_profile
from support.hostile_http import hostile_server, http_reply

ANSWER = json.dumps({"head": {"vars": ["a"]},
                     "results": {"bindings": [{"a": {"type": "literal", "value": "x"}}]}}).encode()
RESULTS_TYPE = "application/sparql-results+json"


def endpoint(url: str, timeout_s: float = 1.0) -> EndpointKG:
    return EndpointKG(f"{url}/sparql", generic_profile("hostile"), options=QueryOptions(timeout_s=timeout_s))


@pytest.mark.parametrize("drip_from", [20, len(http_reply(ANSWER, RESULTS_TYPE)) - len(ANSWER) + 5],
                         ids=["headers dripped", "body dripped"])
def test_a_dripping_endpoint_ends_at_the_deadline(drip_from):
    # 0.2 s a byte: the whole answer would take ~40 s; every single read is far quicker than the 1 s timeout
    with hostile_server(http_reply(ANSWER, RESULTS_TYPE), drip_from=drip_from, interval_s=0.2) as url:
        start = time.monotonic()
        with pytest.raises(QueryTimeout, match="within 1 s"):
            endpoint(url).query("SELECT ?a WHERE { ?a ?b ?c }")
        assert time.monotonic() - start < 2.5


def test_an_answer_over_the_byte_cap_is_refused_while_it_arrives(monkeypatch):
    monkeypatch.setattr(transport, "MIN_RESULT_BYTES", 100_000)
    big = b'{"a": {"type": "literal", "value": "' + b"x" * 90_000 + b'"}}'
    huge = b'{"head": {"vars": ["a"]}, "results": {"bindings": [' + b",".join([big] * 3) + b"]}}"
    with hostile_server(http_reply(huge, RESULTS_TYPE)) as url:
        with pytest.raises(EndpointError, match="larger than 120,480 bytes.*before parsing"):
            endpoint(url, timeout_s=10).query("SELECT ?a WHERE { ?a ?b ?c }", max_rows=5)
        # a higher row cap allows more bytes (4 KiB a row): the same answer is read whole
        assert len(endpoint(url, timeout_s=10).query("SELECT ?a WHERE { ?a ?b ?c }", max_rows=50)) == 3


def test_a_redirect_to_another_origin_is_refused():
    with hostile_server(http_reply(ANSWER, RESULTS_TYPE)) as elsewhere:
        moved = http_reply(b"", "text/plain", "302 Found", {"Location": f"{elsewhere}/sparql"})
        with hostile_server(moved) as url, pytest.raises(EndpointError, match="redirected to another origin"):
            endpoint(url).query("SELECT ?a WHERE { ?a ?b ?c }")
        assert len(endpoint(elsewhere).query("SELECT ?a WHERE { ?a ?b ?c }")) == 1


def test_the_row_cap_applies_while_reading_the_rest_is_never_read():
    row = b'{"a": {"type": "literal", "value": "r\\u00e9sum\\u00e9 \xc3\xa9 \\"q\\" ]}"}}'
    rows = b'{"head": {"vars": ["a"]}, "results": {"bindings": [' + b", ".join([row] * 12)
    # 12 rows at once, then the server holds the connection open dripping the rest: only a client that stops
    # reading at the row cap answers before the deadline
    reply = http_reply(rows + b', {"a": {"type": "literal", "value": "late"}}]}}', RESULTS_TYPE)
    with hostile_server(reply, drip_from=len(reply) - 40, interval_s=0.5) as url:
        start = time.monotonic()
        result = endpoint(url, timeout_s=5).query("SELECT ?a WHERE { ?a ?b ?c }", max_rows=10)
        assert time.monotonic() - start < 2.0
    assert len(result) == 10 and result.truncated
    assert result.rows[0]["a"].value == 'résumé é "q" ]}'
    with hostile_server(http_reply(rows + b"]}}", RESULTS_TYPE)) as url:  # under the cap: read whole, as before
        whole = endpoint(url).query("SELECT ?a WHERE { ?a ?b ?c }", max_rows=20)
    assert len(whole) == 12 and not whole.truncated


def test_the_bounds_hold_only_through_sparqlabs_opener_and_leave_other_urllib_use_alone(monkeypatch):
    import urllib.request

    install = urllib.request.install_opener
    with hostile_server(http_reply(ANSWER, RESULTS_TYPE)) as elsewhere:
        moved = http_reply(b"", "text/plain", "302 Found", {"Location": f"{elsewhere}/sparql"})
        with hostile_server(moved) as url:
            # outside a query the installed opener acts as urllib's own: the cross-origin redirect is followed
            endpoint(elsewhere).query("SELECT ?a WHERE { ?a ?b ?c }")
            with urllib.request.urlopen(f"{url}/sparql", timeout=5) as response:
                assert response.read() == ANSWER
        # another opener in place when the query opens (installed by a program between ours and urlopen): the
        # answer is refused, not read without the bounds
        install(urllib.request.build_opener())
        monkeypatch.setattr(urllib.request, "install_opener", lambda opener: None)
        try:
            with pytest.raises(EndpointError, match="another urllib opener"):
                endpoint(elsewhere).query("SELECT ?a WHERE { ?a ?b ?c }")
        finally:
            install(transport.OPENER)
