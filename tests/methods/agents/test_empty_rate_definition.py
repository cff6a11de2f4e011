"""The empty-result rate is taken over generated queries (SAGA, Experiments "Metrics": "the
proportion of generated queries that return no answer"); questions without a final query are a separate rate."""

import pandas as pd
import pytest

from sparqlab.eval import score_prediction
from sparqlab.eval.metrics import summarise
from sparqlab.experiments import agents as experiments


def _records():
    """Four questions: answered, empty answer, failed-to-execute query, no query at all."""
    return [
        {"id": "a", "predicted_sparql": "SELECT ?x {}", **score_prediction(["x"], ["x"])},
        {"id": "b", "predicted_sparql": "SELECT ?y {}", **score_prediction([], ["x"])},
        {"id": "c", "predicted_sparql": "SELECT ?z {", **score_prediction(None, ["x"])},
        {"id": "d", "predicted_sparql": None, **score_prediction(None, ["x"])},
    ]


def test_summary_rates_over_generated_queries_and_no_query_separately():
    summary = summarise(_records())
    assert summary["empty_rate"] == pytest.approx(2 / 3)  # b and c among the three generated queries
    assert summary["no_query_rate"] == pytest.approx(1 / 4)
    assert summary["empty_rate_all"] == pytest.approx(3 / 4)  # the earlier rate over all questions
    nothing = summarise([{"predicted_sparql": None, **score_prediction(None, ["x"])}])
    assert nothing["empty_rate"] is None and nothing["no_query_rate"] == 1.0
    answers_only = summarise([{k: v for k, v in r.items() if k != "predicted_sparql"} for r in _records()])
    assert answers_only["empty_rate"] == pytest.approx(3 / 4) and answers_only["no_query_rate"] is None


def test_table_4_layout_counts_generated_queries_and_reports_no_query_beside_it():
    frame = pd.DataFrame([{**r, "variant": "SAGA", "dataset": "d"} for r in _records()])
    assert experiments.empty_rate_table(frame).loc["SAGA", "d"] == pytest.approx(66.7)
    assert experiments.no_query_table(frame).loc["SAGA", "d"] == 25.0
    assert experiments.empty_rate_table(frame, over="all").loc["SAGA", "d"] == 75.0
