"""The paper-table layouts of ``sparqlab.experiments.agents`` on hand-made per-question records."""

import pandas as pd
import pytest

from sparqlab.experiments import agents as experiments


def _records():
    rows = []
    for variant, f1s in (("SPINACH", [1.0, 0.5, 0.0, 1.0]), ("SAGA", [1.0, 1.0, 0.0, 1.0])):
        for i, f1 in enumerate(f1s):
            rows.append({"variant": variant, "dataset": "d1" if i < 2 else "d2", "f1": f1, "em": float(f1 == 1.0),
                         "empty": f1 == 0.0, "answer_form": "ask" if i == 3 else "select",
                         "model_calls": {"controller": 3, "prune": 1} if variant == "SPINACH" else
                         {"controller": 3, "answer_type": 1},
                         "tokens": {"total": 100}, "extra.actions": 3, "extra.blocked": 0, "extra.lookups": 2,
                         "extra.properties_shown": 6, "extra.properties_filtered": 2 if variant == "SAGA" else 0,
                         "extra.properties_pruned": 4 if variant == "SPINACH" else 0})
    return experiments.add_costs(pd.DataFrame(rows))


def test_score_empty_and_boolean_tables():
    frame = _records()
    scores = experiments.score_table(frame)
    assert scores.loc["SPINACH", ("d1", "f1")] == 75.0 and scores.loc["SAGA", ("d1", "em")] == 100.0
    assert list(scores.index) == ["SPINACH", "SAGA"] and list(scores.columns.levels[0]) == ["d1", "d2"]
    assert experiments.empty_rate_table(frame).loc["SAGA", "d2"] == 50.0
    kinds = experiments.boolean_factoid_table(frame)
    assert kinds.loc["SPINACH", ("Boolean", "f1")] == 100.0
    assert kinds.loc["SPINACH", ("Factoid", "f1")] == pytest.approx(50.0)
    assert kinds.loc["SAGA", ("Overall", "em")] == 75.0


def test_cost_table_counts_calls_by_kind_and_per_lookup():
    costs = experiments.cost_table(_records())
    assert costs.loc["SPINACH", "prune calls"] == 1 and costs.loc["SAGA", "prune calls"] == 0
    assert costs.loc["SAGA", "answer_type calls"] == 1 and costs.loc["SAGA", "model calls"] == 4
    assert costs.loc["SAGA", "filtered per lookup"] == 1 and costs.loc["SPINACH", "pruned per lookup"] == 2
    assert costs.loc["SPINACH", "questions"] == 4


def test_coverage_table_averages_seeds_and_reports_their_spread():
    rows = [{"coverage": c, "coverage_seed": s, "dataset": d, "f1": f1}
            for c, s, d, f1 in ((0.5, 0, "a", 1.0), (0.5, 1, "a", 0.0), (0.5, 0, "b", 1.0), (0.5, 1, "b", 1.0),
                                (1.0, 0, "a", 1.0), (1.0, 1, "a", 1.0), (1.0, 0, "b", 0.0), (1.0, 1, "b", 0.0))]
    table = experiments.coverage_table(pd.DataFrame(rows))
    assert list(table.index) == ["50%", "100%"]
    assert table.loc["50%", "a"] == 50.0 and table.loc["50%", "Avg"] == 75.0 and table.loc["50%", "seed sd"] == 25.0
    assert table.loc["100%", "Avg"] == 50.0 and table.loc["100%", "seed sd"] == 0.0
