"""Structural EM (triple-order-invariant, variable-renaming-invariant) and the fragment / URI / BLEU metrics."""

import random
import re

import pytest

from sparqlab.eval import structural
from sparqlab.eval.structural import (
    StructureLimitError,
    StructureLimitWarning,
    canonical_form,
    corpus_bleu,
    fragment_em,
    normalise_fragment,
    query_graph,
    structural_em,
    uri_em,
)
from sparqlab.sparql.tree import SparqlParseError, parse_query

GOLD = "SELECT ?a ?b WHERE { ?c wdt:P36 ?a . ?c wdt:P1082 ?b . FILTER(?b < 10000) }"

MATCH = [
    # triple order and a renaming whose first appearance order differs
    "SELECT ?x ?y WHERE { ?z wdt:P1082 ?y . ?z wdt:P36 ?x . FILTER(?y < 10000) }",
    # ';' abbreviation, keyword case, no WHERE keyword, filter spacing, full IRIs instead of prefixed names
    "select ?x ?y { ?z <http://www.wikidata.org/prop/direct/P1082> ?y ; wdt:P36 ?x filter (?y<10000) }",
    # declared prefix with another name
    "PREFIX d: <http://www.wikidata.org/prop/direct/> SELECT ?p ?q WHERE { ?r d:P36 ?p . ?r d:P1082 ?q "
    "FILTER(?q < 10000) }",
]

NO_MATCH = [
    "SELECT ?y ?x WHERE { ?z wdt:P1082 ?y . ?z wdt:P36 ?x . FILTER(?y < 10000) }",  # projection order
    "SELECT ?x WHERE { ?z wdt:P1082 ?y . ?z wdt:P36 ?x . FILTER(?y < 10000) }",  # projection
    "SELECT ?x ?y WHERE { ?z wdt:P1082 ?x . ?z wdt:P36 ?y . FILTER(?y < 10000) }",  # roles of the variables swapped
    "SELECT ?x ?y WHERE { ?z wdt:P1082 ?y . ?w wdt:P36 ?x . FILTER(?y < 10000) }",  # shared variable split
    "SELECT ?x ?y WHERE { ?z wdt:P1082 ?y . ?z wdt:P35 ?x . FILTER(?y < 10000) }",  # property
    "SELECT ?x ?y WHERE { ?z wdt:P1082 ?y . ?z wdt:P36 ?x . FILTER(?y < 1000) }",  # constant
    "SELECT ?x ?y WHERE { ?z wdt:P1082 ?y . ?z wdt:P36 ?x . FILTER(?y > 10000) }",  # filter operator
    "SELECT ?x ?y WHERE { ?z wdt:P1082 ?y . ?z wdt:P36 ?x . }",  # filter dropped
    "SELECT DISTINCT ?x ?y WHERE { ?z wdt:P1082 ?y . ?z wdt:P36 ?x . FILTER(?y < 10000) }",  # modifier
    "SELECT ?x ?y WHERE { ?z wdt:P1082 ?y . ?z wdt:P36 ?x . FILTER(?y < 10000) } LIMIT 5",  # solution modifier
    "SELECT ?x ?y WHERE { ?z wdt:P1082 ?y . OPTIONAL { ?z wdt:P36 ?x } FILTER(?y < 10000) }",  # optional
]


@pytest.mark.parametrize("predicted", MATCH)
def test_structurally_equal_queries_match(predicted):
    assert structural_em(predicted, GOLD) == 1
    assert canonical_form(predicted) == canonical_form(GOLD)


@pytest.mark.parametrize("predicted", NO_MATCH)
def test_any_other_difference_does_not_match(predicted):
    assert structural_em(predicted, GOLD) == 0


def test_symmetric_variables_are_matched_whatever_their_names():
    cycle = "SELECT * WHERE { ?a ?p ?b . ?b ?p ?c . ?c ?p ?a . ?a wdt:P31 wd:Q5 }"
    rotated = "SELECT * WHERE { ?u ?r ?v . ?w wdt:P31 wd:Q5 . ?v ?r ?w . ?w ?r ?u }"
    assert structural_em(rotated, cycle) == 1
    path = "SELECT * WHERE { ?u ?r ?v . ?v ?r ?w . ?w ?r ?u . ?w wdt:P31 wd:Q5 . ?w wdt:P31 wd:Q6 }"
    assert structural_em(path, cycle) == 0


