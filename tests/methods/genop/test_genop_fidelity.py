"""GenOp semantics as the paper defines them (docs/fidelity.md, "GenOp"): SCC condensation
under every semantics (Sect. 6.4, App. E.3) and Diff_F keeping μ1 only when F is ⊥ (Sect. 3, clause 6)."""

from __future__ import annotations

import pytest
from genop_helpers import EXAMPLE1, EXAMPLE1_SCRIPT, PREFIX, run, values

from sparqlab.methods.genop import analyse, parse_genop_query

EX = "http://example.org/"
EXAMPLE1_ANSWER = [{"x": (EX + "Paris", "rdf"), "y": ("art", "gen"), "z": ("Florence", "gen")}]

WITH_NEGATIVE_CYCLE = EXAMPLE1[:EXAMPLE1.rindex("}")] + """  OPTIONAL {
    { ?u a :Town . MINUS { GENOP("Which town has the topic ?w" AS ?u) } }
    GENOP("Name a topic of ?u" AS ?w)
  }
}"""
"""Example 1 plus an unrelated even loop through MINUS (a non-stratified SCC of its own) in an OPTIONAL."""


@pytest.mark.parametrize("semantics", ["single-pass", "stratified", "lfp", "well-founded"])
def test_the_self_supporting_cycle_of_example_1_is_condensed_under_every_semantics(example_kg, semantics):
    result, _ = run(example_kg, EXAMPLE1, EXAMPLE1_SCRIPT, semantics=semantics)
    assert values(result) == EXAMPLE1_ANSWER


def test_an_unrelated_negative_cycle_does_not_remove_example_1_answers(example_kg):
    deps = analyse(parse_genop_query(WITH_NEGATIVE_CYCLE).pattern)
    assert deps.query_class == "non-stratified"
    script = {**EXAMPLE1_SCRIPT, "Name a topic of Lyon": ["silk"], "Which town has the topic silk": []}
    result, _ = run(example_kg, WITH_NEGATIVE_CYCLE, script)  # auto: well-founded
    assert result.semantics == "well-founded"
    assert [{v: row[v] for v in ("x", "y", "z")} for row in values(result)] == EXAMPLE1_ANSWER
    old, _ = run(example_kg, WITH_NEGATIVE_CYCLE, script, condense=False)
    assert old.rows == []  # ours before: the positive cycle was not condensed under well-founded


def test_diff_keeps_a_mapping_only_when_the_formula_is_false_not_an_error(example_kg):
    """Clause 6: μ1 ∈ P1 Diff_F P2 iff for every compatible μ2, F^{μ1 ⊎ μ2} = ⊥. An error ε (an unbound ?y)
    removes μ1; SPARQL's LeftJoin reading (error kept) stays for the Diff branch of OPTIONAL."""
    from genop_helpers import scripted

    from sparqlab.core.event_loops import run_sync
    from sparqlab.methods.genop.algebra import EqConst
    from sparqlab.methods.genop.semantics import Evaluation, kg_query_fn
    from sparqlab.methods.genop.terms import Mu, TypedTerm

    query = parse_genop_query(PREFIX + "SELECT ?x WHERE { ?x a :City }")
    evaluation = Evaluation(query, kg_query_fn(example_kg), scripted({}))
    left, right = {Mu({"x": TypedTerm.gen("a")})}, {Mu({"x": TypedTerm.gen("a")})}
    error = EqConst("y", TypedTerm.gen("b"))   # ?y unbound in μ1 ⊎ μ2: F = ε
    false = EqConst("x", TypedTerm.gen("zz"))  # F = ⊥
    assert evaluation.truth(error, Mu({"x": TypedTerm.gen("a")})) is None
    assert run_sync(evaluation.diff(left, right, error)) == set()
    assert run_sync(evaluation.diff(left, right, false)) == left
    assert run_sync(evaluation.diff(left, right, error, error_keeps=True)) == left


@pytest.mark.parametrize(("optional", "negative"), [
    ("OPTIONAL { ?y :p ?o }", True),    # ?y in the right operand: in the Diff branch of Opt_F = Join ∪ Diff_F
    ("OPTIONAL { ?x :p ?o }", False),   # ?y only in positive positions
])
def test_optional_right_operand_is_a_negative_position_per_definition_14(optional, negative):
    """Def. 14: positions under "the Join branch of Opt" are positive, "the Diff branch of Opt" negative; the right
    operand of OPTIONAL lies in both branches of Opt_F = (P1 Join P2) ∪ (P1 Diff_F P2), and one negative
    occurrence makes the edge negative (clause 2). (Unchanged behaviour; pinned here, see docs/fidelity.md.)"""
    text = PREFIX + """SELECT ?x ?y ?z WHERE {
      ?x a :City . GENOP("Find topic for ?x" AS ?y) . GENOP("Find city for ?y" AS ?z) . """ + optional + " }"
    deps = analyse(parse_genop_query(text).pattern)
    assert [(e.source, e.target, e.negative) for e in deps.edges] == [(0, 1, negative)]


