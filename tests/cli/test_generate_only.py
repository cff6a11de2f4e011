"""Generation-only runs write final queries without executing them; `runs score` executes and scores them later,
with the same result as a normal run."""

import json

import pytest

from sparqlab.cli import main
from sparqlab.methods import DirectSparql
from sparqlab.runs import RunConfig, run


def test_generate_then_score_later_equals_a_normal_run(tmp_path, monkeypatch, capsys, movies_store):
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    settings = dict(kg="movies", dataset="metaqa-1hop", sample=10, sample_seed=5, model="standin-keyword-rules",
                    progress=False, cache_path=str(tmp_path / "responses.sqlite"))
    generated = run(DirectSparql(), config=RunConfig(experiment="gen", generate_only=True, **settings))
    normal = run(DirectSparql(), config=RunConfig(experiment="normal", **settings))
    assert generated.run_id != normal.run_id  # generation-only is part of the run id
    records = generated.predictions()
    assert records["predicted_sparql"].notna().any()
    assert records["predicted_answers"].isna().all() and records["f1"].isna().all()
    assert set(records["gold_source"]) == {"not executed (generate_only)"}
    assert generated.metrics["n_scored"] == 0

    assert main(["runs", "score", generated.run_id, "--kg", "movies"]) == 0
    assert "scored copy:" in capsys.readouterr().out
    scored_dir = next((generated.run_dir / "scored").iterdir())
    metrics = json.loads((scored_dir / "metrics.json").read_text())
    assert metrics["n_scored"] == 10
    assert (metrics["f1"], metrics["em"], metrics["empty_rate"]) == pytest.approx(
        (normal.metrics["f1"], normal.metrics["em"], normal.metrics["empty_rate"]))
    scored = {r["id"]: r for r in map(json.loads, (scored_dir / "predictions.jsonl").read_text().splitlines())}
    expected = normal.predictions().set_index("id")
    assert {k: r["f1"] for k, r in scored.items()} == pytest.approx(expected["f1"].to_dict())
    assert {k: r["error_type"] for k, r in scored.items()} == expected["error_type"].to_dict()
    assert metrics["error_types"] == normal.metrics["error_types"]


def test_scoring_refuses_records_without_queries(tmp_path, movies_store):
    from sparqlab.kg import open_kg
    from sparqlab.runs.scoring import score_generated

    path = tmp_path / "predictions.jsonl"
    path.write_text(json.dumps({"id": "a", "gold_answers": ["x"]}) + "\n", encoding="utf-8")
    with open_kg("movies") as kg, pytest.raises(ValueError, match="predicted_sparql"):
        score_generated(path, kg)
