"""Model-written queries are analysed in-process (error subtypes, complexity columns): the tree parser only ever
sees queries within the screen's bounds, so a hostile query cannot hang or recurse the run's scoring."""

import pytest

from sparqlab.eval import analysis
from sparqlab.eval.analysis import MAX_ANALYSED_CHARS, analysed_query
from sparqlab.eval.complexity import query_complexity
from sparqlab.eval.errors import query_shape
from sparqlab.sparql.screen import MAX_NESTING

HOSTILE = {
    "too long": "SELECT * WHERE { " + "?s ?p ?o . " * (MAX_ANALYSED_CHARS // 10) + "}",
    "nested too deep": "SELECT * WHERE " + "{ " * (MAX_NESTING + 5) + "?s ?p ?o" + " }" * (MAX_NESTING + 5),
    "unbalanced": "SELECT * WHERE { { ?s ?p ?o }",
    "unclosed string": 'SELECT * WHERE { ?s ?p "open }',
}


@pytest.fixture
def parser_calls(monkeypatch):
    """The queries handed to the tree parser during the test (its errors are swallowed as "does not parse", so
    the calls are counted rather than refused)."""
    calls = []
    monkeypatch.setattr(analysis, "parse_query", lambda text, *args, **kwargs: calls.append(text))
    analysed_query.cache_clear()
    yield calls
    analysed_query.cache_clear()


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_queries_get_no_tree_without_reaching_the_parser(name, parser_calls):
    sparql = HOSTILE[name]
    assert analysed_query(sparql) is None
    assert query_shape.__wrapped__(sparql) is None
    assert set(query_complexity(sparql + " ").values()) == {None}
    assert parser_calls == []


def test_queries_within_the_bounds_are_analysed_with_undeclared_prefixes():
    sparql = "SELECT ?f WHERE " + "{ " * 10 + "?f mrel:directed_by ?d" + " }" * 10
    assert analysed_query(sparql) is not None
    shape = query_shape(sparql)
    assert shape is not None and shape.relations == {"http://sparqlab.org/movies/relation/directed_by"}
    assert query_complexity(sparql)["triples"] == 1
