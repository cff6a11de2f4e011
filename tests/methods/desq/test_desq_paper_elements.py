"""DeSQ elements the paper reports beside the method (docs/fidelity.md, DeSQ): the direct baseline scored by EM
(RQ1) and Table 2's per-dataset columns."""

import pandas as pd
import pytest
from desq_helpers import MOVIE_ENTRIES, small_memory

from sparqlab.methods.desq.fragments import Decomposition, Fragment, Slot, assemble, scheme_for
from sparqlab.methods.desq.metrics import query_em_table, score_output
from sparqlab.methods.desq.structured import ParsedOutput, output_json

GOLD = "PREFIX ex: <http://example.org/> SELECT ?a WHERE { ?a ex:p ?b . ?a ex:q ?c }"


def test_desq_em_scores_a_direct_run_beside_a_desq_run(monkeypatch, capsys):
    """RQ1: any run's final queries scored by §3.5's EM (and the structural EM), with execution F1 beside it; a
    question without a query scores 0."""
    frame = pd.DataFrame({
        "run": ["direct-1"] * 3 + ["desq-1"] * 2, "model": "m", "dataset": "d",
        "predicted_sparql": [GOLD.replace("?b", "?x"),  # a renaming that keeps first appearances: a match
                             "PREFIX ex: <http://example.org/> SELECT ?a WHERE { ?a ex:q ?c . ?a ex:p ?b }",
                             None, GOLD, GOLD],
        "gold_sparql": [GOLD] * 5, "f1": [1.0, 1.0, 0.0, 1.0, 0.5]})
    table = query_em_table(frame)
    assert table.loc["direct-1", "query_em"] == pytest.approx(1 / 3)
    assert table.loc["direct-1", "structural_em"] == pytest.approx(2 / 3)  # the reordering matches structurally
    assert table.loc["direct-1", "execution_f1"] == pytest.approx(2 / 3) and table.loc["desq-1", "query_em"] == 1
    from sparqlab.cli import main
    from sparqlab.runs import results

    monkeypatch.setattr(results, "load_predictions", lambda run: frame[frame["run"] == run])
    assert main(["desq", "em", "direct-1", "desq-1"]) == 0
    out = capsys.readouterr().out
    assert "direct-1" in out and "0.3333" in out and "query_em" in out


def test_offline_table_has_table_2_s_columns():
    from sparqlab.methods.desq.method import offline_table

    memory, scheme = small_memory(MOVIE_ENTRIES), scheme_for("movies")
    gold = Decomposition([Fragment("skeleton", "SELECT ?var1 WHERE {}", "We need ?var1"),
                          Fragment("triple", "?var1 uri1 uri2", "?var1 directed by Ridley Scott")],
                         [Slot("uri1", "relation/directed_by", "directed_by", "a director of the film"),
                          Slot("uri2", "entity/Person/Ridley%20Scott", "Ridley Scott", "director of 12 films")])
    sparql = assemble(gold.fragments, gold.slots, scheme)
    rows = []
    for slots in (gold.slots, [gold.slots[0], Slot("uri2", "entity/Person/Tony%20Scott", "Tony Scott", "")]):
        scores = score_output(ParsedOutput(list(gold.fragments), list(slots), []), gold, sparql, memory, scheme,
                              threshold=0.85, jaccard=0.5)
        rows.append({**{f"scores.{k}": v for k, v in scores.items()}, "scores.query_em": 1,
                     "scores.structural_em": 1, "scores.gold_output": output_json(gold.fragments, gold.slots),
                     "extra.structured_output": output_json(gold.fragments, slots)})
    table = offline_table({"toy": pd.DataFrame(rows)})
    row = table.loc[("toy", "none")]
    assert row["mapping_em"] == 1 and row["uri_id_em"] == pytest.approx(0.75)
    assert row["uri_label_em"] == pytest.approx(0.75) and row["uri_description_em"] == pytest.approx(0.75)
    assert 0 < row["bleu"] < 1 and row["unknown_slots"] == 0 and {"query_em", "structural_em"} <= set(table)
