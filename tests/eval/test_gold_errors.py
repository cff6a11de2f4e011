"""A failure never scores as a match: gold errors are counted and left out of every F1 / EM mean, a prediction
without answers is wrong whatever the gold, SPINACH's ∅ = ∅ is a named rule; and no table averages raw columns."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from sparqlab.eval import answer_means, judged_frame, judged_scores, score_prediction, summarise
from sparqlab.eval.errors import score_and_categorise
from sparqlab.experiments.agents import ablation_table, judged_counts, score_table
from sparqlab.runs.metrics import compute_metrics

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "lib" / "sparqlab"


def record(qid, predicted, gold, source="executed", variant="saga", dataset="d"):
    scores = score_prediction(predicted, gold) if gold is not None else {"f1": None, "em": None, "empty": None}
    return {"id": qid, "variant": variant, "dataset": dataset, "predicted_sparql": None if predicted is None else "Q",
            "predicted_answers": predicted, "gold_answers": gold, "gold_source": source, **scores}


RECORDS = [
    record("answered", ["a"], ["a"]),
    record("gave up on an empty gold", None, []),
    record("empty on an empty gold", [], []),
    record("gold query failed", None, [], source="error: timeout: endpoint timed out"),
    record("gave up", None, ["b"]),
]


def test_giving_up_on_an_empty_gold_answer_is_a_gold_error_not_a_match():
    scores, category = score_and_categorise(None, None, "budget_exhausted", [], "SELECT ...", "executed")
    assert category == "gold_error"
    assert scores["f1"] is None and scores["em"] is None  # not judged (it scored 1.0 before)
    assert score_prediction([], [])["f1"] is None


def test_summaries_leave_gold_errors_out_and_count_a_missing_prediction_as_wrong():
    summary = summarise(RECORDS)
    assert summary["n"] == 2 and summary["f1"] == 0.5 and summary["em"] == 0.5
    metrics = compute_metrics(RECORDS, n_questions=5)
    assert (metrics["n_scored"], metrics["n_gold_errors"], metrics["f1"]) == (2, 3, 0.5)


def test_a_missing_prediction_scores_zero_even_when_its_record_claims_otherwise():
    stale = {**record("gave up", None, ["b"]), "f1": 1.0, "em": True}
    assert judged_scores(stale) == (0.0, False)


def test_the_spinach_convention_and_the_count_rule_are_named_options():
    spinach = [judged_scores(r, "spinach") for r in RECORDS]
    assert spinach == [(1.0, True), (0.0, False), (1.0, True), None, (0.0, False)]
    count = [judged_scores(r, "count") for r in RECORDS]
    assert count == [(1.0, True), (0.0, False), (0.0, False), (0.0, False), (0.0, False)]
    with pytest.raises(ValueError, match="scoring rule"):
        summarise(RECORDS, rule="lenient")


def test_agent_tables_average_the_judged_questions_and_count_the_gold_errors():
    frame = pd.DataFrame(RECORDS + [record("other", ["x"], ["x"], variant="spinach"),
                                    record("other empty", None, [], variant="spinach")])
    table = score_table(frame)
    assert table.loc["saga", ("d", "f1")] == 50.0 and table.loc["spinach", ("d", "em")] == 100.0
    assert ablation_table(frame).loc["saga", "Avg"] == 50.0
    counts = judged_counts(frame)
    assert counts.loc[("saga", "d")].tolist() == [5, 2, 3]
    means = answer_means(frame, "variant")
    assert means.attrs["not_judged"] == 4 and judged_frame(frame).shape[0] == 3


RAW_MEAN = re.compile(r"""(\[\s*["'](f1|em)["']\s*\]|\[\s*\[[^\]]*["'](f1|em)["'][^\]]*\]\s*\])\s*\.mean\(|"""
                      r"""fmean\([^)]*\[["'](f1|em)["']\]|values\s*=\s*\[?["'](f1|em)["']""")


def test_no_table_in_the_library_averages_raw_f1_or_em_columns():
    """Every F1 / EM mean (library tables, figures, the notebook generators) goes through sparqlab.eval.metrics
    (judged_frame / answer_means / summarise)."""
    sources = [*sorted(LIB.rglob("*.py")), *sorted((ROOT / "scripts").glob("make_*.py"))]
    offenders = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
                 for path in sources if path != LIB / "eval" / "metrics.py"
                 for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if RAW_MEAN.search(line)]
    assert offenders == []


def test_the_raw_mean_pattern_finds_the_ways_a_table_could_average_raw_columns():
    for line in ('frame["f1"].mean()', "groups[['f1', 'em']].mean()", 'statistics.fmean(r["f1"] for r in rs)',
                 'frame.pivot_table(index="v", values=["f1", "em"], aggfunc="mean")'):
        assert RAW_MEAN.search(line), line
