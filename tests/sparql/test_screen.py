"""The read-only screen (:mod:`sparqlab.sparql.screen`), asked through the KG layer's yes/no
(:func:`sparqlab.kg.check_read_only`, which every store and endpoint asks): updates are refused in every spelling,
queries with update words in them pass, and what no parser should see is refused before any parse. What the
stores do with a refusal is tests/kg/test_kg_guard.py."""

from __future__ import annotations

import re
import tracemalloc

import pytest

from sparqlab.kg import SparqlSyntaxError, UpdateRefused, check_read_only
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


def test_predefined_prefixes_are_accepted():
    query = "SELECT * WHERE { wd:Q42 ?p ?o }"
    assert check_read_only(query, {"wd": "http://www.wikidata.org/entity/"}) == "select"


def test_scan_finds_keyword_prefixes_and_service_outside_strings():
    found = scan('PREFIX a: <http://a/> PREFIX : <http://b/> select * { ?s ?p "SERVICE" SERVICE <http://x> {} }')
    assert found.keyword == "SELECT"
    assert found.declared_prefixes == {"a", ""}
    assert found.mentions_service
    assert not scan("SELECT ?service WHERE { ?service <http://x#SERVICE> 'SERVICE' }").mentions_service


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


def test_tokenizer_memory_is_linear_and_small():
    """The old tokenizer held ~240 bytes per byte of a string literal (5 MB -> 1.2 GB)."""
    size = 2_000_000
    query = 'SELECT * WHERE { ?s ?p "' + "a" * size + '" } # ' + "'" * 1000 + '\n"""' + "b" * size
    tracemalloc.start()
    try:
        found = scan(query)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found.keyword == "SELECT"
    assert peak < 3 * size
