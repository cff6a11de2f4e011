"""``sparqlab eval``: rescoring a predictions file and printing macro metrics."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sparqlab.cli import main
from sparqlab.core.jsonl import write_jsonl

RECORDS = [
    {"id": "q1", "predicted_answers": ["wd:Q1"], "gold_answers": ["http://www.wikidata.org/entity/Q1"],
     "f1": 0.0, "metadata": {"hops": 1}, "tokens": 10},
    {"id": "q2", "predicted_answers": ["a", "b"], "gold_answers": ["b"], "metadata": {"hops": 2}, "tokens": 30},
    {"id": "q3", "predicted_answers": None, "gold_answers": ["c"], "metadata": {"hops": 2}, "tokens": 20},
]


@pytest.fixture
def predictions(tmp_path):
    path = tmp_path / "run" / "predictions.jsonl"
    write_jsonl(path, RECORDS)
    return path


def test_json_output_recomputes_stored_scores(predictions, capsys):
    assert main(["eval", str(predictions), "--format", "json"]) == 0
    table = json.loads(capsys.readouterr().out)
    overall = table["all"]
    assert overall["n"] == 3
    assert overall["f1"] == pytest.approx((1 + 2 / 3 + 0) / 3)  # the stored f1 = 0 of q1 is ignored
    assert overall["em"] == pytest.approx(1 / 3)
    assert overall["empty_rate"] == pytest.approx(1 / 3)
    assert overall["tokens"] == pytest.approx(20)


def test_grouping_by_a_metadata_field(predictions, capsys):
    assert main(["eval", str(predictions.parent), "--by", "hops", "--format", "json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert set(table) == {"1", "2", "all"}
    assert table["2"]["n"] == 2 and table["2"]["f1"] == pytest.approx(1 / 3)
    assert main(["eval", str(predictions), "--by", "metadata.hops", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["1"]["em"] == 1.0


def test_table_output(predictions):
    command = [str(Path(sys.executable).parent / "sparqlab"), "eval", str(predictions), "--by", "hops"]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    assert lines[0].split() == ["hops", "n", "f1", "em", "empty_rate", "precision", "recall", "tokens"]
    assert lines[2].split()[:4] == ["1", "1", "100.0", "100.0"]
    assert lines[-1].split()[:3] == ["all", "3", "55.6"]


def test_records_without_gold_answers_are_counted_not_scored(tmp_path, capsys):
    path = tmp_path / "predictions.jsonl"
    unscored = {"id": "q4", "predicted_answers": ["z"], "gold_answers": None, "f1": None, "metadata": {"hops": 2},
                "tokens": 99}
    write_jsonl(path, [*RECORDS, unscored])
    assert main(["eval", str(path), "--by", "hops", "--format", "json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert table["all"]["n"] == 3 and table["all"]["unscored"] == 1
    assert table["all"]["f1"] == pytest.approx((1 + 2 / 3 + 0) / 3)
    assert table["all"]["tokens"] == pytest.approx(20), "costs are averaged over the scored questions"
    assert table["2"]["unscored"] == 1 and "unscored" not in table["1"]
    assert main(["eval", str(path), "--by", "hops"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["hops", "n", "unscored"]
    assert lines[2].split()[:3] == ["1", "1", "0"] and lines[-1].split()[:3] == ["all", "3", "1"]


def test_clear_errors(tmp_path, capsys):
    assert main(["eval", str(tmp_path / "missing.jsonl")]) == 1
    assert "no predictions file" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    write_jsonl(bad, [{"id": "x", "predicted_answers": ["a"]}])
    assert main(["eval", str(bad)]) == 1
    assert "needs predicted_answers and gold_answers" in capsys.readouterr().err
    write_jsonl(bad, [{"id": "x", "predicted_answers": [["nested"]], "gold_answers": ["a"]}])
    assert main(["eval", str(bad)]) == 1
    assert "bad.jsonl, line 1 (id 'x'): predicted_answers[0] must be a string" in capsys.readouterr().err
