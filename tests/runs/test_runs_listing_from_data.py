"""Listings come from the data: `runs list`, `runs show` and `runs compare` recompute counts and scores from
``predictions.jsonl`` (never trusting ``metrics.json`` or the manifest's counts), name any file they cannot read
and list the other runs; an impossible value is an error naming the file and line."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import pytest
from runs_helpers import LookupMethod, TinyKG, tiny_questions

from sparqlab.cli import main
from sparqlab.runs import RunConfig, list_runs, run

N = 20
WRONG = {f"q{i}": "wrong" for i in range(0, N, 3)}


def _run(root, experiment: str, variant: str = "a"):
    config = RunConfig(experiment=experiment, output_root=str(root), progress=False, concurrency=1)
    return run(LookupMethod(behaviour=WRONG, variant=variant), tiny_questions(N), config, kg=TinyKG(N + 1))


def _row(root, folder):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = list_runs(root)
    (row,) = [r for r in rows if r["run"] == folder.name]
    return row, [str(w.message) for w in caught]


def test_a_cut_predictions_file_is_listed_as_it_is(root):
    result = _run(root, "cut")
    predictions = result.run_dir / "predictions.jsonl"
    before, _ = _row(root, result.run_dir)  # fills the listing cache
    assert before["status"] == "complete" and before["done"] == f"{N}/{N}"
    kept = predictions.read_text(encoding="utf-8").splitlines(keepends=True)[:9]
    predictions.write_text("".join(kept), encoding="utf-8")

    after, _ = _row(root, result.run_dir)
    assert after["done"] == f"9/{N}" and after["status"] == "incomplete"
    f1 = [json.loads(line)["f1"] for line in kept]
    assert after["f1"] == pytest.approx(sum(f1) / len(f1))


def test_one_unreadable_folder_is_named_and_the_others_listed(root):
    good = _run(root, "many", "a").run_dir
    broken_config = _run(root, "many", "b").run_dir
    broken_manifest = _run(root, "many", "c").run_dir
    (broken_config / "config.json").write_text('{"run": {"limit": ', encoding="utf-8")
    (broken_manifest / "manifest.json").write_bytes(b"\xff\xfe garbage")

    rows = {r["run"]: r for r in list_runs(root)}
    assert rows[good.name]["status"] == "complete" and rows[good.name]["done"] == f"{N}/{N}"
    for folder, name in ((broken_config, "config.json"), (broken_manifest, "manifest.json")):
        assert rows[folder.name]["status"] == "unreadable"
        assert str(folder / name) in rows[folder.name]["errors"]

    listed = subprocess.run([sys.executable, "-m", "sparqlab", "runs", "list", "--root", str(root)],
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0
    assert good.name in listed.stdout and "unreadable" in listed.stdout
    assert f"sparqlab runs: warning: {broken_config / 'config.json'} cannot be read" in listed.stderr
    assert f"sparqlab runs: warning: {broken_manifest / 'manifest.json'} cannot be read" in listed.stderr


def test_an_impossible_score_is_an_error_naming_the_file_and_line(root, capsys):
    result = _run(root, "edited")
    predictions = result.run_dir / "predictions.jsonl"
    lines = predictions.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[4])
    record["f1"] = 50
    lines[4] = json.dumps(record)
    predictions.write_text("\n".join(lines) + "\n", encoding="utf-8")

    row, messages = _row(root, result.run_dir)
    assert row["status"] == "unreadable" and row["f1"] is None
    assert any(f"{predictions}:5: f1 is 50, outside [0, 1]" in m for m in messages)
    assert main(["runs", "show", str(result.run_dir)]) == 1
    assert f"{predictions}:5: f1 is 50" in capsys.readouterr().err


def test_compare_names_a_damaged_run_and_shows_the_other(root, capsys):
    first = _run(root, "pair", "a").run_dir
    second = _run(root, "pair", "b").run_dir
    with (second / "predictions.jsonl").open("ab") as handle:
        handle.write(b'["an array line"]\n')
    assert main(["runs", "compare", str(first), str(second)]) == 0
    captured = capsys.readouterr()
    assert "unreadable" in captured.out and "no paired comparison" in captured.out
    assert f"{second / 'predictions.jsonl'}:{N + 1}: expected a JSON object, got an array" in captured.out
