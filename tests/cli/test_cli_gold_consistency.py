"""One form, one rule, one normalisation: a failed gold query reads `error: <kind>: <message>` whether a
run or `runs score` executed it; n_gold_errors counts what eval.errors.is_gold_error counts; each answer set of a
question is normalised once for both its scores and its error type."""

from __future__ import annotations

import json

import pytest

from sparqlab.cli import main
from sparqlab.eval import normalise
from sparqlab.eval.errors import categorise, categorise_record, score_and_categorise
from sparqlab.eval.metrics import score_prediction
from sparqlab.kg import open_kg
from sparqlab.methods import DirectSparql
from sparqlab.runs import RunConfig, run
from sparqlab.runs.metrics import compute_metrics
from sparqlab.runs.scoring import score_generated

BROKEN_GOLD = "SELECT ?x WHERE { ?x rdfs:label "


def _records(path):
    return {r["id"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def test_a_failed_gold_query_reads_the_same_from_a_run_and_from_scoring_later(tmp_path, monkeypatch, movies_store):
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({"id": "broken", "text": "who directed Alien", "kg": "movies",
                                     "gold_sparql": BROKEN_GOLD}) + "\n", encoding="utf-8")
    settings = dict(kg="movies", dataset=str(questions), model="standin-keyword-rules", progress=False,
                    cache_path=str(tmp_path / "responses.sqlite"), allow_gold_errors=True)
    normal = run(DirectSparql(), config=RunConfig(experiment="normal", **settings))
    generated = run(DirectSparql(), config=RunConfig(experiment="gen", generate_only=True, **settings))
    assert generated.metrics["n_gold_errors"] == 0  # a generation-only line was not judged
    with open_kg("movies", cache=False) as kg:
        folder, metrics = score_generated(generated.run_dir, kg, progress=False)
    in_run = _records(normal.run_dir / "predictions.jsonl")["broken"]["gold_source"]
    later = _records(folder / "predictions.jsonl")["broken"]["gold_source"]
    assert in_run == later and in_run.startswith("error: syntax_error: ") and len(in_run) > len("error: syntax_error: ")
    assert metrics["n_gold_errors"] == normal.metrics["n_gold_errors"] == 1


def test_n_gold_errors_counts_what_is_gold_error_counts():
    records = [
        {"id": "failed", "gold_answers": None, "gold_source": "error: timeout: slow", "f1": None},
        {"id": "empty", "gold_answers": [], "gold_source": "gold_sparql", "f1": 1.0, "em": True, "empty": True},  # nothing to judge against
        {"id": "none", "gold_answers": None, "gold_source": None, "f1": None},  # no gold at all: no_gold
        {"id": "fine", "gold_answers": ["a"], "gold_source": "given", "f1": 1.0, "em": True, "empty": False},
        {"id": "not-run", "gold_answers": None, "gold_source": "not executed (generate_only)", "f1": None},
    ]
    assert compute_metrics(records, 5)["n_gold_errors"] == 2
    assert [categorise_record(r) for r in records[:3]] == ["gold_error", "gold_error", "no_gold"]


def test_each_answer_set_is_normalised_once(monkeypatch):
    calls = []
    real = normalise.normalise_answer

    def counting(value):
        calls.append(value)
        return real(value)

    monkeypatch.setattr(normalise, "normalise_answer", counting)
    predicted, gold = ["Alien", "Heat", "Ran"], ["alien", "Heat"]
    sparql = "SELECT ?x WHERE { ?x ?p ?o }"
    scores, error_type = score_and_categorise(sparql, predicted, None, gold, sparql, "given")
    assert sorted(calls) == sorted(predicted + gold)  # every answer once, for scores and error type together
    calls.clear()
    assert scores == score_prediction(predicted, gold)
    assert len(calls) == len(predicted + gold)  # score_prediction alone: once each
    calls.clear()
    assert error_type == categorise(sparql, predicted, None, gold, sparql, "given")
    assert len(calls) == len(predicted + gold)  # categorise alone: once each
    assert score_and_categorise(sparql, predicted, None, None) == (None, "no_gold")  # nothing to judge
    assert score_and_categorise(sparql, predicted, None, None, sparql, "error: timeout: t") == (None, "gold_error")
    with pytest.raises(ValueError, match="predicted answers must be a list"):
        score_and_categorise(sparql, "Alien", None, gold)


def test_runs_score_cli_writes_the_same_error_form(tmp_path, monkeypatch, capsys, movies_store):
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(json.dumps({"id": "b", "predicted_sparql": "SELECT ?x WHERE { ?x a mclass:Film } LIMIT 1",
                                       "gold_sparql": BROKEN_GOLD}) + "\n", encoding="utf-8")
    assert main(["runs", "score", str(predictions), "--kg", "movies", "--output", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    line = _records(tmp_path / "out" / "predictions.jsonl")["b"]
    assert line["gold_source"].startswith("error: syntax_error: ") and line["error_type"] == "gold_error"
