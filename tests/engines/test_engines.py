"""Engines as people meet them: the engine named from the ``Server`` header and recorded, endpoint URLs with their
own parameters, a named graph as a KG option, the query cache keyed by the profile's prefixes, an engine's row cap
reported as truncation, dialect errors typed alike on every engine and relative IRIs on the embedded store."""

from __future__ import annotations

import dataclasses

import pytest

from sparqlab.core.cache import JsonCache
from sparqlab.engines import engine_from_server, serve_on
from sparqlab.graphs.profiles import MOVIES
from sparqlab.kg import EndpointError, EndpointKG, UnsupportedFunction, open_kg
from sparqlab.kg.endpoint import split_endpoint_url
from sparqlab.kg.profiles import generic_profile
from support.engines import require_engine

EX = "http://example.org/"


@pytest.mark.parametrize(("header", "name", "version"), [
    ("Virtuoso/07.20.3229 (Linux) x86_64-pc-linux-gnu  ", "virtuoso", "07.20.3229"),
    ("Oxigraph/0.5.13", "oxigraph-server", "0.5.13"),
    ("QLever", "qlever", None),
    (None, "unknown", None),
])
def test_engine_from_the_server_header(header, name, version):
    engine = engine_from_server(header)
    assert (engine.name, engine.version) == (name, version)


def test_endpoint_url_parameters_are_sent_with_every_query():
    assert split_endpoint_url("https://h/sparql?default-graph-uri=urn%3Ax&key=K") == (
        "https://h/sparql", [("default-graph-uri", "urn:x"), ("key", "K")])
    with pytest.raises(ValueError, match="carries a query itself"):
        split_endpoint_url("https://h/sparql?query=ASK%7B%7D")


def test_each_engine_names_itself_and_answers_alike(movie_endpoint, endpoint_engine, movies_kg):
    kg = open_kg(movie_endpoint, profile="movies", cache=False)
    assert kg.engine().name == endpoint_engine and kg.engine().version
    described = kg.describe()
    assert described["engine_name"] == endpoint_engine and described["endpoint"] == movie_endpoint
    query = 'SELECT ?f WHERE { ?f mrel:directed_by ?d . ?d rdfs:label "Carroll Ballard" }'
    assert sorted(map(str, kg.query(query).rows)) == sorted(map(str, movies_kg.query(query).rows))


def test_a_relative_iri_matches_nothing_on_every_engine(movie_endpoint, movies_kg):
    query = "SELECT ?s WHERE { ?s ?p <15> }"
    assert movies_kg.query(query).rows == []
    assert EndpointKG(movie_endpoint, MOVIES).query(query).rows == []


def test_a_missing_cast_is_the_same_error_on_the_oxigraph_server(movie_server):
    query = 'SELECT (xsd:int("7") AS ?n) WHERE {}'
    with pytest.raises(UnsupportedFunction, match="rewrite-casts"):
        EndpointKG(movie_server, MOVIES).query(query)


def test_url_parameters_reach_the_server(small_server):
    everything = open_kg(small_server, cache=False).query("SELECT ?s WHERE { ?s ?p ?o }")
    assert everything.rows
    elsewhere = open_kg(small_server + "?default-graph-uri=urn%3Anothing", cache=False)
    assert elsewhere.identity == f"endpoint:{small_server}?default-graph-uri=urn%3Anothing"
    assert elsewhere.query("SELECT ?s WHERE { ?s ?p ?o }").rows == []


def test_the_query_cache_tells_profiles_apart(small_server, tmp_path):
    """The same text under two profiles is two queries: ``ex:`` names another namespace in each."""
    cache = JsonCache(tmp_path / "queries.sqlite")
    query = "SELECT ?s WHERE { ?s ?p ex:bob }"

    def profile(namespace: str):
        base = generic_profile("small")
        return dataclasses.replace(base, prefixes={**base.prefixes, "ex": namespace})

    ours = EndpointKG(small_server, profile(EX), cache=cache).query(query)
    other = EndpointKG(small_server, profile("http://other.org/"), cache=cache).query(query)
    assert [str(row["s"]) for row in ours.rows] == [EX + "alice"]
    assert other.rows == [] and not other.cached


@pytest.fixture(scope="module")
def virtuoso_two_kgs(small_ttl, tmp_path_factory):
    """One Virtuoso holding two KGs in two named graphs — the small test KG and 150 numbered things — that cuts
    every result at 100 rows (``ResultSetMaxRows``)."""
    require_engine("virtuoso")
    from sparqlab.engines.virtuoso import serve_virtuoso

    things = tmp_path_factory.mktemp("things") / "things.nt"
    things.write_text("".join(f"<{EX}thing{i}> <{EX}number> \"{i}\" .\n" for i in range(150)), encoding="utf-8")
    with serve_virtuoso({"urn:small": [small_ttl], "urn:things": [things]}, max_rows=100) as url:
        yield url


def test_a_named_graph_is_an_option_and_part_of_the_identity(virtuoso_two_kgs):
    small = open_kg(virtuoso_two_kgs, graph="urn:small", cache=False)
    things = open_kg(virtuoso_two_kgs, graph="urn:things", cache=False)
    query = f"SELECT ?s WHERE {{ ?s <{EX}knows> ?o }}"
    assert {str(row["s"]) for row in small.query(query).rows} == {EX + "alice", EX + "bob"}
    assert things.query(query).rows == []
    assert small.identity != things.identity and "graph=urn:small" in small.identity
    assert small.describe()["graph"] == "urn:small"


