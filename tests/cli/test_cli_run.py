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
