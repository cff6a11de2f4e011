"""Hostile queries against the embedded store: SERVICE in every spelling, parser-crashing nesting, guard DoS.
Each test is the attack; the assertions are what must not happen. The screen's and the parser's own answers to
such queries (the SERVICE decision, the scanner's memory) are in tests/sparql."""

from __future__ import annotations

import pytest

from sparqlab.kg import EndpointError, KGError, QueryTimeout, SparqlSyntaxError, check_read_only
from sparqlab.sparql.screen import MAX_NESTING

SERVICE_SPELLINGS = [
    "ASK {{ {{}} .SERVICE <{url}> {{?a ?b ?c}} }}",  # the reported bypass: '.' glued to the keyword
    "SELECT * WHERE {{ SERVICE <{url}> {{ ?a ?b ?c }} }}",
    "select * where {{ service silent <{url}> {{ ?a ?b ?c }} }}",
    "SELECT * WHERE {{ SeRvIcE <{url}> {{ ?a ?b ?c }} }}",
    "SELECT * WHERE {{ ?s ?p ?o }}SERVICE<{url}>{{?a ?b ?c}}",  # no spaces at all (outside the group)
    "SELECT * WHERE {{ ?s ?p ?o .SERVICE<{url}>{{?a ?b ?c}} }}",
    "SELECT * WHERE {{ #SERVICE in a comment\nSERVICE <{url}> {{ ?a ?b ?c }} }}",
    "SELECT * WHERE {{ SERV\\u0049CE <{url}> {{ ?a ?b ?c }} }}",  # SPARQL code-point escape
    "PREFIX remote: <{url}#>\nSELECT * WHERE {{ SERVICE remote: {{ ?a ?b ?c }} }}",
    "SELECT * WHERE {{ VALUES ?svc {{ <{url}> }} SERVICE ?svc {{ ?a ?b ?c }} }}",  # endpoint from a variable
    "SELECT * WHERE {{ BIND(<{url}> AS ?svc) SERVICE ?svc {{ ?a ?b ?c }} }}",
    "SELECT * WHERE {{ ?s ?p ?o FILTER EXISTS {{ SERVICE <{url}> {{ ?a ?b ?c }} }} }}",
    "SELECT * WHERE {{ ?s ?p ?o FILTER NOT EXISTS {{ SERVICE <{url}> {{ ?a ?b ?c }} }} }}",
    "SELECT * WHERE {{ ?s ?p ?o OPTIONAL {{ SERVICE <{url}> {{ ?a ?b ?c }} }} }}",
    "SELECT * WHERE {{ ?s ?p ?o MINUS {{ SERVICE <{url}> {{ ?s ?b ?c }} }} }}",
    "SELECT * WHERE {{ {{ ?s ?p ?o }} UNION {{ SERVICE <{url}> {{ ?a ?b ?c }} }} }}",
    "SELECT * WHERE {{ {{ SELECT * WHERE {{ SERVICE <{url}> {{ ?a ?b ?c }} }} }} }}",
    "SELECT (COUNT(*) AS ?n) WHERE {{ SERVICE <{url}> {{ ?a ?b ?c }} }}",
    "ASK {{ GRAPH ?g {{ SERVICE <{url}> {{ ?a ?b ?c }} }} }}",
    "CONSTRUCT {{ ?a ?b ?c }} WHERE {{ SERVICE <{url}> {{ ?a ?b ?c }} }}",
    "DESCRIBE ?a WHERE {{ SERVICE <{url}> {{ ?a ?b ?c }} }}",
]


@pytest.mark.parametrize("template", SERVICE_SPELLINGS)
def test_service_never_leaves_the_embedded_store(small_kg, listener, template):
    query = template.format(url=listener.url)
    with pytest.raises(KGError) as caught:
        small_kg.query(query, timeout_s=10)
    assert isinstance(caught.value, EndpointError | SparqlSyntaxError)
    assert listener.connections == 0


def test_queries_naming_service_in_data_still_run(small_kg, listener):
    result = small_kg.query("SELECT ?service WHERE { ?service a <http://example.org/Person> "
                            "FILTER(?service != <http://example.org/SERVICE>) }")
    assert len(result.rows) == 2
    assert listener.connections == 0


