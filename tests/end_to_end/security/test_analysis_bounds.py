"""Model-written queries are analysed in-process (error subtypes, complexity columns): rdflib's parser only ever
sees queries within the guard's bounds, so a hostile query cannot hang or recurse the run's scoring."""

import pytest

from sparqlab.eval.algebra import MAX_ANALYSED_CHARS, parse_algebra
from sparqlab.eval.complexity import query_complexity
from sparqlab.eval.errors import query_shape
from sparqlab.kg.guard import MAX_NESTING

HOSTILE = {
    "too long": "SELECT * WHERE { " + "?s ?p ?o . " * (MAX_ANALYSED_CHARS // 10) + "}",
    "nested too deep": "SELECT * WHERE " + "{ " * (MAX_NESTING + 5) + "?s ?p ?o" + " }" * (MAX_NESTING + 5),
    "unbalanced": "SELECT * WHERE { { ?s ?p ?o }",
    "unclosed string": 'SELECT * WHERE { ?s ?p "open }',
}


@pytest.fixture
def parser_calls(monkeypatch):
    """The queries handed to rdflib's parser during the test (its errors are swallowed as "does not parse", so
    the calls are counted rather than refused)."""
    import rdflib.plugins.sparql.parser as parser

    calls = []
    monkeypatch.setattr(parser, "parseQuery", lambda text, *args, **kwargs: calls.append(text))
    parse_algebra.cache_clear()
    yield calls
    parse_algebra.cache_clear()


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_queries_get_no_algebra_without_reaching_the_parser(name, parser_calls):
    sparql = HOSTILE[name]
    assert parse_algebra(sparql) is None
    assert query_shape.__wrapped__(sparql) is None
    assert set(query_complexity(sparql + " ").values()) == {None}
    assert parser_calls == []


def test_queries_within_the_bounds_are_analysed_with_undeclared_prefixes():
    sparql = "SELECT ?f WHERE " + "{ " * 10 + "?f mrel:directed_by ?d" + " }" * 10
    assert parse_algebra(sparql) is not None
    shape = query_shape(sparql)
    assert shape is not None and shape.relations == {"urn:sparqlab:prefix:mrel/directed_by"}
    assert query_complexity(sparql)["triples"] == 1
