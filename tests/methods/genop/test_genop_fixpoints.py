"""Fixpoint evaluation: a monotone Kleene chain terminates at the least fixpoint, the stratified and single-pass
answers agree where they should, the alternating fixpoint of Def. 21, and memoisation cutting repeated calls."""

from __future__ import annotations

import pytest
from genop_helpers import EXAMPLE1, EXAMPLE1_SCRIPT, PREFIX, run, values

from sparqlab.core.event_loops import run_sync
from sparqlab.methods.genop import analyse, parse_genop_query
from sparqlab.methods.genop.semantics import GenOpEvaluationError, alternating_fixpoint

EX = "http://example.org/"

CHAIN = PREFIX + """SELECT ?x ?y WHERE {
  { ?x a :City }
  UNION { GENOP("Suggest a topic related to ?x" AS ?y) }
  UNION { GENOP("Suggest a city related to topic ?y" AS ?x) }
}"""
CHAIN_SCRIPT = {
    "Suggest a topic related to Paris": ["art"],
    "Suggest a city related to topic art": ["Florence"],
    "Suggest a topic related to Florence": ["Renaissance"],
    "Suggest a city related to topic Renaissance": ["Florence", "Rome"],
    "Suggest a topic related to Rome": ["art"],
}


def test_monotone_chain_reaches_the_least_fixpoint_and_stops(example_kg):
    deps = analyse(parse_genop_query(CHAIN).pattern)
    assert deps.monotone and deps.query_class == "stratified"
    result, oracle = run(example_kg, CHAIN, CHAIN_SCRIPT, semantics="lfp", condense=False)  # the plain chain
    assert {(r.get("x", ("", ""))[0], r.get("y", ("", ""))[0]) for r in values(result)} == {
        (EX + "Paris", ""), (EX + "Paris", "art"), ("Florence", "art"), ("Florence", "Renaissance"),
        ("Rome", "Renaissance"), ("Rome", "art")}
    sizes = result.iterations
    assert sizes == [1, 2, 3, 4, 5, 6, 6]            # one new mapping per step, then stable
    steps = [e for e in result.events if e["event"] == "iteration"]
    assert all(e["monotone_step"] for e in steps)    # S_n ⊆ S_{n+1}
    assert oracle.model_calls == len(CHAIN_SCRIPT)   # every distinct prompt once (memoised)


def test_single_pass_misses_contexts_from_another_branch(example_kg):
    result, _ = run(example_kg, CHAIN, CHAIN_SCRIPT, semantics="single-pass")
    assert values(result) == [{"x": (EX + "Paris", "rdf")}]


def test_a_non_terminating_chain_is_reported(example_kg):
    script = {f"Suggest a topic related to {c}": [f"t{c}"] for c in ["Paris"] + [f"c{i}" for i in range(30)]}
    script.update({f"Suggest a city related to topic t{c}": [f"c{i}"] for i, c in
                   enumerate(["Paris"] + [f"c{i}" for i in range(29)])})
    with pytest.raises(GenOpEvaluationError, match="did not stabilise"):
        run(example_kg, CHAIN, script, semantics="lfp", max_iterations=5, condense=False)


def test_memoisation_cuts_repeated_model_calls(example_kg):
    memo, with_memo = run(example_kg, CHAIN, CHAIN_SCRIPT, semantics="lfp", condense=False)
    plain, without = run(example_kg, CHAIN, CHAIN_SCRIPT, semantics="lfp", memoise=False, condense=False)
    assert memo.rows == plain.rows
    assert with_memo.model_calls == 5 and without.model_calls > 2 * with_memo.model_calls
    assert with_memo.memo_hits["propose"] > 0 and not without.memo_hits
    cyc_memo, cyc_with = run(example_kg, EXAMPLE1, EXAMPLE1_SCRIPT)
    cyc_plain, cyc_without = run(example_kg, EXAMPLE1, EXAMPLE1_SCRIPT, memoise=False)
    assert cyc_memo.rows == cyc_plain.rows
    assert cyc_with.model_calls < cyc_without.model_calls


