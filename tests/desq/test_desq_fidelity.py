"""DeSQ aggregation and scoring as the paper defines them (issue 18, items 17-19; docs/fidelity.md, "DeSQ"):
micro averages over all fragments / URI slots, position alignment when the verbaliser is a model, retrieval over
the whole memory with kind restriction as an option."""

import pandas as pd
import pytest
from desq_helpers import MOVIE_ENTRIES, small_memory

from sparqlab.methods.desq.correction import correct_slots
from sparqlab.methods.desq.fragments import Decomposition, Fragment, Slot, scheme_for
from sparqlab.methods.desq.metrics import micro_scores, score_output, strategy_table
from sparqlab.methods.desq.structured import ParsedOutput
from sparqlab.runs.metrics import compute_metrics

GOLD = Decomposition(
    [Fragment("skeleton", "SELECT DISTINCT ?var1 WHERE {}", "We need ?var1"),
     Fragment("triple", "?var1 uri1 uri2", '?var1 has directed by "Ridley Scott"')],
    [Slot("uri1", "relation/directed_by", "directed_by", "a director of the film"),
     Slot("uri2", "entity/Person/Ridley%20Scott", "Ridley Scott", "director of 12 films")])


def test_fragment_and_uri_em_are_micro_averaged_over_the_test_set():
    """Item 17 (§3.5): one question with 1 slot (wrong), one with 3 (right): 3/4 over slots, 1/2 per question."""
    frame = pd.DataFrame({
        "scores.uri_slots": [1, 3], "scores.none.id_em": [0.0, 1.0], "scores.oracle.id_em": [1.0, 1.0],
        **{f"scores.{s}.{k}": [0, 0] for s in ("oracle", "none") for k in ("final_em", "fixed", "broken")},
        "scores.fragment_em": [0.0, 1.0], "scores.fragment_em_matched": [0, 3], "scores.fragment_em_total": [1, 3]})
    micro = strategy_table(frame, ("none", "oracle"))
    assert micro.loc["none", "id_em_raw"] == pytest.approx(0.75) and micro.attrs["average"] == "micro"
    assert strategy_table(frame, ("none",), average="question").loc["none", "id_em_raw"] == pytest.approx(0.5)
    for name in ("fragment_em_key", "fragment_em_position", "uri_id_em", "uri_label_em", "uri_description_em"):
        frame[f"scores.{name}"], frame[f"scores.{name}_matched"], frame[f"scores.{name}_total"] = [0.0, 1.0], [0, 3], [1, 3]
    table = micro_scores(frame)
    assert table.loc["fragment EM", "micro"] == pytest.approx(0.75)
    assert table.loc["fragment EM", "per question"] == pytest.approx(0.5)
    assert table.loc["URI id EM", "units"] == 4
    records = [{"scores": {"uri_id_em": 0.0, "uri_id_em_matched": 0, "uri_id_em_total": 1}},
               {"scores": {"uri_id_em": 1.0, "uri_id_em_matched": 3, "uri_id_em_total": 3}}]
    scores = compute_metrics(records, 2)["method_scores"]
    assert scores["uri_id_em_micro"] == pytest.approx(0.75) and scores["uri_id_em"] == pytest.approx(0.5)
    assert list(scores)[0] == "uri_id_em_micro"  # the paper's average first


def paraphrased() -> ParsedOutput:
    """The gold fragments and slots, with the atomic constraints worded differently (as a model would)."""
    fragments = [Fragment(f.kind, f.text, f"In other words: {f.constraint}") for f in GOLD.fragments]
    return ParsedOutput(fragments, list(GOLD.slots), [])


def test_position_alignment_scores_a_paraphrasing_verbaliser():
    """Item 18: key alignment cannot match paraphrased constraints; position alignment (reported equivalent in
    §3.5) can, and the score says which alignment was used."""
    memory, scheme = small_memory(MOVIE_ENTRIES), scheme_for("movies")
    options = dict(threshold=0.85, jaccard=0.5, strategies=("none",))
    key = score_output(paraphrased(), GOLD, "SELECT ?x {}", memory, scheme, **options)
    position = score_output(paraphrased(), GOLD, "SELECT ?x {}", memory, scheme, alignment="position", **options)
    assert key["fragment_alignment"] == "key" and key["fragment_em"] == 0.0
    assert position["fragment_alignment"] == "position" and position["fragment_em"] == 1.0
    assert position["fragment_em_key"] == 0.0 and position["fragment_em_position"] == 1.0
    assert (position["fragment_em_matched"], position["fragment_em_total"]) == (2, 2)
    with pytest.raises(ValueError, match="alignment"):
        score_output(paraphrased(), GOLD, "SELECT ?x {}", memory, scheme, alignment="greedy", **options)


@pytest.mark.parametrize("verbaliser, alignment", [("template", "key"), ("model", "position")])
def test_the_method_aligns_by_position_when_the_verbaliser_is_a_model(monkeypatch, verbaliser, alignment):
    from sparqlab.data.question import Question
    from sparqlab.methods.desq import method as desq_method
    from sparqlab.platform.base import MethodOutput

    seen = {}
    monkeypatch.setattr(desq_method, "decompose", lambda *args, **kwargs: GOLD)
    monkeypatch.setattr(desq_method, "score_output", lambda *args, **kwargs: seen.update(kwargs) or {})
    method = desq_method.Desq(verbaliser=verbaliser)
    method.memory = small_memory(MOVIE_ENTRIES)
    question = Question(id="q", text="which films did [Ridley Scott] direct?", kg="movies",
                        gold_sparql="SELECT ?x WHERE { ?x ?p ?o }")
    method.score(question, MethodOutput(None, None, {"structured_output": ""}), None, None)
    assert seen["alignment"] == alignment and seen["restrict_kind"] is False