def test_blank_nodes_nested_groups_and_subqueries():
    gold = ("SELECT ?item (COUNT(?unit) AS ?n) { ?item p:P4214 [ psv:P4214 [ wikibase:quantityUnit ?unit ] ] . "
            "OPTIONAL { ?item wdt:P31 ?t . ?t wdt:P279 wd:Q5 } } GROUP BY ?item HAVING(?n > 1)")
    same = ("SELECT ?i (COUNT(?u) AS ?m) WHERE { OPTIONAL { ?s wdt:P279 wd:Q5 . ?i wdt:P31 ?s } "
            "_:x wikibase:quantityUnit ?u . ?i p:P4214 _:y . _:y psv:P4214 _:x } GROUP BY ?i HAVING ( ?m > 1 )")
    assert structural_em(same, gold) == 1
    assert structural_em(same.replace("?m > 1", "?m > 2"), gold) == 0


def test_unparsable_prediction_scores_zero_but_a_bad_gold_query_raises():
    assert structural_em("SELECT ?x WHERE { ?x wdt:P31 ", GOLD) == 0
    assert structural_em(None, GOLD) == 0
    with pytest.raises(SparqlParseError, match="end of query|expected"):
        structural_em(GOLD, "SELECT ?x WHERE { ?x wdt:P31 ")


def _nested(kind: str, depth: int) -> str:
    if kind == "groups":
        return "SELECT ?x WHERE " + "{" * depth + " ?x wdt:P31 ?y " + "}" * depth
    if kind == "path":
        return "SELECT ?x WHERE { ?x " + "(" * depth + "wdt:P31" + ")" * depth + " ?y }"
    return "SELECT ?x WHERE { ?x wdt:P31 ?y FILTER(" + "(" * depth + "?y" + ")" * depth + ") }"


@pytest.mark.parametrize("kind", ["groups", "path", "filter"])
def test_nesting_past_the_guard_limit_is_a_parse_error_not_a_recursion_error(kind):
    assert structural_em(_nested(kind, 3), _nested(kind, 3)) == 1
    deep = _nested(kind, 2000)
    assert structural_em(deep, GOLD) == 0
    with pytest.raises(SparqlParseError, match="nested 200[0-2] deep, more than the limit of 64"):
        canonical_form(deep)


def test_fragment_normalisation_follows_the_paper():
    assert normalise_fragment("FILTER( ?var2<10000 )") == normalise_fragment("filter(?var2 < 10000)")
    assert normalise_fragment("FILTER(?a>=2&&?b!=3)") == "filter(?a >= 2 && ?b != 3)"
    assert normalise_fragment("?var1  <http://x.org/a_B-c>  ?var2") == "?var1 <http://x.org/a_b-c> ?var2"
    assert normalise_fragment("?var1 wdt:uri1 ?var2") != normalise_fragment("?var2 wdt:uri1 ?var1")


def test_fragment_em_key_and_position_alignment():
    gold = [("We need the capitals", "SELECT ?var1 WHERE {}"), ("A country has a capital", "?var2 wdt:uri1 ?var1"),
            ("Population below 10000", "FILTER(?var3 < 10000)")]
    reordered = [gold[0], gold[2], gold[1]]
    assert fragment_em(reordered, gold, "key") == (3, 3)
    assert fragment_em(reordered, gold, "position") == (1, 3)
    rephrased = [("We want capitals", "select ?var1 where {}"), gold[1], ("Small population", "FILTER(?var3<10000)")]
    assert fragment_em(rephrased, gold, "key") == (1, 3)
    assert fragment_em(rephrased, gold, "position") == (3, 3)
    with pytest.raises(ValueError, match="alignment"):
        fragment_em(gold, gold, "by-magic")


def test_fragment_em_matches_each_predicted_fragment_once():
    """Appendix A pairs fragments one to one: a fragment predicted once matches one of two equal gold fragments
    (a prediction must not be counted for several gold fragments), and predicting it twice cannot match more than
    the gold holds."""
    pair = ("The film has a genre", "?var1 wdt:uri1 ?var2")
    gold = [("We need the films", "SELECT ?var1 WHERE {}"), pair, pair]
    assert fragment_em(gold[:2], gold, "key") == (2, 3)
    assert fragment_em([*gold, pair], gold, "key") == (3, 3)
    assert fragment_em([*gold, pair], gold[:2], "key") == (2, 2)


def test_uri_em_counts_each_field_per_placeholder():
    gold = [{"placeholder": "uri1", "id": "P36", "label": "capital", "description": "seat of government"},
            {"placeholder": "uri2", "id": "P1082", "label": "population", "description": "number of people"}]
    predicted = [{"placeholder": "uri2", "id": "P1083", "label": "Population", "description": "number of people"},
                 {"placeholder": "uri1", "id": "P36", "label": "capital city", "description": "seat of government"}]
    assert uri_em(predicted, gold) == {"id": (1, 2), "label": (1, 2), "description": (2, 2)}


