"""Wikidata's entity search through the ``wbsearchentities`` API: hits, types, the cache, one bounded exchange."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from sparqlab.core.cache import JsonCache
from sparqlab.graphs.profiles import WIKIDATA
from sparqlab.graphs.wikidata import WikidataApiSearch
from sparqlab.kg import open_kg


class _FakeWikibaseApi(BaseHTTPRequestHandler):
    """Answers ``wbsearchentities`` like Wikidata's API does, for two items."""

    calls: list[dict] = []

    def do_GET(self):  # noqa: N802 - http.server's naming
        params = {k: v[0] for k, v in parse_qs(urlparse(self.path).query).items()}
        type(self).calls.append(params)
        found = [
            {"id": "Q42", "concepturi": "http://www.wikidata.org/entity/Q42", "label": "Douglas Adams",
             "description": "English author and humourist"},
            {"id": "Q28421831", "concepturi": "http://www.wikidata.org/entity/Q28421831",
             "label": "Douglas Adams", "description": "Scientific article"},
        ] if params.get("search") == "douglas adams" else []
        body = json.dumps({"search": found}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_api():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeWikibaseApi)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _FakeWikibaseApi.calls = []
    yield f"http://127.0.0.1:{server.server_address[1]}/w/api.php"
    server.shutdown()
    server.server_close()


def test_wikidata_api_search_path(fake_api, tmp_path):
    """The API backend parses hits, fetches P31 types by SPARQL and replays responses from the cache."""
    ttl = tmp_path / "wd.ttl"
    ttl.write_text(
        "@prefix wd: <http://www.wikidata.org/entity/> . @prefix wdt: <http://www.wikidata.org/prop/direct/> .\n"
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        "wd:Q42 wdt:P31 wd:Q5 . wd:Q5 rdfs:label 'human'@en . wd:Q28421831 wdt:P31 wd:Q13442814 .\n",
        encoding="utf-8",
    )
    kg = open_kg(ttl, profile=WIKIDATA, cache=JsonCache(tmp_path / "cache.sqlite"))
    try:
        search = WikidataApiSearch(kg, fake_api)
        hits = search.search("douglas adams", limit=5)
        assert [h.id for h in hits] == ["http://www.wikidata.org/entity/Q42",
                                        "http://www.wikidata.org/entity/Q28421831"]
        assert hits[0].types == ["human"] and hits[0].description == "English author and humourist"
        assert hits[1].types == ["http://www.wikidata.org/entity/Q13442814"]  # no label: the IRI
        assert search.search("douglas adams", types=["human"])[0].id.endswith("Q42")
        calls = len(_FakeWikibaseApi.calls)
        search.search("douglas adams", limit=5)
        assert len(_FakeWikibaseApi.calls) == calls  # replayed from the cache
        assert _FakeWikibaseApi.calls[0]["action"] == "wbsearchentities"
    finally:
        kg.close()


def test_the_api_search_is_one_bounded_exchange(tmp_path):
    """The search reads through :func:`sparqlab.core.http.fetch`, as the model and ``external`` clients do: a
    reply dripping a byte every 0.2 s ends at ``timeout_s`` (a per-read timeout never trips on it)."""
    import time

    from sparqlab.kg import EndpointError
    from support.hostile_http import hostile_server, http_reply

    ttl = tmp_path / "wd.ttl"
    ttl.write_text("<http://www.wikidata.org/entity/Q42> <http://www.w3.org/2000/01/rdf-schema#label> 'x'@en .\n",
                   encoding="utf-8")
    kg = open_kg(ttl, profile=WIKIDATA)
    try:
        reply = http_reply(json.dumps({"search": [], "padding": "x" * 200}).encode())  # ~60 s at 0.2 s a byte
        with hostile_server(reply, drip_from=20, interval_s=0.2) as url:
            start = time.monotonic()
            with pytest.raises(EndpointError, match="no complete reply within 1 s"):
                WikidataApiSearch(kg, f"{url}/w/api.php", timeout_s=1.0).search("anything")
            assert time.monotonic() - start < 8.0  # the first exchange also makes the TLS context
    finally:
        kg.close()