def test_retrieval_searches_the_whole_memory_unless_restricted_to_the_kind():
    """Item 19: the paper retrieves by label + description over the memory; restricting to the slot's kind is our
    extension (an option)."""
    memory = small_memory(MOVIE_ENTRIES)
    slot = Slot("uri2", "relation/unknown", "Wind", "film (1992) directed by Carroll Ballard")  # used as a property
    kinds = {"uri2": "property"}
    whole = correct_slots([slot], memory, "always-retrieve", kinds=kinds)[0]
    assert whole.final_id == "entity/Film/Wind"
    restricted = correct_slots([slot], memory, "always-retrieve", kinds=kinds, restrict_kind=True)[0]
    assert restricted.final_id.startswith("relation/")
    from sparqlab.methods.desq.method import DesqConfig

    assert DesqConfig().restrict_kind is False


def test_final_query_em_is_scored_on_the_corrected_query():
    """§3.5's final-query EM judges the query each strategy assembles from its corrected slots: a wrong entity id
    the oracle (and round trip) replaces gives final EM 1 there and 0 without correction."""
    from sparqlab.methods.desq.fragments import assemble

    memory, scheme = small_memory(MOVIE_ENTRIES), scheme_for("movies")
    gold_sparql = assemble(GOLD.fragments, GOLD.slots, scheme)
    wrong = [GOLD.slots[0], Slot("uri2", "entity/Person/Tony%20Scott", "Ridley Scott", "director of 12 films")]
    scores = score_output(ParsedOutput(list(GOLD.fragments), wrong, []), GOLD, gold_sparql, memory, scheme,
                          threshold=0.0, jaccard=0.5, strategies=("none", "oracle", "roundtrip-exact"))
    assert scores["none.final_em"] == 0 and scores["none.id_em"] == 0.5
    for strategy in ("oracle", "roundtrip-exact"):
        assert scores[f"{strategy}.final_em"] == 1 and scores[f"{strategy}.id_em"] == 1.0
        assert (scores[f"{strategy}.fixed"], scores[f"{strategy}.broken"]) == (1, 0)


# ---------------------------------------------------------------- §3.5's metrics (first-appearance EM, sacreBLEU)

FIRST = "PREFIX ex: <http://example.org/> "


def test_query_em_names_variables_by_first_appearance_where_structural_em_matches_any_renaming():
    """§3.5: triple order is free and variables are normalised by first appearance; the isomorphism-based
    structural EM (kept as its own metric) also matches a renaming whose first appearances come in another order."""
    from sparqlab.eval.structural import query_em, structural_em

    gold = FIRST + "SELECT ?a WHERE { ?a ex:p ?b . ?a ex:q ?c . FILTER(?b > 1) }"
    same_order = FIRST + "SELECT ?x WHERE { ?x ex:p ?y . FILTER(?y > 1) ?x ex:q ?z }"  # filter moved, names kept
    other_order = FIRST + "SELECT ?x WHERE { ?x ex:q ?z . ?x ex:p ?y . FILTER(?y > 1) }"  # ?z now named before ?y
    assert query_em(same_order, gold) == 1 and structural_em(same_order, gold) == 1
    assert query_em(other_order, gold) == 0 and structural_em(other_order, gold) == 1
    assert query_em(None, gold) == 0 and query_em("SELECT ?x WHERE {", gold) == 0


def test_final_query_em_is_the_first_appearance_em_and_structural_em_is_scored_beside_it():
    """Every strategy's ``final_em`` is §3.5's EM of the assembled query; ``final_structural_em`` is the
    isomorphism-based metric (the earlier final EM)."""
    from sparqlab.methods.desq.fragments import assemble

    memory, scheme = small_memory(MOVIE_ENTRIES), scheme_for("movies")
    gold = Decomposition(
        [Fragment("skeleton", "SELECT ?var1 WHERE {}"), Fragment("triple", "?var1 uri1 ?var2"),
         Fragment("triple", "?var1 uri2 ?var3")],
        [Slot("uri1", "relation/directed_by", "directed_by", "a director of the film"),
         Slot("uri2", "relation/has_tags", "has_tags", "a user tag of the film (topics, people, moods)")])
    gold_sparql = assemble(gold.fragments, gold.slots, scheme)
    swapped = ParsedOutput([gold.fragments[0], gold.fragments[2], gold.fragments[1]], list(gold.slots), [])
    scores = score_output(swapped, gold, gold_sparql, memory, scheme, threshold=0.85, jaccard=0.5,
                          strategies=("none",))
    assert scores["none.final_em"] == 0 and scores["none.final_structural_em"] == 1
    same = score_output(ParsedOutput(list(gold.fragments), list(gold.slots), []), gold, gold_sparql, memory, scheme,
                        threshold=0.85, jaccard=0.5, strategies=("none",))
    assert same["none.final_em"] == 1 and same["none.final_structural_em"] == 1