def test_the_engines_row_cap_is_reported_as_truncation(virtuoso_two_kgs):
    things = open_kg(virtuoso_two_kgs + "?default-graph-uri=urn:things", cache=False)
    cut = things.query("SELECT ?s WHERE { ?s ?p ?o }")
    assert len(cut.rows) == 100 and cut.truncated
    whole = things.query("SELECT ?s WHERE { ?s ?p ?o } LIMIT 60")
    assert len(whole.rows) == 60 and not whole.truncated


def test_a_graph_option_on_an_embedded_store_is_refused(small_store):
    with pytest.raises(ValueError, match="named graph of a SPARQL endpoint"):
        open_kg(small_store, graph="urn:x", cache=False)


def test_serve_on_refuses_an_unknown_engine(small_store):
    with pytest.raises(ValueError, match="engine must be"), serve_on("fuseki", small_store):
        pass


@pytest.mark.slow
def test_kg_serve_starts_each_engine_and_stops_it(endpoint_engine, small_ttl, tmp_path):
    """``sparqlab kg serve FILE --engine E`` prints a URL that answers as the file does, and its server stops with
    the command (SIGTERM)."""
    import os
    import signal
    import subprocess
    import sys

    engine = {"oxigraph-server": "oxigraph", "virtuoso": "virtuoso"}[endpoint_engine]
    env = {**os.environ, "SPARQLAB_CACHE": str(tmp_path / "cache")}
    command = subprocess.Popen([sys.executable, "-m", "sparqlab", "kg", "serve", str(small_ttl), "--engine", engine],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        url = command.stdout.readline().strip()
        kg = open_kg(url, cache=False)
        assert kg.engine().name == endpoint_engine
        assert len(kg.query(f"SELECT ?s WHERE {{ ?s <{EX}age> ?age }}").rows) == 3
        command.send_signal(signal.SIGTERM)
        assert command.wait(timeout=30) == 0
        with pytest.raises(Exception, match="cannot reach|refused|failed"):
            open_kg(url, cache=False, retry={"max_connection_attempts": 1}).query("ASK {}")
    finally:
        if command.poll() is None:
            command.kill()


def test_virtuosos_missing_functions_and_integer_division(virtuoso_two_kgs):
    """What Virtuoso does otherwise: BNODE() is a missing function (typed as on oxigraph), 7/2 is 3."""
    kg = open_kg(virtuoso_two_kgs, graph="urn:small", cache=False)
    with pytest.raises(UnsupportedFunction, match="not implemented"):
        kg.query("SELECT (BNODE() AS ?b) WHERE {}")
    assert kg.query("SELECT (7/2 AS ?x) WHERE {}").rows[0]["x"].value == "3"
    assert kg.query(f"ASK {{ <{EX}alice> <{EX}knows> <{EX}bob> }}").boolean is True


def test_two_engines_are_two_runs():
    from sparqlab.engines import Engine
    from sparqlab.runs.config import RunConfig, identity, make_run_id

    config = RunConfig(dataset="metaqa-1hop", kg="movies", kg_url="http://127.0.0.1:8890/sparql", model="m")
    ids = {engine: make_run_id(config, identity(config, {"method": "direct"}, "q", "endpoint:x", "p", None,
                                                kg_engine=Engine(*engine)))
           for engine in (("virtuoso", "07.20"), ("oxigraph-server", "0.5.13"), ("unknown", None))}
    assert len(set(ids.values())) == 3
    assert make_run_id(config, identity(config, {"method": "direct"}, "q", "endpoint:x", "p", None)) == \
        ids[("unknown", None)]  # no engine known: the id it always had


def test_a_full_read_cut_by_the_engine_is_an_error_naming_the_cap(virtuoso_two_kgs):
    things = open_kg(virtuoso_two_kgs, graph="urn:things", cache=False)
    with pytest.raises(EndpointError, match="engine's own row cap"):
        things.bulk_values("SELECT ?s WHERE { ?s ?p ?o }")
    assert len(open_kg(virtuoso_two_kgs, graph="urn:small", cache=False).bulk_values(
        "SELECT ?s WHERE { ?s ?p ?o }")) > 10


@pytest.mark.slow
def test_a_loaded_database_is_kept_and_the_next_start_reuses_it(small_ttl, tmp_path, monkeypatch):
    require_engine("virtuoso")
    from sparqlab.engines.virtuoso import database_key, serve_virtuoso, virtuoso_binaries

    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    graphs = {"urn:small": [small_ttl]}
    kept = tmp_path / "cache" / "virtuoso" / database_key(graphs, virtuoso_binaries()[0]) / "virtuoso.db"
    counts, kept_at = [], []
    for _ in range(2):
        with serve_virtuoso(graphs) as url:
            counts.append(len(open_kg(url, graph="urn:small", cache=False).query("SELECT * WHERE { ?s ?p ?o }").rows))
            kept_at.append(kept.stat().st_mtime_ns)
    assert counts[0] == counts[1] > 0
    assert kept_at[0] == kept_at[1]  # the second start loaded nothing: it copied the kept database
