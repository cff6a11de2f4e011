"""The read-only guard: updates never reach a store, queries with update words in them still run."""

from __future__ import annotations

import re

import pytest

from sparqlab.kg import SparqlSyntaxError, UpdateRefused, check_read_only, open_kg
from sparqlab.kg.profiles import generic_profile
from sparqlab.sparql.screen import scan

UPDATES = [
    "INSERT DATA { <http://example.org/x> <http://example.org/p> 1 }",
    "delete where { ?s ?p ?o }",
    "DeLeTe { ?s ?p ?o } WHERE { ?s ?p ?o }",
    "LOAD <http://example.org/data.ttl>",
    "CLEAR ALL",
    "DROP GRAPH <http://example.org/g>",
    "CREATE GRAPH <http://example.org/g>",
    "ADD DEFAULT TO <http://example.org/g>",
    "MOVE DEFAULT TO <http://example.org/g>",
    "COPY DEFAULT TO <http://example.org/g>",
    "WITH <http://example.org/g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }",
    "PREFIX ex: <http://example.org/>\n# SELECT * WHERE { ?s ?p ?o }\nINSERT DATA { ex:x ex:p 'SELECT' }",
    "BASE <http://example.org/> PREFIX select: <http://example.org/s#> DROP ALL",
    "  # a comment\n  PREFIX : <http://example.org/>  insert data { :a :b :c }",
    "INSERT DATA { <http://example.org/x> <http://example.org/p> ",  # malformed, still an update
]


@pytest.mark.parametrize("update", UPDATES)
def test_updates_are_refused(update):
    with pytest.raises(UpdateRefused) as caught:
        check_read_only(update)
    assert caught.value.kind == "update_refused"
    assert "read-only" in str(caught.value)


@pytest.mark.parametrize(
    ("query", "form"),
    [
        ('SELECT ?s WHERE { ?s ?p "delete" }', "select"),
        ("SELECT ?s WHERE { ?s ?p 'INSERT DATA { <a> <b> <c> }' }", "select"),
        ('SELECT ?s WHERE { ?s ?p """DROP ALL\nCLEAR""" }', "select"),
        ("# DELETE WHERE { ?s ?p ?o }\nASK { ?s ?p ?o }", "ask"),
        ("PREFIX delete: <http://example.org/delete#> SELECT * WHERE { ?s delete:load ?o }", "select"),
        ("SELECT ?insert ?drop WHERE { ?insert <http://example.org/drop#x> ?drop }", "select"),
        ("select * where { <http://example.org/a#INSERT> ?p ?o }", "select"),
        ("CONSTRUCT WHERE { ?s ?p ?o }", "graph"),
        ("DESCRIBE <http://example.org/a>", "graph"),
        ("SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }", "select"),
        ("ASK { SERVICE SILENT <http://127.0.0.1:9/sparql> { ?s ?p ?o } }", "ask"),
    ],
)
def test_queries_pass_and_report_their_form(query, form):
    assert check_read_only(query) == form


@pytest.mark.parametrize(
    "bad",
    ["SELECT * WHERE { ?s ?p ", "SELEC * WHERE { ?s ?p ?o }", "", "# only a comment",
     "SELECT * WHERE { ?s ?p ?o } ; DROP ALL", "SELECT * WHERE { wd:Q42 ?p ?o }"],
)
def test_malformed_queries_are_syntax_errors(bad):
    with pytest.raises(SparqlSyntaxError) as caught:
        check_read_only(bad)
    assert caught.value.kind == "syntax_error"
    assert str(caught.value).startswith("SPARQL syntax error")


def test_syntax_error_names_position_and_line(small_ttl):
    """The parser (in the worker) reports where the error is and quotes the line, with its ranges summarised."""
    with open_kg(small_ttl, cache=False) as kg, pytest.raises(SparqlSyntaxError) as caught:
        kg.query("SELECT ?s\nWHERE { ?s ?p ?o } LIMT 3")
    message = str(caught.value)
    assert "error at 2:" in message
    assert "line 2: WHERE { ?s ?p ?o } LIMT 3" in message
    assert "\\u{" not in message  # the parser's Unicode ranges are summarised


