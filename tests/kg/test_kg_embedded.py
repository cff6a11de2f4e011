"""The embedded pyoxigraph backend: typed results, row cap, hard timeout, RDF files as temporary stores."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparqlab.kg import EmbeddedKG, EndpointError, QueryTimeout, SparqlSyntaxError, Term, open_kg
from sparqlab.kg.profiles import generic_profile

EX = "http://example.org/"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"


@pytest.fixture(scope="module")
def small_kg(small_ttl):
    kg = open_kg(small_ttl, cache=False)
    yield kg
    kg.close()


def test_select_returns_typed_terms(small_kg):
    result = small_kg.query(f"SELECT ?who ?label ?age WHERE {{ <{EX}alice> <{EX}knows> ?who . "
                            "?who rdfs:label ?label . OPTIONAL { ?who <http://example.org/age> ?age } }")
    assert result.kind == "select"
    assert result.vars == ["who", "label", "age"]
    assert result.rows == [{
        "who": Term("uri", EX + "bob"),
        "label": Term("literal", "Bob"),
        "age": Term("literal", "37", "http://www.w3.org/2001/XMLSchema#integer"),
    }]
    assert not result.truncated and not result.cached


def test_language_tags_and_unbound_cells(small_kg):
    result = small_kg.query(f"SELECT ?l ?missing WHERE {{ <{EX}alice> rdfs:label ?l FILTER(LANG(?l) = 'es') "
                            f"OPTIONAL {{ <{EX}alice> <{EX}nothing> ?missing }} }}")
    assert result.rows == [{"l": Term("literal", "Alicia", lang="es")}]
    assert result.column("missing") == []


def test_ask(small_kg):
    assert small_kg.query(f"ASK {{ <{EX}bob> <{EX}knows> <{EX}carol> }}").boolean is True
    negative = small_kg.query(f"ASK {{ <{EX}carol> <{EX}knows> ?x }}")
    assert negative.kind == "ask" and negative.boolean is False and not negative.is_empty


def test_construct_and_describe_give_triples(small_kg):
    graph = small_kg.query(f"CONSTRUCT {{ ?b <{EX}knownBy> ?a }} WHERE {{ ?a <{EX}knows> ?b }}")
    assert graph.kind == "graph"
    assert graph.vars == ["subject", "predicate", "object"]
    assert {(r["subject"].value, r["object"].value) for r in graph.rows} == {(EX + "bob", EX + "alice"),
                                                                              (EX + "carol", EX + "bob")}
    described = small_kg.query(f"DESCRIBE <{EX}carol>")
    assert {r["predicate"].value for r in described.rows} == {RDF_TYPE, RDFS_LABEL, EX + "age"}


def test_row_cap_sets_truncated(small_kg, small_triples):
    everything = small_kg.query("SELECT * WHERE { ?s ?p ?o }")
    assert len(everything.rows) == small_triples and not everything.truncated
    capped = small_kg.query("SELECT * WHERE { ?s ?p ?o }", max_rows=5)
    assert len(capped.rows) == 5 and capped.truncated
    exact = small_kg.query("SELECT * WHERE { ?s ?p ?o }", max_rows=small_triples)
    assert len(exact.rows) == small_triples and not exact.truncated
    assert small_kg.query("CONSTRUCT WHERE { ?s ?p ?o }", max_rows=3).truncated


def test_profile_prefixes_are_predefined(small_kg):
    result = small_kg.query("SELECT ?c WHERE { ?c rdf:type rdfs:Class }")
    assert result.column("c") == [Term("uri", EX + "Person")]


def test_evaluation_errors_are_typed(small_kg):
    with pytest.raises(SparqlSyntaxError):
        small_kg.query("SELECT * WHERE { ?s ?p }")
    with pytest.raises(EndpointError, match="SERVICE"):
        small_kg.query("SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }")


def test_timeout_stops_a_runaway_query_and_the_kg_recovers(movies_kg):
    """The three-way cross product would run for hours: a QueryTimeout at all means the worker was stopped."""
    runaway = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
    with pytest.raises(QueryTimeout, match="longer than 1 s"):
        movies_kg.query(runaway, timeout_s=1)
    assert movies_kg.query('ASK { ?f rdfs:label "Wind" }').boolean is True


def test_memory_cap_kills_only_the_worker(movies_kg):
    capped = EmbeddedKG(movies_kg.store_path, movies_kg.profile, memory_limit_gb=1.0, workers=1)
    try:
        sort_everything = "SELECT * WHERE { ?a ?b ?c . ?d a ?f } ORDER BY ?a ?d"
        with pytest.raises(EndpointError, match="memory limit"):
            capped.query(sort_everything, timeout_s=120)
        assert capped.query('ASK { ?f rdfs:label "Wind" }').boolean is True
    finally:
        capped.close()


def test_threads_share_the_worker_pool(small_kg):
    from concurrent.futures import ThreadPoolExecutor

    queries = [f"SELECT ?o WHERE {{ <{EX}{name}> <{EX}age> ?o }}" for name in ("alice", "bob", "carol")] * 10
    with ThreadPoolExecutor(8) as pool:
        ages = list(pool.map(lambda q: small_kg.query(q).rows[0]["o"].value, queries))
    assert ages == ["42", "37", "29"] * 10


def test_rdf_file_store_lives_in_the_cache_and_is_content_addressed(small_ttl, tmp_path):
    import tempfile

    from sparqlab.core.paths import cache_dir

    before = set(Path(tempfile.gettempdir()).glob("sparqlab-kg-*"))
    copy = tmp_path / "copy.ttl"
    copy.write_bytes(small_ttl.read_bytes())
    with open_kg(small_ttl, cache=False) as first, open_kg(copy, cache=False) as second:
        assert first.identity == second.identity and first.identity.startswith("file:")
        assert first.store_path.is_relative_to(cache_dir() / "kg")
        with open_kg(small_ttl, cache=False) as again:
            assert again.store_path == first.store_path  # built once, reused while the file is unchanged
    copy.write_text(copy.read_text(encoding="utf-8") + "\n<http://x/y> <http://x/z> 1 .\n", encoding="utf-8")
    with open_kg(copy, cache=False) as edited:
        assert edited.identity != first.identity and edited.store_path != second.store_path
    assert set(Path(tempfile.gettempdir()).glob("sparqlab-kg-*")) == before


def test_bad_inputs_are_clear(tmp_path):
    broken = tmp_path / "broken.ttl"
    broken.write_text("<http://a> <http://b> .", encoding="utf-8")
    with pytest.raises(ValueError, match="cannot load"):
        open_kg(broken)
    with pytest.raises(ValueError, match="unknown KG"):
        open_kg(str(tmp_path / "missing.ttl"))
    with pytest.raises(FileNotFoundError):
        EmbeddedKG(tmp_path / "nothing", generic_profile("x"))


def test_store_directory_opens_directly(small_store, small_triples):
    kg = open_kg(small_store, cache=False)
    try:
        assert isinstance(kg, EmbeddedKG)
        assert len(kg.query("SELECT * WHERE { ?s ?p ?o }").rows) == small_triples
    finally:
        kg.close()
