"""Resume: a killed run is continued by the same call, with nothing duplicated or lost."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from runs_helpers import LookupMethod, TinyKG, tiny_questions

from sparqlab.core.files import LinkRefused
from sparqlab.core.jsonl import read_jsonl
from sparqlab.runs import RunConfig, run, run_summary
from sparqlab.runs.store import repair_torn_line

HELPERS = Path(__file__).with_name("runs_helpers.py")


def ids(path):
    return [record["id"] for record in read_jsonl(path)]


def count_lines(path):
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_resume_after_sigkill_has_no_duplicates_and_no_gaps(root):
    n = 30
    proc = subprocess.Popen([sys.executable, str(HELPERS), str(root), str(n), "0.15"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        predictions = None
        while time.monotonic() < deadline and proc.poll() is None:
            found = list(root.glob("kill/*/predictions.jsonl"))
            if found and count_lines(found[0]) >= 8:
                predictions = found[0]
                break
            time.sleep(0.02)
        assert predictions is not None, f"the run did not get going: {proc.stderr.read().decode()[-2000:]}"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    killed_with = ids(predictions)
    assert 8 <= len(killed_with) < n, "the kill should land mid-run"
    manifest = json.loads((predictions.parent / "manifest.json").read_text())
    assert manifest["status"] == "running"
    live = run_summary(predictions.parent)
    assert live["status"] == "interrupted" and live["n_done"] == len(killed_with) and not live["complete"]

    config = RunConfig(experiment="kill", output_root=str(root), concurrency=3, progress=False)
    result = run(LookupMethod(delay_s=0.15), tiny_questions(n), config, kg=TinyKG(n))

    assert result.run_dir == predictions.parent
    final = ids(predictions)
    assert sorted(final) == sorted(f"q{i}" for i in range(n)), "every question exactly once"
    assert final[: len(killed_with)] == killed_with, "finished questions are kept, not redone"
    assert result.answered == n - len(killed_with)
    assert sorted(ids(predictions.parent / "traces.jsonl")) == sorted(final)
    assert result.metrics["complete"] and result.metrics["f1"] == 1.0
    env_file = json.loads((predictions.parent / "environment.json").read_text())
    assert len(env_file["resumes"]) == 1


def test_torn_last_line_and_orphan_trace_are_repaired(root):
    questions, kg = tiny_questions(6), TinyKG(6)
    config = RunConfig(experiment="torn", output_root=str(root), progress=False)
    first = run(LookupMethod(), questions, config, kg=kg)
    pred_path, trace_path = first.run_dir / "predictions.jsonl", first.run_dir / "traces.jsonl"
    lines = pred_path.read_text().splitlines(keepends=True)
    # Keep three whole lines and half of the fourth, as a kill during a write leaves it; the fourth question's
    # trace line was written (trace goes first), the fifth and sixth never finished.
    pred_path.write_text("".join(lines[:3]) + lines[3][: len(lines[3]) // 2])
    traces = trace_path.read_text().splitlines(keepends=True)
    trace_path.write_text("".join(traces[:4]) + traces[4][:10])

    again = run(LookupMethod(), questions, config, kg=kg)
    assert again.answered == 3
    assert sorted(ids(pred_path)) == [q.id for q in questions]
    assert sorted(ids(trace_path)) == [q.id for q in questions]
    assert pred_path.read_text().endswith("\n")
    assert again.metrics["n_done"] == 6 and again.metrics["complete"]


def test_repair_torn_line_cuts_only_the_partial_line(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"id": 1}\n{"id": 2}\n{"id": ')
    assert repair_torn_line(path) is True
    assert path.read_bytes() == b'{"id": 1}\n{"id": 2}\n'
    assert repair_torn_line(path) is False
    path.write_bytes(b'{"id": ')
    assert repair_torn_line(path) is True and path.read_bytes() == b""


@pytest.mark.parametrize("name", [".lock", "predictions.jsonl"])
def test_a_run_folder_holding_a_link_is_refused_and_nothing_is_written_through_it(root, name):
    """A link planted in a run folder (a group-writable runs/, an unpacked archive) would make resume truncate
    the ``.lock``'s target or append predictions outside: the folder is refused, the target left as it was."""
    config = RunConfig(experiment="links", output_root=str(root), progress=False)
    first = run(LookupMethod(), tiny_questions(3), config, kg=TinyKG(3))
    outside = root.parent / "outside.jsonl"
    lines = (first.run_dir / "predictions.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    outside.write_text("".join(lines[:2]), encoding="utf-8")  # sound lines: resume would append the third
    before = outside.read_bytes()
    (first.run_dir / name).unlink()
    (first.run_dir / name).symlink_to(outside)
    with pytest.raises(LinkRefused, match=f"{first.run_dir / name} is a symbolic link"):
        run(LookupMethod(), tiny_questions(3), config, kg=TinyKG(3))
    assert outside.read_bytes() == before