@pytest.mark.parametrize(("opener", "closer"), [("{", "}"), ("(", ")"), ("[", "]")])
def test_deep_nesting_is_a_syntax_error_not_a_crash(small_kg, opener, closer):
    """3,000 nested braces crashed pyoxigraph's parser with SIGSEGV in the caller; now the screen refuses them
    before any parser sees them, and the KG keeps working."""
    if opener == "{":
        query = "SELECT * WHERE " + "{" * 3000 + "}" * 3000
    elif opener == "(":
        query = "SELECT * WHERE { FILTER(" + "(" * 3000 + "1" + ")" * 3000 + ") }"
    else:
        query = "SELECT * WHERE { ?s ?p " + "[ ?p " * 3000 + "1" + " ]" * 3000 + " }"
    with pytest.raises(SparqlSyntaxError, match="nested 30"):
        check_read_only(query)
    with pytest.raises(SparqlSyntaxError, match=f"limit of {MAX_NESTING}"):
        small_kg.query(query)
    assert small_kg.query("ASK { ?s ?p ?o }").boolean is True


def test_nesting_at_the_limit_still_runs(small_kg):
    query = "SELECT * WHERE " + "{" * (MAX_NESTING - 1) + " ?s ?p ?o " + "}" * (MAX_NESTING - 1)
    assert len(small_kg.query(query).rows) == 5


@pytest.mark.parametrize("chain", [" UNION ".join(["{}"] * 30_000), "?a " + "/".join(["<http://e.org/k>"] * 30_000) + " ?c"])
def test_a_parser_crash_kills_only_the_worker(small_ttl, chain):
    """Flat chains of 30,000 operators have no nesting to bound and still overflow pyoxigraph's stack: the crash
    happens in the worker, the caller gets a typed error and the next query gets a fresh worker."""
    with _small(small_ttl) as kg:
        with pytest.raises(EndpointError, match="crashed"):
            kg.query(f"SELECT * WHERE {{ {chain} }}", timeout_s=60)
        assert kg.query("ASK { ?s ?p ?o }").boolean is True


def test_a_slow_parse_is_bounded_by_the_timeout(small_kg):
    """A long chain that also names SERVICE makes rdflib's parser (which decides SERVICE) slow: the worker's
    timeout bounds it, and the answer is a refusal either way."""
    chain = " || ".join(["?service"] * 30_000)
    with pytest.raises(KGError):
        small_kg.query(f"SELECT * WHERE {{ ?service ?p ?o FILTER({chain}) }}", timeout_s=1)
    assert small_kg.query("ASK { ?s ?p ?o }").boolean is True


def _small(small_ttl):
    from sparqlab.kg import open_kg

    return open_kg(small_ttl, cache=False, workers=1)


def test_guard_work_is_bounded_by_the_query_timeout(small_kg):
    """A COUNT over three 600-value VALUES blocks (216 million rows) took 27 s in the caller's guard against a 2 s
    timeout. The screen does no evaluation, so the whole cost is the worker's, and the timeout stops it."""
    values = " ".join(str(i) for i in range(600))
    query = ("SELECT (COUNT(*) AS ?n) WHERE { " + " ".join(f"VALUES ?{v} {{ {values} }}" for v in "xyz") + " }")
    assert check_read_only(query) == "select"
    with pytest.raises(QueryTimeout):
        small_kg.query(query, timeout_s=1)
    assert small_kg.query("ASK { ?s ?p ?o }").boolean is True


def test_sorting_a_huge_values_block_is_bounded_by_the_worker_memory_cap(small_ttl, capfd):
    """ORDER BY over a VALUES product took 1.2 GB in the caller; now it takes it from a capped worker, and Rust's
    "memory allocation of N bytes failed" stays off this process's stderr."""
    from sparqlab.kg import open_kg

    values = " ".join(f'"{i:0100d}"' for i in range(2000))
    query = ("SELECT * WHERE { " + f"VALUES ?x {{ {values} }} VALUES ?y {{ {values} }}" + " } ORDER BY ?x ?y")
    with open_kg(small_ttl, cache=False, workers=1, memory_limit_gb=0.5) as kg:
        with pytest.raises(EndpointError, match="memory limit"):
            kg.query(query, timeout_s=120)
        assert kg.query("ASK { ?s ?p ?o }").boolean is True
    assert "memory allocation" not in capfd.readouterr().err
