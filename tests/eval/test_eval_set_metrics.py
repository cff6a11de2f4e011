"""SAGA's set F1 / EM / empty rate, the per-record scorer and the macro summary."""

from __future__ import annotations

import pytest

from sparqlab.eval import score_prediction, set_f1, set_scores, summarise
from sparqlab.kg.results import XSD, Term


def test_set_f1_is_dice_overlap_of_sets():
    # |Â| = 3, |A*| = 2, overlap 1: F1 = 2*1 / (3+2)
    assert set_f1(["a", "b", "c"], ["c", "d"]) == pytest.approx(0.4)
    score = set_scores(["a", "b", "c"], ["c", "d"])
    assert (score.precision, score.recall) == pytest.approx((1 / 3, 1 / 2))


def test_set_f1_edge_cases():
    assert set_f1([], []) == 1.0
    assert set_f1([], ["a"]) == 0.0
    assert set_f1(["a"], []) == 0.0
    assert set_f1(None, ["a"]) == 0.0


def test_duplicates_and_surface_variants_collapse_before_counting():
    pred = [Term("literal", "1", XSD + "integer"), Term("literal", "1.0", XSD + "decimal"), "1"]
    assert set_f1(pred, ["1"]) == 1.0
    assert set_f1(["a", "a", "b"], ["a", "b"]) == 1.0


def test_ask_answers():
    assert set_f1({"true"}, [True]) == 1.0
    assert set_f1({"false"}, ["true"]) == 0.0


def test_score_prediction_fields():
    assert score_prediction(["a", "b"], ["a"]) == {
        "f1": pytest.approx(2 / 3), "em": False, "empty": False, "precision": 0.5, "recall": 1.0}
    assert score_prediction(["a"], ["a"])["em"] is True
    missing = score_prediction(None, ["a"])
    assert missing["empty"] is True and missing["f1"] == 0.0
    assert score_prediction(["false"], ["false"])["empty"] is False
    with pytest.raises(ValueError, match="without gold answers"):
        score_prediction(["a"], None)


def test_summarise_macro_averages_and_costs():
    records = [
        {"id": "1", **score_prediction(["a"], ["a"]), "model_calls": {"generate": 2, "reparse": 1},
         "tokens": {"prompt": 100, "completion": 20, "total": 120}, "latency_s": 1.0},
        {"id": "2", **score_prediction(["a", "b"], ["b", "c"]), "model_calls": 1, "tokens": 80, "latency_s": 3.0},
        {"id": "3", **score_prediction(None, ["x"]), "model_calls": 2, "tokens": 40, "latency_s": 2.0},
    ]
    summary = summarise(records)
    assert summary["n"] == 3
    assert summary["f1"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert summary["em"] == pytest.approx(1 / 3)
    assert summary["empty_rate"] == pytest.approx(1 / 3)
    assert summary["model_calls"] == pytest.approx((3 + 1 + 2) / 3)
    assert summary["tokens"] == pytest.approx((120 + 80 + 40) / 3)
    assert summary["latency_s"] == pytest.approx(2.0)


def test_summarise_counts_cost_dicts_without_a_total_like_the_run_totals():
    from sparqlab.llm import aggregate_usage

    records = [{"f1": 1.0, "em": True, "empty": False, "tokens": {"prompt": 10, "completion": 2, "estimated": True}},
               {"f1": 0.0, "em": False, "empty": True, "tokens": {"prompt": 4, "completion": 0, "total": 4}}]
    assert summarise(records)["tokens"] == pytest.approx((12 + 4) / 2), "the estimated flag is not a token"
    assert summarise(records)["tokens"] == aggregate_usage(records)["per_question"]["tokens"]


def test_summarise_leaves_out_costs_some_records_lack():
    summary = summarise([{"f1": 1.0, "em": True, "empty": False, "tokens": 5}, {"f1": 0.0, "em": False, "empty": True}])
    assert "tokens" not in summary and "precision" not in summary
    assert summarise([]) == {"n": 0}
    with pytest.raises(ValueError, match="lacks"):
        summarise([{"id": "q", "f1": 1.0}])