def test_predefined_prefixes_are_accepted():
    query = "SELECT * WHERE { wd:Q42 ?p ?o }"
    assert check_read_only(query, {"wd": "http://www.wikidata.org/entity/"}) == "select"


def test_scan_finds_keyword_prefixes_and_service_outside_strings():
    found = scan('PREFIX a: <http://a/> PREFIX : <http://b/> select * { ?s ?p "SERVICE" SERVICE <http://x> {} }')
    assert found.keyword == "SELECT"
    assert found.declared_prefixes == {"a", ""}
    assert found.mentions_service
    assert not scan("SELECT ?service WHERE { ?service <http://x#SERVICE> 'SERVICE' }").mentions_service


def test_refused_update_leaves_the_store_unchanged(small_ttl):
    kg = open_kg(small_ttl, cache=False)
    try:
        count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
        before = kg.query(count).rows[0]["n"].value
        for update in ["INSERT DATA { <http://example.org/new> <http://example.org/p> 1 }",
                       "DELETE WHERE { ?s ?p ?o }", "CLEAR ALL", "DROP ALL"]:
            with pytest.raises(UpdateRefused):
                kg.query(update)
        assert kg.query(count).rows[0]["n"].value == before
        assert int(before) > 0
        assert kg.query("ASK { <http://example.org/new> ?p ?o }").boolean is False
    finally:
        kg.close()


def test_guard_runs_before_any_endpoint(refused_url):
    """An update to an unreachable endpoint is refused by the guard, not reported as a connection error (the
    profile is given: deriving one would read the endpoint, and an unreachable one stops that with
    EndpointUnavailable, as `sparqlab query --kg URL` shows in test_kg_cli)."""
    kg = open_kg(refused_url, profile=generic_profile("unreachable"), cache=False)
    with pytest.raises(UpdateRefused):
        kg.query("DROP ALL")


@pytest.mark.parametrize(("query", "message"), [
    ("SELECT * WHERE { { ?s ?p ?o }", "unbalanced brackets"),
    ("SELECT * WHERE } ?s ?p ?o {", "unbalanced brackets"),
    ('SELECT * WHERE { ?s ?p "open }', "not closed"),
    ('SELECT * WHERE { ?s ?p """open }', "not closed"),
    ("SELECT * WHERE { ex:a ?p ?o }", "undeclared prefix ex:"),
    ("SELECT * WHERE " + "{" * 65 + "}" * 65, "nested 65 deep"),
    ('SELECT * WHERE { ?s ?p "\udcff" }', "lone UTF-16 surrogate"),
    ("HELLO", "expected SELECT, ASK, CONSTRUCT or DESCRIBE (found 'HELLO')"),
])
def test_screen_refuses_what_no_parser_should_see(query, message):
    with pytest.raises(SparqlSyntaxError, match=re.escape(message)):
        check_read_only(query)


def test_screen_passes_names_strings_and_prefixes_that_look_odd():
    assert check_read_only('PREFIX ex: <http://e/> SELECT * { ex:a.b ?p "x:y { ( [" . ?s ?p "it\\"s" }') == "select"
    assert check_read_only("SELECT * { ?s ?p ?o } # unclosed ' quote and { brace in a comment") == "select"
    assert check_read_only('SELECT * { ?s ?p "1"^^xsd:int }', {"xsd": "http://www.w3.org/2001/XMLSchema#"}) == "select"


def test_a_query_too_long_is_refused_before_any_scan():
    from sparqlab.kg import EndpointError
    from sparqlab.sparql.screen import MAX_QUERY_CHARS

    with pytest.raises(EndpointError, match="more than the limit"):
        check_read_only("SELECT * { ?s ?p ?o } #" + "x" * MAX_QUERY_CHARS)