def test_stratified_fixpoint_of_example_1_is_stable_after_one_productive_step(example_kg):
    result, oracle = run(example_kg, EXAMPLE1, EXAMPLE1_SCRIPT, semantics="stratified")
    assert result.iterations == [1, 1]
    calls = oracle.model_calls
    again, _ = run(example_kg, EXAMPLE1, EXAMPLE1_SCRIPT, semantics="stratified")
    assert again.model_calls == calls                 # deterministic: same calls each time


def _program(rules: dict[str, tuple[set[str], set[str]]]):
    """Γ(J) for a propositional program {head: (positive body, negative body)} (negation read against J)."""
    async def gamma(j: set) -> set:
        derived: set = set()
        while True:
            new = {h for h, (pos, neg) in rules.items() if pos <= derived and not (neg & j)}
            if new <= derived:
                return derived
            derived |= new
    return gamma


@pytest.mark.parametrize(("rules", "true", "false"), [
    ({"p": (set(), {"q"}), "q": (set(), {"p"})}, set(), set()),                     # even loop: undefined
    ({"p": (set(), {"q"}), "q": (set(), set())}, {"q"}, {"p"}),                     # q fact: p false
    ({"p": (set(), {"q"}), "q": (set(), {"r"}), "r": (set(), set())}, {"p", "r"}, {"q"}),
    ({"p": ({"q"}, set()), "q": ({"p"}, set()), "r": (set(), {"p"})}, {"r"}, {"p", "q"}),  # unfounded loop
])
def test_alternating_fixpoint_gives_the_well_founded_model(rules, true, false):
    gamma = _program(rules)
    cand = set(rules)
    got_true, got_false = run_sync(alternating_fixpoint(gamma, cand))
    assert (got_true, got_false) == (true, false)


NON_STRATIFIED = PREFIX + """SELECT ?x ?w WHERE {
  { ?x a ?type . MINUS { GENOP("Which city has the topic ?w" AS ?x) } }
  GENOP("Name a topic of ?x" AS ?w)
}"""
"""A city survives unless the topic of a surviving row names it: an even loop through MINUS (non-stratified)."""


@pytest.mark.parametrize(("script_update", "true", "undefined"), [
    ({}, set(), {"Paris", "Lyon"}),                                          # p <- not q, q <- not p
    ({"Which city has the topic art": []}, {"Lyon"}, set()),                 # Lyon certain, so Paris is false
])
def test_non_stratified_query_gets_the_well_founded_model(example_kg, script_update, true, undefined):
    deps = analyse(parse_genop_query(NON_STRATIFIED).pattern)
    assert deps.query_class == "non-stratified" and deps.strata is None
    assert {(e.source, e.target, e.negative) for e in deps.edges} == {(1, 0, False), (0, 1, True)}
    script = {"Name a topic of Paris": ["art"], "Name a topic of Lyon": ["silk"],
              "Which city has the topic art": ["Lyon"], "Which city has the topic silk": ["Paris"], **script_update}
    result, _ = run(example_kg, NON_STRATIFIED, script)
    assert result.semantics == "well-founded"
    city = {EX + "Paris": "Paris", EX + "Lyon": "Lyon"}
    assert {city[m["x"].value] for m in result.rows} == true
    assert {city[m["x"].value] for m in result.undefined} == undefined
    out = result.to_json()
    assert len(out["undefined"]) == len(undefined) and len(out["rows"]) == len(true)
    with pytest.raises(ValueError, match="non-stratified"):
        run(example_kg, NON_STRATIFIED, script, semantics="stratified")


def test_a_stratum_is_evaluated_without_the_genops_of_higher_strata(example_kg):
    """Def. 18: stratum i is the lfp of the pattern with the GenOps of strata > i removed; Example 3's MINUS
    variant puts g2 (subtracted) above g1, so g2 is not asked anything before stratum 0 is complete."""
    from test_genop_examples import EXAMPLE3, EXAMPLE3_SCRIPT

    result, _ = run(example_kg, EXAMPLE3 % "MINUS { ?x :hasTopic ?y . }", EXAMPLE3_SCRIPT, semantics="stratified")
    events = result.events
    last_of_stratum_0 = max(n for n, e in enumerate(events) if e.get("fixpoint") == "stratum 0")
    asked = {e["genop"] for e in events[:last_of_stratum_0] if e["event"] == "propose"}
    assert asked == {"g1"}
    assert "g2" in {e["genop"] for e in events if e["event"] == "propose"}