@pytest.mark.parametrize(("where", "expected"), [
    # MINUS removes μ1 only for a compatible μ2 that shares a variable: disjoint domains remove nothing
    ("?s :p ?o . MINUS { ?x a :City }", ["s1", "s2"]),
    # FILTER keeps F = ⊤ only: ?c unbound for s2 is an error ε, which drops the mapping
    ("?s :p ?o . OPTIONAL { ?s :q ?c } FILTER(?c = :c)", ["s1"]),
    # ¬ε = ε (Sect. 3 "Filter", SPARQL's error table): still dropped; s1's ¬⊤ = ⊥ too
    ("?s :p ?o . OPTIONAL { ?s :q ?c } FILTER(!(?c = :c))", []),
    # OPTIONAL keeps a left mapping without a match
    ("?s :p ?o . OPTIONAL { ?s :q ?c }", ["s1", "s2"]),
])
def test_sparql_edge_cases_evaluate_as_sparql_does(example_kg, where, expected):
    """Proposition 1 on the algebra's edge cases: a query without GenOps gives SPARQL's answer (the KG's own)."""
    text = PREFIX + f"SELECT ?s WHERE {{ {where} }}"
    result, _ = run(example_kg, text, {})
    got = sorted(row["s"][0].rsplit("/", 1)[-1] for row in values(result))
    assert got == expected
    assert got == sorted(row["s"].value.rsplit("/", 1)[-1] for row in example_kg.query(text).rows)


FED_BY_UNION = PREFIX + """SELECT ?x ?y WHERE {
  { ?x a :City } UNION { GENOP("Name a topic of ?x" AS ?y) }
}"""
"""An acyclic query whose GenOp takes ?x from the other UNION branch: a single pass gives it no context."""

LOCALLY_FED = PREFIX + """SELECT ?x ?y WHERE { ?x a :City . GENOP("Name a topic of ?x" AS ?y) }"""


def test_auto_uses_the_fixpoint_when_a_genop_is_fed_by_another_union_branch(example_kg):
    """Def. 13 / Theorem 8: the result of an acyclic query is its least fixpoint. One pass gives fewer rows when
    a GenOp's placeholders come from another UNION branch, so ``auto`` evaluates it by lfp; where every GenOp's
    placeholders are bound within its own group the single pass coincides and ``auto`` keeps it."""
    script = {"Name a topic of Paris": ["art"]}
    assert analyse(parse_genop_query(FED_BY_UNION).pattern).single_pass_exact is False
    single, _ = run(example_kg, FED_BY_UNION, script, semantics="single-pass")
    lfp, _ = run(example_kg, FED_BY_UNION, script, semantics="lfp")
    auto, _ = run(example_kg, FED_BY_UNION, script)
    assert len(single.rows) < len(lfp.rows)
    assert auto.semantics == "lfp" and values(auto) == values(lfp)
    assert {("art", "gen")} == {row["y"] for row in values(auto) if "y" in row}

    assert analyse(parse_genop_query(LOCALLY_FED).pattern).single_pass_exact is True
    auto, _ = run(example_kg, LOCALLY_FED, script)
    lfp, _ = run(example_kg, LOCALLY_FED, script, semantics="lfp")
    assert auto.semantics == "single-pass" and values(auto) == values(lfp) != []


@pytest.mark.parametrize(("query", "exact"), [
    # placeholders bound by the group's pattern, or by an earlier GenOp of the group: one pass is exact
    ("SELECT * WHERE { ?x a :City . GENOP(\"t ?x\" AS ?y) . GENOP(\"c ?y\" AS ?z) }", True),
    ("SELECT * WHERE { GENOP(\"Name a city\" AS ?x) }", True),
    # bound only by an OPTIONAL's or a MINUS's left side, or in one UNION branch
    ("SELECT * WHERE { ?x a :City OPTIONAL { GENOP(\"t ?x\" AS ?y) } }", False),
    ("SELECT * WHERE { ?x a :City MINUS { GENOP(\"t ?x\" AS ?y) } }", False),
    ("SELECT * WHERE { { ?x a :City } UNION { ?z a :Town } GENOP(\"t ?x\" AS ?y) }", False),
])
def test_single_pass_is_exact_only_where_every_genop_is_fed_by_its_own_group(query, exact):
    assert analyse(parse_genop_query(PREFIX + query).pattern).single_pass_exact is exact
