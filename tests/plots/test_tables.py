"""Per-question tables and sweep figures a reader can trust: percent, one missing marker, error categories on
wrong answers, [standin] marks; undefined sweep ratios are gaps, not zeros, and coinciding lines stay visible."""

import math

import pandas as pd

from sparqlab import plots
from sparqlab.methods.ggc.metrics import sweep_long
from sparqlab.plots.tables import COMPACT_COLUMNS, labelled, question_table, run_table

ROWS = [
    {"model": "standin-x", "model_is_standin": True, "dataset": "d", "id": "q1", "question": "Who?", "f1": 0.400432,
     "em": False, "predicted_sparql": "SELECT ?x {}", "error_category": None, "error_type": "semantic:wrong_entity"},
    {"model": "standin-x", "model_is_standin": True, "dataset": "d", "id": "q2", "question": "What?", "f1": None,
     "em": None, "predicted_sparql": float("nan"), "error_category": None, "error_type": None},
    {"model": "standin-x", "model_is_standin": True, "dataset": "d", "id": "q3", "question": "When?", "f1": 1.0,
     "em": True, "predicted_sparql": "SELECT ?y {}", "error_category": None, "error_type": "correct"},
]


def test_question_table_is_compact_in_percent_with_one_missing_marker_and_error_categories():
    html = question_table(pd.DataFrame(ROWS)).to_html()
    assert "40.0" in html and "0.400432" not in html and "100.0" in html
    assert "NaN" not in html and "None" not in html and "nan" not in html
    assert "semantic:wrong_entity" in html and ">no query<" in html, "every wrong answer says why"
    assert html.count("standin-x [standin]") == 3
    shown = question_table(pd.DataFrame(ROWS)).data.columns.tolist()
    assert shown == [c for c in COMPACT_COLUMNS if c in shown] and "predicted_sparql" not in shown
    assert "predicted_sparql" in question_table(pd.DataFrame(ROWS), columns=None).data.columns


def test_run_table_is_compact_and_in_percent():
    runs = pd.DataFrame([{"experiment": "e", "run": "r1", "model": "standin-x [standin]", "f1": 0.625, "em": 0.5,
                          "no_query_rate": None, "tokens_per_q": 731.75}])
    styled = run_table(runs)
    assert styled.data.columns.tolist() == ["run", "model", "f1", "em", "no_query_rate"]
    html = styled.to_html()
    assert "62.5" in html and "50.0" in html and "–" in html and "None" not in html


def test_labelled_tables_carry_the_model_label():
    html = labelled(pd.DataFrame({"F1": [12.345, float("nan")], "rate": [0.25, 0.5]}), "standin-agent [standin]",
                    percent=["rate"]).to_html()
    assert "standin-agent [standin]" in html and "12.35" in html and "–" in html and "25.0" in html


def test_undefined_sweep_ratios_are_gaps_and_coinciding_lines_differ():
    table = pd.DataFrame([
        {"threshold": 0.1, "gate_trigger_rate": 0.3, "gate_precision": 0.2, "gate_recall": 0.5, "gate_f1": 0.29,
         "gate_fpr": 0.3, "accuracy": 0.9, "tp": 5, "fp": 20, "fn": 5, "tn": 70},
        {"threshold": 0.9, "gate_trigger_rate": 0.0, "gate_precision": 0.0, "gate_recall": 0.0, "gate_f1": 0.0,
         "gate_fpr": 0.0, "accuracy": 0.9, "tp": 0, "fp": 0, "fn": 10, "tn": 90},
    ])
    long = sweep_long(table)
    high = long[long["threshold"] == 0.9].set_index("measure")["percent"]
    assert math.isnan(high["gate precision"]) and math.isnan(high["gate F1"])
    assert high["gate recall"] == 0.0 and high["gate FPR"] == 0.0 and high["trigger rate"] == 0.0
    ax = plots.sweep_lines(long, x="threshold", y="percent", hue="measure")
    styles = {(line.get_marker(), str(line.get_linestyle()), line.get_markersize()) for line in ax.lines}
    assert len(ax.lines) == 6 and len(styles) == 6 and len(ax.get_legend().get_texts()) == 6
    assert any("undefined" in text.get_text() for text in ax.texts)
