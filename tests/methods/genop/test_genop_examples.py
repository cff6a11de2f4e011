"""The paper's worked examples with the scripted model: Example 1/6 (cyclic pair, EvalSCC), Example 2 (one GenOp
with two outputs), Example 3 (positive vs negative dependency, stratification), Examples 4/5 and Proposition 6
(unsafe vs safe join reordering)."""

from __future__ import annotations

import pytest
from genop_helpers import EXAMPLE1, EXAMPLE1_SCRIPT, PREFIX, run, values

from sparqlab.core.event_loops import run_sync
from sparqlab.methods.genop import analyse, parse_genop_query
from sparqlab.methods.genop.algebra import BGP, GenOp, Join
from sparqlab.methods.genop.semantics import Evaluation, kg_query_fn

EX = "http://example.org/"


def test_example_1_and_6_cyclic_pair_yields_the_self_supporting_mapping(example_kg):
    result, oracle = run(example_kg, EXAMPLE1, EXAMPLE1_SCRIPT)
    assert result.query_class == "stratified"          # a cycle of positive edges
    assert result.dependencies.sccs == [(0, 1)]
    assert values(result) == [{"x": (EX + "Paris", "rdf"), "y": ("art", "gen"), "z": ("Florence", "gen")}]
    # Propose: 1 sentinel round for g1, 2 for g2 (art, cuisine), 3 for g1 (Florence, Rome, Bologna), then g2 on
    # history and food; validation of the 4 x 3 candidates stops at the first failing GenOp.
    domains = next(e for e in result.events if e["event"] == "domains")["domains"]
    assert domains == {"y": ["art", "cuisine", "history", "food"], "z": ["Florence", "Rome", "Bologna"]}
    assert oracle.calls["propose"] == 8
    assert result.model_calls == oracle.calls["propose"] + oracle.calls["validate"]
    rejected = [e for e in result.events if e["event"] == "candidate" and not e["accepted"]]
    assert len(rejected) == 11


def test_example_1_without_the_supporting_answer_has_no_solution(example_kg):
    script = dict(EXAMPLE1_SCRIPT, **{"Suggest a topic related to Paris and Florence": ["music"]})
    result, _ = run(example_kg, EXAMPLE1, script)
    assert result.rows == []


def test_example_1_least_fixpoint_is_empty_because_the_answer_only_supports_itself(example_kg):
    # without SCC condensation (condense=False): the plain Kleene chain derives nothing from ∅
    result, oracle = run(example_kg, EXAMPLE1, EXAMPLE1_SCRIPT, semantics="lfp", condense=False)
    assert result.rows == [] and oracle.model_calls == 0


def test_example_2_one_genop_with_two_outputs(example_kg):
    text = PREFIX + 'SELECT ?x ?y WHERE { ?x a :City . GENOP("Describe the city ?x" AS ?y, "GPT-4o") }'
    script = {"Describe the city Paris": ["capital of France", "cultural center"]}
    result, oracle = run(example_kg, text, script)
    assert result.query_class == "acyclic" and oracle.model_calls == 1
    assert values(result) == [{"x": (EX + "Paris", "rdf"), "y": ("capital of France", "gen")},
                              {"x": (EX + "Paris", "rdf"), "y": ("cultural center", "gen")}]


EXAMPLE3 = PREFIX + """SELECT ?x ?y ?z WHERE {
  ?x a ?class .
  GENOP("Find topic for ?x" AS ?y, "GPT-4o") .
  GENOP("Find city for ?y" AS ?z, "GPT-4o") .
  %s
}"""
EXAMPLE3_SCRIPT = {"Find topic for Paris": ["art"], "Find topic for Lyon": ["silk", "food"],
                   "Find city for art": ["Florence"], "Find city for silk": ["Suzhou"], "Find city for food": ["Lyon"]}


def test_example_3_positive_dependency(example_kg):
    deps = analyse(parse_genop_query(EXAMPLE3 % "").pattern)
    assert [(e.source, e.target, e.variables, e.negative) for e in deps.edges] == [(0, 1, ("y",), False)]
    assert deps.query_class == "acyclic" and deps.strata == {0: 0, 1: 0} and deps.monotone
    result, _ = run(example_kg, EXAMPLE3 % "", EXAMPLE3_SCRIPT)
    assert {(r["y"][0], r["z"][0]) for r in values(result)} == {("art", "Florence"), ("silk", "Suzhou"),
                                                                ("food", "Lyon")}


def test_example_3_minus_variant_has_a_negative_edge_and_two_strata(example_kg):
    text = EXAMPLE3 % "MINUS { ?x :hasTopic ?y . }"
    deps = analyse(parse_genop_query(text).pattern)
    assert [(e.source, e.target, e.negative) for e in deps.edges] == [(0, 1, True)]
    assert deps.strata == {0: 0, 1: 1} and not deps.monotone
    assert deps.describe()["edges"] == [{"from": "g1", "to": "g2", "vars": ["y"], "sign": "-"}]
    result, _ = run(example_kg, text, EXAMPLE3_SCRIPT)
    # Lyon :hasTopic :Silk ("silk"): the generated "silk" is compatible with it (θ = 1 on the label), so MINUS
    # removes that mapping; the generated "food" has no RDF counterpart and stays.
    assert {(r["y"][0], r["z"][0]) for r in values(result)} == {("art", "Florence"), ("food", "Lyon")}
    # Stratified evaluation (σ(g1) < σ(g2)) gives the same answer as the single pass.
    stratified, _ = run(example_kg, text, EXAMPLE3_SCRIPT, semantics="stratified")
    assert stratified.rows == result.rows


