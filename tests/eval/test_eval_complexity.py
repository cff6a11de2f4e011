"""SPARQL complexity features (triple patterns, FILTER, aggregation, ORDER BY ...) read from the query algebra."""

import pytest

from sparqlab.eval.complexity import FEATURES, query_complexity, triples_bucket


def test_features_of_a_rich_query_with_undeclared_prefixes():
    sparql = """SELECT (COUNT(?x) AS ?n) WHERE { ?x wdt:P31 wd:Q5 . ?x rdfs:label ?l FILTER(lang(?l) = "en")
                OPTIONAL { ?x wdt:P1 ?z } } GROUP BY ?x ORDER BY ?n LIMIT 3"""
    assert query_complexity(sparql) == {"triples": 3, "triples_bucket": "3-4", "filter": True, "aggregate": True,
                                        "order_by": True, "optional": True, "union": False}


def test_keywords_in_literals_do_not_count_and_subqueries_do():
    assert query_complexity('SELECT ?x WHERE { ?x <http://a/b> "FILTER ORDER BY" }') == {
        "triples": 1, "triples_bucket": "1", "filter": False, "aggregate": False, "order_by": False,
        "optional": False, "union": False}
    nested = "SELECT ?x WHERE { ?x :a ?y . { SELECT ?y WHERE { ?y :b ?z . ?z :c ?w } ORDER BY ?z } }"
    features = query_complexity(nested)
    assert features["triples"] == 3 and features["order_by"] is True
    assert query_complexity("SELECT ?x WHERE { { ?x :a ?y } UNION { ?x :c ?y } }")["union"] is True


@pytest.mark.parametrize("sparql", [None, "", "SELECT WHERE {", "not sparql at all"])
def test_no_or_broken_query_gives_none_features(sparql):
    assert query_complexity(sparql) == dict.fromkeys(FEATURES)


@pytest.mark.parametrize("count, bucket", [(0, "0"), (1, "1"), (2, "2"), (3, "3-4"), (4, "3-4"), (5, "5+"),
                                           (40, "5+")])
def test_triple_buckets(count, bucket):
    assert triples_bucket(count) == bucket


def test_service_and_exists_patterns_add_no_triples_and_a_filter_inside_optional_counts():
    """What the query asks of the KG: the label service's pattern and a NOT EXISTS test are no triple patterns of
    it (the NOT EXISTS is its FILTER); the FILTER of an OPTIONAL group is a filter."""
    sparql = """SELECT ?x WHERE { ?x wdt:P31 wd:Q5 OPTIONAL { ?x wdt:P569 ?d FILTER(?d > 3) }
                FILTER NOT EXISTS { ?x wdt:P570 ?e } SERVICE wikibase:label { bd:serviceParam wikibase:language "en" } }"""
    assert query_complexity(sparql) == {"triples": 2, "triples_bucket": "2", "filter": True, "aggregate": False,
                                        "order_by": False, "optional": True, "union": False}
    assert query_complexity("SELECT ?x WHERE { ?x :a ?y OPTIONAL { ?x :b ?z FILTER(?z > 1) } }")["filter"] is True