def test_corpus_bleu_is_sacrebleu_with_its_standard_tokeniser():
    """Section 3.5's corpus BLEU through sacreBLEU (13a tokens, case kept, exponential smoothing), not a
    whitespace split of lower-cased text."""
    assert corpus_bleu(["a b c d"], ["a b c d"]) == pytest.approx(1.0)
    # 13a splits punctuation off, so JSON spacing does not count
    assert corpus_bleu(['{"label":"capital"}'], ['{"label": "capital"}']) == pytest.approx(1.0)
    assert corpus_bleu(["The capital of France"], ["the capital of France"]) < 1  # case kept
    # smoothed: a corpus without a shared 4-gram still scores above 0; a shorter one pays the brevity penalty
    assert 0 < corpus_bleu(["a b c x"], ["a b c d"]) < 1
    assert corpus_bleu(["a b"], ["a b c d"]) < corpus_bleu(["a b c d"], ["a b c d"])
    with pytest.raises(ValueError):
        corpus_bleu(["a"], [])


# ------------------------------------------------------------------ canonical labelling (graph canonisation)

P = "<http://example.org/p>"


def _cycles(lengths: list[int]) -> str:
    """Directed cycles of one predicate: every variable has one incoming and one outgoing pattern, so colour
    refinement alone cannot tell two cycle covers of the same size apart."""
    patterns, start = [], 0
    for length in lengths:
        patterns += [f"?n{start + i} {P} ?n{start + (i + 1) % length} ." for i in range(length)]
        start += length
    return "SELECT * WHERE { " + " ".join(patterns) + " }"


def _shuffled_and_renamed(query: str, seed: int) -> str:
    """The query's top-level triple patterns in another order, its variables renamed by a random permutation."""
    rng = random.Random(seed)
    names = sorted(set(re.findall(r"\?(\w+)", query)))
    renamed = dict(zip(names, rng.sample([f"r{i}" for i in range(len(names))], len(names)), strict=True))
    body = query[query.index("{") + 1:query.rindex("}")]
    patterns = [p.strip() for p in body.split(" .") if p.strip()]
    rng.shuffle(patterns)
    text = query[:query.index("{") + 1] + " " + " . ".join(patterns) + " . }"
    return re.sub(r"\?(\w+)", lambda m: "?" + renamed[m.group(1)], text)


def test_same_degree_structures_that_differ_do_not_match():
    assert structural_em(_cycles([3, 3]), _cycles([6])) == 0
    assert structural_em(_cycles([4, 4]), _cycles([3, 5])) == 0
    assert structural_em(_cycles([3, 3]), _cycles([3, 3])) == 1


@pytest.mark.parametrize("seed", range(5))
def test_canonical_form_is_invariant_under_reordering_and_renaming(seed):
    queries = [_cycles([3, 3, 6]), _cycles([2, 4, 5]),
               "SELECT ?a ?c WHERE { ?a wdt:P31 wd:Q5 . ?a wdt:P19 ?b . ?b wdt:P17 ?c . ?c wdt:P31 wd:Q6256 . "
               "?a wdt:P27 ?c . ?d wdt:P19 ?b . ?d wdt:P31 wd:Q5 }"]
    for query in queries:
        assert canonical_form(_shuffled_and_renamed(query, seed)) == canonical_form(query)


def test_a_large_symmetric_query_matches_its_reordering():
    predicted = "SELECT * WHERE { " + " ".join(f"?a{i} {P} ?b{i} ." for i in range(200)) + " }"
    gold = "SELECT * WHERE { " + " ".join(f"?y{i} {P} ?z{i} ." for i in reversed(range(200))) + " }"
    assert structural_em(predicted, gold) == 1
    assert structural_em(predicted.replace("?b199", "?a0"), gold) == 0


def test_query_graph_colours_say_nothing_of_variable_names():
    colours, edges, variables = query_graph(parse_query(GOLD))
    renamed_colours, renamed_edges, _ = query_graph(parse_query(MATCH[0].replace("?z", "?w")))
    assert sorted(colours) == sorted(renamed_colours) and len(edges) == len(renamed_edges)
    assert {v.value for v in variables} == {"a", "b", "c"}
    assert not any("?c" in colour or "?a" in colour for colour in colours)


def test_a_query_over_the_size_limit_scores_not_matched_with_a_counted_warning(monkeypatch):
    big = "SELECT * WHERE { " + " ".join(f"?a {P} ?b{i} ." for i in range(20)) + " }"  # one connected part
    monkeypatch.setattr(structural, "MAX_VERTICES", 40)
    before = structural.over_limit["predicted"]
    with pytest.warns(StructureLimitWarning, match="more than the limit of 40"):
        assert structural_em(big, GOLD) == 0
    assert structural.over_limit["predicted"] == before + 1
    with pytest.raises(StructureLimitError):
        structural_em(GOLD, big)