UNSAFE = PREFIX + 'SELECT * WHERE { ?s :p ?x . { ?s :q ?z . GENOP("Describe ?x" AS ?y) } }'
ORIGINAL = PREFIX + 'SELECT * WHERE { ?s :p ?x . ?s :q ?z . GENOP("Describe ?x" AS ?y) }'
SAFE = PREFIX + 'SELECT * WHERE { ?s :q ?z . { ?s :p ?x . GENOP("Describe ?x" AS ?y) } }'
DESCRIBE = {"Describe A": ["first letter"], "Describe B": ["second letter"], "Describe C": ["third letter"]}


def test_example_4_and_5_unsafe_reordering_changes_the_result(example_kg):
    original, _ = run(example_kg, ORIGINAL, DESCRIBE)
    unsafe, calls = run(example_kg, UNSAFE, DESCRIBE)
    assert values(original) == [{"s": (EX + "s1", "rdf"), "x": (EX + "a", "rdf"), "z": (EX + "c", "rdf"),
                                 "y": ("first letter", "gen")}]
    assert unsafe.rows == [] and calls.model_calls == 0   # P2 gives g no binding of ?x


def test_proposition_6_safe_reordering_keeps_the_result(example_kg):
    original, original_calls = run(example_kg, ORIGINAL, DESCRIBE)
    safe, safe_calls = run(example_kg, SAFE, DESCRIBE)
    assert safe.rows == original.rows
    # The context sets differ (g sees both ?x of P1 when it runs before the join with P2), the answer does not.
    assert (original_calls.model_calls, safe_calls.model_calls) == (1, 2)


def test_proposition_6_on_the_algebra(example_kg):
    """(P1 Join P2) Join g = (P1 Join g) Join P2 when X ⊆ var(P1) and var(P2) ∩ X = ∅."""
    p1 = BGP(((("?s", f"<{EX}p>", "?x")),), frozenset({"s", "x"}))
    p2 = BGP(((("?s", f"<{EX}q>", "?z")),), frozenset({"s", "z"}))
    g = GenOp(0, "Describe ?x", ("y",))
    query = parse_genop_query(ORIGINAL)
    from genop_helpers import scripted

    def evaluate(pattern):
        evaluation = Evaluation(query, kg_query_fn(example_kg), scripted(DESCRIBE))
        return run_sync(evaluation.eval(pattern, set()))

    assert evaluate(Join(Join(p1, p2), g)) == evaluate(Join(Join(p1, g), p2))
    assert evaluate(Join(p1, Join(p2, g))) == set()


@pytest.mark.parametrize("text", [EXAMPLE1, EXAMPLE3 % ""])
def test_example_queries_are_well_formed_and_list_their_genops(text):
    query = parse_genop_query(text)
    assert [g.name for g in query.genops] == ["g1", "g2"]
    assert query.projection == ("x", "y", "z")


def test_optional_genop_takes_contexts_from_the_left_and_filters_see_generated_values(example_kg):
    text = PREFIX + """SELECT ?x ?y WHERE { ?x a ?class . OPTIONAL { GENOP("Describe the city ?x" AS ?y) }
                                             FILTER(!bound(?y) || ?y = "cultural center") }"""
    script = {"Describe the city Paris": ["capital of France", "cultural center"]}
    result, oracle = run(example_kg, text, script)
    rows = {(r["x"][0], r.get("y", ("-", ""))[0]) for r in values(result)}
    # Paris keeps only the generated value equal to the literal; Lyon (no outputs) stays unbound by OPTIONAL.
    assert rows == {(EX + "Paris", "cultural center"), (EX + "Lyon", "-")}
    assert oracle.calls["propose"] == 2


def test_a_genop_without_placeholders_runs_once_in_base_mode(example_kg):
    text = PREFIX + 'SELECT ?x ?c WHERE { ?x a :City . GENOP("Name a colour" AS ?c) }'
    result, oracle = run(example_kg, text, {"Name a colour": ["red", "blue"]})
    assert {r["c"][0] for r in values(result)} == {"red", "blue"} and oracle.model_calls == 1


REPAIR_SCRIPT = {
    "Suggest a topic related to Paris and <unknown:?z>": ["cuisine", "art"],
    "Suggest a city related to topic cuisine": ["Bologna"],
    "Suggest a topic related to Paris and Bologna": ["food"],
    "Suggest a city related to topic food": ["Bologna"],
}


@pytest.mark.parametrize(("repairs", "expected"), [(0, []), (1, [("food", "Bologna")])])
def test_domain_cap_and_repairs(example_kg, repairs, expected):
    """With B = 1 the domains are D[y] = {cuisine}, D[z] = {Bologna}; the only candidate fails at g1, whose
    fully instantiated prompt proposes "food": one repair (T = 1) finds the self-supporting (food, Bologna)."""
    result, _ = run(example_kg, EXAMPLE1, REPAIR_SCRIPT, b=1, t=repairs)
    domains = next(e for e in result.events if e["event"] == "domains")["domains"]
    assert domains == {"y": ["cuisine"], "z": ["Bologna"]}
    assert [(r["y"][0], r["z"][0]) for r in values(result)] == expected
    assert len([e for e in result.events if e["event"] == "repair"]) == repairs
