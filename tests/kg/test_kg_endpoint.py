"""The endpoint backend against real servers on 127.0.0.1: ``oxigraph serve-read-only`` and, where the answers
must not depend on the engine, Virtuoso too (``endpoint_engine``)."""

from __future__ import annotations

import pytest

from sparqlab.graphs.profiles import MOVIES
from sparqlab.kg import (
    EndpointError,
    EndpointKG,
    EndpointUnavailable,
    KGError,
    QueryOptions,
    QueryTimeout,
    SparqlSyntaxError,
    UpdateRefused,
    open_kg,
)
from sparqlab.kg.profiles import generic_profile
from sparqlab.kg.service import RetryPolicy

EX = "http://example.org/"

GGC_DRAMA = """PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
SELECT DISTINCT ?label ?uri WHERE {
  ?uri ?rel1 ?e1 ; ?rel2 ?e2 ; rdfs:label ?label .
  ?rel1 rdfs:label "starred_actors" . ?e1 rdfs:label "Matthias Schoenaerts" .
  ?rel2 rdfs:label "has_tags" . ?e2 rdfs:label "drama" .
}"""

SAME_ON_BOTH = [
    GGC_DRAMA,
    'SELECT ?p ?o WHERE { ?f rdfs:label "Wind" ; a mclass:Film ; ?p ?o } ORDER BY ?p ?o',
    "SELECT ?rel ?range WHERE { ?rel rdfs:range ?range } ORDER BY ?rel",
    'SELECT (COUNT(?f) AS ?n) WHERE { ?f mrel:directed_by ?d . ?d rdfs:label "Carroll Ballard" }',
    'ASK { ?e rdfs:label "Matthias Schoenaerts" }',
    'ASK { ?e rdfs:label "Nobody At All" }',
]


@pytest.fixture(scope="module")
def movies_endpoint(movie_server):
    return EndpointKG(movie_server, MOVIES)


@pytest.mark.parametrize("query", SAME_ON_BOTH)
def test_endpoint_and_embedded_agree(query, movie_endpoint, movies_kg):
    remote, local = EndpointKG(movie_endpoint, MOVIES).query(query), movies_kg.query(query)
    assert remote.kind == local.kind
    assert remote.vars == local.vars
    assert sorted(map(str, remote.rows)) == sorted(map(str, local.rows))
    assert remote.boolean == local.boolean


def test_ggc_example_answers(movies_endpoint):
    labels = {term.value for term in movies_endpoint.query(GGC_DRAMA).column("label")}
    assert "Bullhead" in labels


def test_construct_over_http(movie_endpoint, movies_kg):
    query = "CONSTRUCT WHERE { ?f rdfs:label 'Wind' ; mrel:starred_actors ?a }"
    remote = EndpointKG(movie_endpoint, MOVIES).query(query)
    assert remote.kind == "graph" and len(remote.rows) >= 3
    assert sorted(map(str, remote.rows)) == sorted(map(str, movies_kg.query(query).rows))


def test_row_cap_over_http(small_server, small_triples):
    kg = EndpointKG(small_server, generic_profile("small"))
    assert len(kg.query("SELECT * WHERE { ?s ?p ?o }").rows) == small_triples
    capped = kg.query("SELECT * WHERE { ?s ?p ?o }", max_rows=4)
    assert len(capped.rows) == 4 and capped.truncated


def test_open_kg_with_a_url_uses_the_generic_profile(small_server):
    kg = open_kg(small_server, cache=False)
    assert isinstance(kg, EndpointKG) and kg.identity == f"endpoint:{small_server}"
    labels = kg.query(f"SELECT ?l WHERE {{ <{EX}bob> rdfs:label ?l }}").column("l")
    assert [t.value for t in labels] == ["Bob"]


def test_long_queries_are_posted(small_server):
    kg = EndpointKG(small_server, generic_profile("small"))
    values = " ".join(f"<{EX}none{i}>" for i in range(300)) + f" <{EX}carol>"
    result = kg.query(f"SELECT ?s WHERE {{ VALUES ?s {{ {values} }} ?s rdfs:label ?l }}")
    assert [t.value for t in result.column("s")] == [EX + "carol"]


def test_refused_connection_stops_after_a_few_tries(refused_url):
    """No answer at all is no result of the query: retried briefly, then the fatal error a run stops on."""
    waits = []
    kg = EndpointKG(refused_url, generic_profile("nothing"),
                    options=QueryOptions(retry=RetryPolicy(max_connection_attempts=3, base_s=0.01)))
    kg.service.sleep = waits.append
    with pytest.raises(EndpointUnavailable, match="cannot reach the SPARQL endpoint") as caught:
        kg.query("ASK {}")
    assert not isinstance(caught.value, KGError) and len(waits) == 2
    assert kg.service.stats()["connection_failures"] == 3 and kg.service.stats()["retries"] == 2


def test_wrong_path_is_an_endpoint_error(small_server):
    kg = EndpointKG(small_server.replace("/query", "/no-such-service"), generic_profile("small"))
    with pytest.raises(EndpointError):
        kg.query("ASK {}")


def test_server_parse_error_is_a_syntax_error(small_server):
    """The guard rejects bad queries first; calling the backend directly shows the server's 400 is mapped too."""
    kg = EndpointKG(small_server, generic_profile("small"))
    with pytest.raises(SparqlSyntaxError, match="rejected"):
        kg._execute("SELECT * WHERE { ?s ?p ", 10, 10)


def test_updates_never_reach_the_server(small_server, small_triples):
    kg = EndpointKG(small_server, generic_profile("small"))
    with pytest.raises(UpdateRefused):
        kg.query(f"INSERT DATA {{ <{EX}x> <{EX}p> 1 }}")
    assert len(kg.query("SELECT * WHERE { ?s ?p ?o }").rows) == small_triples


RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f }"


def test_client_timeout(movies_endpoint):
    """The server would stop the query only after 3 s (and say so); the client's own 0.5 s timeout fires first."""
    with pytest.raises(QueryTimeout, match="within 0.5 s"):
        movies_endpoint.query(RUNAWAY, timeout_s=0.5)


def test_server_time_limit_is_a_timeout(movies_endpoint):
    """The fixture's server stops queries after 3 s; the cut-off answer is reported as a timeout."""
    with pytest.raises(QueryTimeout):
        movies_endpoint.query(RUNAWAY, timeout_s=60)


def test_bulk_values_read_everything_or_refuse(small_server, small_ttl, small_triples, monkeypatch):
    """Index and question-set builders read whole KGs: in-process on a store, through HTTP otherwise, never cut."""
    from sparqlab.kg import base

    everything = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"
    remote = EndpointKG(small_server, generic_profile("small"))
    with open_kg(small_ttl, cache=False) as local:
        assert sorted(map(str, local.bulk_values(everything))) == sorted(map(str, remote.bulk_values(everything)))
    assert len(remote.bulk_values(everything)) == small_triples
    assert all(isinstance(value, str) for row in remote.bulk_values(everything) for value in row.values())
    monkeypatch.setattr(base, "BULK_MAX_ROWS", small_triples - 1)
    with pytest.raises(EndpointError, match="too large"):
        remote.bulk_values(everything)
