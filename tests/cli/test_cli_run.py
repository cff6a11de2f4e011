"""`sparqlab run` from the command line: shards, merge, and resuming the merged run."""

import json

import pytest

from sparqlab.cli import main


@pytest.fixture(autouse=True)
def isolated_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    return tmp_path / "runs"


def run_cli(*extra):
    return main(["run", "direct", "-d", "metaqa-1hop", "--limit", "12", "-m", "standin-keyword-rules",
                 "-e", "cli", *extra])


def predictions(folder):
    return [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]


def test_sharded_cli_runs_merge_into_the_unsharded_run(isolated_runs, capsys):
    assert run_cli("--shard-index", "0", "--num-shards", "2") == 0
    assert run_cli("--shard-index", "1", "--num-shards", "2") == 0
    shards = sorted((isolated_runs / "cli").iterdir())
    assert [len(predictions(s)) for s in shards] == [6, 6]
    run_id = shards[0].name.split("-shard")[0]
    assert main(["runs", "merge", f"cli/{run_id}"]) == 0
    merged = predictions(isolated_runs / "cli" / run_id)
    assert sorted(r["id"] for r in merged) == sorted(r["id"] for s in shards for r in predictions(s))
    capsys.readouterr()
    assert run_cli() == 0  # the unsharded run finds the merged folder: nothing left to answer
    assert "12/12 done, 0 answered now" in capsys.readouterr().out


def test_method_options_must_be_name_value(capsys):
    assert run_cli("-o", "reparse_attempts") == 1
    assert "NAME=VALUE" in capsys.readouterr().err


def test_unknown_method_is_a_clear_error(capsys):
    assert main(["run", "nope", "-d", "metaqa-1hop", "-m", "standin-echo"]) == 1
    assert "unknown method 'nope'" in capsys.readouterr().err


def test_dry_run_prints_the_plan_without_calling_a_model_or_querying_the_kg(isolated_runs, monkeypatch, capsys):
    """`--dry-run` resolves the model, roles, KG and questions and checks the method, but no model is called and
    the KG answers no query (counted at the model's and the KG's public doors); the same command without it
    does both, so the counters see what a run does."""
    from sparqlab.kg.base import KnowledgeGraph
    from sparqlab.llm import CachedModel

    calls = {"model": 0, "kg": 0}

    def counted(kind, real):
        def wrapper(*args, **kwargs):
            calls[kind] += 1
            return real(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(CachedModel, "acomplete", counted("model", CachedModel.acomplete))
    monkeypatch.setattr(KnowledgeGraph, "query", counted("kg", KnowledgeGraph.query))
    command = ["run", "direct", "-d", "metaqa-1hop", "--limit", "12", "-m", "standin-keyword-rules", "-e", "dry",
               "--select", "answerable"]
    assert main([*command, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert calls == {"model": 0, "kg": 0}
    assert not (isolated_runs / "dry").exists()
    assert "model      standin-keyword-rules" in out and "roles      generator=standin-keyword-rules" in out
    assert "questions  12 of 12, from metaqa-1hop split test" in out
    assert "select=answerable runs every gold query on the KG: not in a dry run" in out
    assert main(command) == 0
    assert calls["model"] > 0 and calls["kg"] > 0


def test_dry_run_refuses_a_method_that_cannot_answer_the_questions(capsys):
    assert main(["run", "genop", "-d", "metaqa-1hop", "--limit", "2", "-m", "standin-keyword-rules",
                 "--dry-run"]) == 1
    assert "genop cannot answer these questions" in capsys.readouterr().err
