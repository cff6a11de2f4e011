"""The shortcuts that make a GenOp-free evaluation cost about the store's own time keep the
results of the plain definitions: the row order of ``sort_rows``, ``Mu.restrict``, interned RDF terms, the parse
cache, and ``run_genop`` on the thread's kept event loop."""

from __future__ import annotations

import asyncio
import random

import pytest

from sparqlab.methods.genop import EvalSettings, Oracle, ScriptedModel, TypedTerm, run_genop
from sparqlab.methods.genop.algebra import GenOpSyntaxError
from sparqlab.methods.genop.semantics import sort_rows
from sparqlab.methods.genop.syntax import parse_genop_query
from sparqlab.methods.genop.terms import Mu, rdf_term

XSD = "http://www.w3.org/2001/XMLSchema#"


def random_mappings(seed: int, n: int) -> list[Mu]:
    """Mappings over a few variables with overlapping and nested domains and every kind of term, including
    ties in the value that only the datatype, language or origin break."""
    rng = random.Random(seed)
    values = ["1", "01", "a", "A", "b", "http://x/1", ""]
    terms = [TypedTerm.gen(v) for v in values]
    terms += [TypedTerm.rdf("uri", "http://x/" + v) for v in values]
    terms += [TypedTerm.rdf("literal", v) for v in values]
    terms += [TypedTerm.rdf("literal", v, XSD + "integer") for v in values]
    terms += [TypedTerm.rdf("literal", v, lang="en") for v in values]
    terms += [TypedTerm.rdf("bnode", v) for v in values]
    names = ["a", "b", "c", "d"]
    out = []
    for _ in range(n):
        domain = rng.sample(names, rng.randint(0, len(names)))
        out.append(Mu({v: rng.choice(terms) for v in domain}))
    return out


@pytest.mark.parametrize("seed", range(5))
def test_sort_rows_is_the_order_of_sorted_items(seed):
    """``sort_rows`` sorts by ``sorted(μ.items())`` with terms by ⪯ (how it was defined before the flat key)."""
    rows = set(random_mappings(seed, 300))
    assert len(rows) > 100
    assert sort_rows(rows) == sorted(rows, key=lambda m: sorted(m.items()))


def test_term_order_key_is_the_order_and_not_part_of_equality():
    a, b = TypedTerm.rdf("literal", "1", XSD + "integer"), TypedTerm.gen("1")
    assert a < b and not b < a  # RDF terms before generated ones
    assert TypedTerm.rdf("uri", "http://x/z") < TypedTerm.rdf("uri", "http://x/zz")
    assert TypedTerm("rdf", "literal", "1") == TypedTerm.rdf("literal", "1", XSD + "string")
    assert "order_key" not in repr(a)


def test_rdf_terms_are_interned_and_still_checked():
    assert rdf_term("literal", "x", XSD + "string", None) == TypedTerm.rdf("literal", "x")
    assert TypedTerm.rdf("uri", "http://x/q") is TypedTerm.rdf("uri", "http://x/q")
    assert TypedTerm.rdf("literal", "x", lang="EN") == TypedTerm("rdf", "literal", "x", "", "en")
    with pytest.raises(ValueError, match="uri, literal or bnode"):
        TypedTerm.rdf("gen", "x")


def test_restrict_keeps_the_mapping_when_nothing_is_dropped():
    mu = Mu({"a": TypedTerm.gen("1"), "b": TypedTerm.gen("2")})
    assert mu.restrict(frozenset({"a", "b", "c"})) is mu
    assert mu.restrict(("b", "a")) is mu
    for variables in (frozenset({"a", "c"}), ["a", "c"], iter(["a"])):
        smaller = mu.restrict(variables)
        assert smaller == Mu({"a": TypedTerm.gen("1")}) and hash(smaller) == hash(Mu({"a": TypedTerm.gen("1")}))
    assert mu.restrict(set()) == Mu()


def test_parse_cache_gives_equal_queries_and_own_thresholds():
    text = 'SELECT ?y WHERE { ?x <http://x/p> ?z . GENOP("a ?x" AS ?y, m, THETA(?y = 0.5)) }'
    first = parse_genop_query(text, {"x": "http://x/"})
    first.thresholds["y"] = 0.1  # a caller's change does not reach the cache
    second = parse_genop_query(text, {"x": "http://x/"})
    assert second.pattern == first.pattern and second.projection == ("y",)
    assert second.thresholds == {"y": 0.5}


def test_parse_cache_is_keyed_by_prefixes_and_errors_are_not_cached():
    text = "SELECT ?s WHERE { ?s ex:p ?o }"
    with pytest.raises(GenOpSyntaxError):
        parse_genop_query(text, {})
    with_prefix = parse_genop_query(text, {"ex": "http://one/"})
    other = parse_genop_query(text, {"ex": "http://two/"})
    assert with_prefix.pattern != other.pattern
    assert "<http://two/p>" in str(other.pattern)
    with pytest.raises(GenOpSyntaxError):
        parse_genop_query(text, {})


def test_run_genop_reuses_one_loop_and_gives_the_same_rows(example_kg):
    """Two calls from synchronous code: same rows as an evaluation in a fresh loop, on one kept loop."""
    from sparqlab.core.event_loops import run_sync
    from sparqlab.methods.genop.semantics import evaluate, kg_query_fn

    text = "PREFIX : <http://example.org/>\nSELECT ?s ?o WHERE { ?s ?p ?o } "
    loops = []

    def query_fn(kg):
        inner = kg_query_fn(kg)

        async def query(sparql):
            loops.append(asyncio.get_running_loop())
            return await inner(sparql)
        return query

    oracle = Oracle.for_model(ScriptedModel({}))
    fresh = run_sync(evaluate(parse_genop_query(text, {}), query_fn(example_kg), oracle, EvalSettings()))
    kept = [run_sync(evaluate(parse_genop_query(text, {}), query_fn(example_kg), oracle, EvalSettings()),
                     reuse_loop=True) for _ in range(2)]
    assert fresh.rows and kept[0].rows == fresh.rows == kept[1].rows
    assert loops[1] is loops[2] and loops[0] is not loops[1]
    assert run_genop(text, example_kg, oracle).rows == fresh.rows
