"""Label search: exact and misspelt names, types and descriptions, kinds, type filters, other backends."""

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
from sparqlab.kg.search import LabelIndex, similarity

PERSON = "http://sparqlab.org/movies/class/Person"


def test_exact_name(movies_kg):
    top = movies_kg.search("Matthias Schoenaerts")[0]
    assert top.label == "Matthias Schoenaerts" and top.score == 100
    assert top.types == ["Person"] and top.type_ids == [PERSON]
    assert "The Drop" in top.description
    assert top.kind == "entity"


def test_misspelt_name_is_found(movies_kg):
    hits = movies_kg.search("Mathias Schoenarts", limit=5)
    person = [h for h in hits if h.types == ["Person"]]
    assert person[0].label == "Matthias Schoenaerts"
    assert hits.index(person[0]) < 2  # its same-named tag may tie with it
    assert 85 < person[0].score < 100


def test_fragment_of_a_name(movies_kg):
    assert movies_kg.search("Schoenaerts", limit=3)[0].label.casefold() == "matthias schoenaerts"


def test_ambiguous_label_returns_each_entity_with_its_type(movies_kg):
    hits = [h for h in movies_kg.search("Rain", limit=10) if h.label == "Rain"]
    assert {tuple(h.types) for h in hits} == {("Film",), ("Person",)}
    assert len({h.id for h in hits}) == 2


def test_type_filter(movies_kg):
    hits = movies_kg.search("Rain", types=["Person"], limit=5)
    assert hits and all(h.types == ["Person"] for h in hits)
    assert movies_kg.search("Rain", types=[PERSON], limit=5)[0].id == hits[0].id


def test_property_and_class_search(movies_kg):
    prop = movies_kg.search("starred actors", kind="property", limit=3)[0]
    assert prop.id == "http://sparqlab.org/movies/relation/starred_actors"
    assert prop.description
    assert movies_kg.search("film", kind="class", limit=1)[0].id == "http://sparqlab.org/movies/class/Film"
    assert all(h.kind == "entity" for h in movies_kg.search("starred actors", limit=5))


def test_short_and_empty_queries(movies_kg):
    assert movies_kg.search("   ") == []
    hits = movies_kg.search("Up", limit=5)
    assert hits and all(h.label.casefold().startswith("up") for h in hits)


def test_similarity_prefers_whole_names_over_short_labels():
    assert similarity("Mathias Schoenarts", "Matthias Schoenaerts") > similarity("Mathias Schoenarts", "math")
    assert similarity("hanks tom", "Tom Hanks") == 100
    assert similarity("Tom Hanks", "tom  hanks") == 100


def test_generic_kg_index_filters_languages(small_ttl, tmp_path):
    kg = open_kg(small_ttl, cache=False)
    try:
        index = LabelIndex(kg, tmp_path / "index.sqlite")
        alice = index.search("alice")[0]
        assert alice.id == "http://example.org/alice" and alice.types == ["Person"]
        assert alice.description == "a test person who likes to delete things"
        assert all(h.label != "Alicia" for h in index.search("Alicia"))  # only "" and "en" labels
        assert index.search("knows", kind="property")[0].id == "http://example.org/knows"
        assert index.search("age", kind="property")[0].id == "http://example.org/age"  # used as a predicate
        assert index.search("Person", kind="class")[0].id == "http://example.org/Person"
        assert len(index) == 6
    finally:
        kg.close()


GERMAN_TTL = """\
@prefix ex: <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:castle a ex:Building ; rdfs:label "Schloss Neuschwanstein"@de ; rdfs:comment "Burg in Bayern"@de .
ex:alps rdfs:label "Alpen"@de , "Alps"@en ; rdfs:comment "a mountain range"@en .
ex:Building rdfs:label "building"@en .
"""


def test_labels_in_other_languages_are_found_and_english_is_shown(tmp_path, capsys):
    from sparqlab.cli import main

    ttl = tmp_path / "german.ttl"
    ttl.write_text(GERMAN_TTL, encoding="utf-8")
    kg = open_kg(ttl, cache=False)
    try:
        index = LabelIndex(kg, tmp_path / "index.sqlite")
        castle = index.search("Neuschwanstein")[0]
        assert (castle.id, castle.label, castle.types) == ("http://example.org/castle", "Schloss Neuschwanstein",
                                                           ["building"])
        alps = index.search("Alpen")[0]
        assert (alps.id, alps.label, alps.matched, alps.description) == (
            "http://example.org/alps", "Alps", "Alpen", "a mountain range")
    finally:
        kg.close()
    assert main(["kg", "search", "Schloss Neuschwanstein", "--kg", str(ttl)]) == 0
    assert "Schloss Neuschwanstein  [building]" in capsys.readouterr().out


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


def test_failed_index_build_leaves_nothing_behind(small_ttl, tmp_path, monkeypatch):
    from sparqlab.kg import search

    def interrupted(path, rows):
        raise KeyboardInterrupt

    monkeypatch.setattr(search, "_write_index", interrupted)
    with open_kg(small_ttl, cache=False) as kg, pytest.raises(KeyboardInterrupt):
        search.build_index(kg, tmp_path / "index.sqlite")
    assert list(tmp_path.iterdir()) == []


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
