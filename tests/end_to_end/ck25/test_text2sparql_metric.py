"""The official TEXT2SPARQL metric: flattening, trec_eval's set measures and nDCG, the client's means."""

from __future__ import annotations

import math

import pytest

from sparqlab.text2sparql.metric import (
    OfficialScore,
    flatten_result,
    gold_relevance,
    ndcg,
    official_scores,
    summarise_official,
)


def _select(vars_, rows):
    return {"head": {"vars": vars_},
            "results": {"bindings": [{k: {"type": "literal", "value": v} for k, v in row.items()} for row in rows]}}


def test_flatten_takes_every_projected_variable_and_ask_as_true():
    result = _select(["x", "label"], [{"x": "a", "label": "A"}, {"x": "b"}, {"x": "a", "label": "A"}])
    assert flatten_result(result) == {"a": 1, "A": 1, "b": 1}
    assert flatten_result({"head": {}, "boolean": False}) == {"true": 0}
    assert flatten_result(None) == {}


def test_set_measures_follow_trec_eval():
    score = official_scores({"a": 1, "b": 1, "c": 1}, {"a": 1, "b": 1, "d": 1, "e": 0})
    assert (score.set_P, score.set_recall) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert score.set_F == pytest.approx(2 / 3)
    assert official_scores({}, {}).set_F == 0.0  # both empty: 0, unlike our default F1
    assert official_scores({"x": 1}, {}).set_P == 0.0


def test_ask_cases_differ_from_default_f1():
    from sparqlab.eval import set_f1

    gold_false = gold_relevance(["false"], "ask")
    assert official_scores({"true": 0}, gold_false).set_F == 0.0  # a right "false" scores 0 ...
    assert set_f1(["false"], ["false"]) == 1.0  # ... where our default F1 gives 1
    # a predicted false still retrieves the key "true": against a true gold it scores 1
    assert official_scores({"true": 0}, gold_relevance(["true"], "ask")).set_F == 1.0


def test_ndcg_ranks_ties_by_descending_value():
    # every score is 1: the ranking is c, b, a (descending); only "a" is relevant, at rank 3
    assert ndcg({"a": 1, "b": 1, "c": 1}, {"a": 1}) == pytest.approx(1 / math.log2(4))
    assert ndcg({"z": 1, "b": 1}, {"z": 1, "b": 1}) == pytest.approx(1.0)
    assert ndcg({"a": 1}, {}) == 0.0
    assert official_scores({"a": 1}, {"a": 1}, order_matters=True).ndcg == 1.0


def test_summary_reproduces_the_clients_combined_mean():
    scores = {"q1": OfficialScore(1.0, 1.0, 1.0), "q2": OfficialScore(0.5, 0.5, 0.5, ndcg=0.2)}
    summary = summarise_official(scores)
    assert summary["set_F"] == pytest.approx(0.75)
    assert summary["ndcg"] == pytest.approx(0.2)
    assert summary["set_F_ndcg"] == pytest.approx((1.0 + 0.2 + 0.2) / 3)  # the client's n + 1 terms
    strict = summarise_official(scores, convention="text2sparql-strict")
    assert strict["set_F_ndcg"] == pytest.approx((1.0 + 0.2) / 2)  # the plain mean over the questions
