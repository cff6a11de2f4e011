"""Damaged lines in a run folder: resume names each one (file, line number, what is wrong), sets it aside in
``<file>.damaged``, answers its question again and keeps every other line; nothing damaged is counted."""

from __future__ import annotations

import json
import warnings

import pytest
from runs_helpers import LookupMethod, TinyKG, tiny_questions

from sparqlab.core.jsonl import read_jsonl
from sparqlab.runs import RunConfig, run

N = 6


@pytest.fixture
def finished(root):
    """A finished run of six questions, with its folder, predictions and traces paths."""
    config = RunConfig(experiment="damage", output_root=str(root), progress=False)
    result = run(LookupMethod(), tiny_questions(N), config, kg=TinyKG(N))
    return config, result.run_dir / "predictions.jsonl", result.run_dir / "traces.jsonl"


def _replace_line(path, number: int, raw: bytes) -> bytes:
    """Put ``raw`` in place of line ``number`` (1-based); return the line it replaced."""
    lines = path.read_bytes().split(b"\n")
    old, lines[number - 1] = lines[number - 1], raw
    path.write_bytes(b"\n".join(lines))
    return old


def _resume(config):
    """Resume the run; its result and the text of the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run(LookupMethod(), tiny_questions(N), config, kg=TinyKG(N))
    assert any(w.category.__name__ == "DamagedLinesWarning" for w in caught)
    return result, "\n".join(str(w.message) for w in caught)


@pytest.mark.parametrize(("damage", "problem"), [
    (b'{"id": "q3", "question": "What \xff\xfe", "f1": 1.0}', "not UTF-8 (byte 0xff at column 32)"),
    (b'["q3", "an array, not an object"]', "expected a JSON object, got an array"),
    (b'{"id": "q3"}', "missing fields question, predicted_sparql"),
    (b'{"id": "q3", "question": "', "not valid JSON"),
])
def test_a_damaged_line_is_named_set_aside_and_its_question_redone(finished, damage, problem):
    config, predictions, _ = finished
    original = _replace_line(predictions, 4, damage)
    result, message = _resume(config)

    assert f"{predictions}:4: {problem}" in message
    assert "answered again" in message and "keeps the other 5 lines" in message
    assert result.answered == 1, "only the damaged line's question is redone; the rest are kept"
    final = list(read_jsonl(predictions))
    assert sorted(r["id"] for r in final) == [f"q{i}" for i in range(N)]
    assert result.metrics["n_done"] == N and result.metrics["f1"] == 1.0
    aside = predictions.with_name("predictions.jsonl.damaged")
    assert aside.read_bytes() == damage + b"\n", "the damaged line is kept as it was"
    assert original not in aside.read_bytes()


@pytest.mark.parametrize(("field", "value", "problem"), [
    ("f1", 50, "f1 is 50, outside [0, 1]"),  # a hand edit: 50 instead of 0.5
    ("latency_s", 1e308, "latency_s must be in [0, 3.1536e+07]; got 1e+308"),  # overflows every listing's sum
    ("latency_s", -1e9, "latency_s must be in [0, 3.1536e+07]; got -1000000000.0"),
])
def test_an_impossible_score_or_time_is_damage_not_a_result(finished, field, value, problem):
    config, predictions, _ = finished
    lines = predictions.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record[field] = value
    _replace_line(predictions, 2, json.dumps(record).encode())
    result, message = _resume(config)
    assert f"{predictions}:2: {problem} (question {record['id']})" in message
    assert result.answered == 1 and result.metrics["f1"] == 1.0


def test_a_damaged_trace_line_is_named_and_the_prediction_kept(finished):
    config, predictions, traces = finished
    _replace_line(traces, 2, b"\x00\x01binary\xff")
    result, message = _resume(config)
    assert f"{traces}:2: not UTF-8" in message and "prediction is kept" in message
    assert result.answered == 0 and result.metrics["n_done"] == N
    assert traces.with_name("traces.jsonl.damaged").exists()


def test_several_damaged_lines_are_each_named(finished):
    config, predictions, _ = finished
    _replace_line(predictions, 2, b"garbage")
    _replace_line(predictions, 5, b"[1, 2]")
    result, message = _resume(config)
    assert "2 damaged lines" in message
    assert f"{predictions}:2: not valid JSON" in message and f"{predictions}:5: expected a JSON object" in message
    assert result.answered == 2 and result.metrics["complete"]
