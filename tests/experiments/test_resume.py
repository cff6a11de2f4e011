"""The local executor survives a kill -9 of the sweep and of one cell: the rerun (or the restarted worker)
resumes every run folder, recomputes no finished question and duplicates no line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from sparqlab.experiments.grid import load_grid
from sparqlab.experiments.sweep import grid_status
from sparqlab.runs.store import is_locked


def _sweep(grid: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "sparqlab", "sweep", str(grid), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _lines(run_dir: Path, name: str) -> list[str]:
    path = run_dir / name
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def _wait_for_progress(root: Path, at_least: int, timeout: float = 240) -> list[Path]:
    """Run folders with at least ``at_least`` prediction lines (and not complete) once some exist."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        started = [d for d in root.glob("slow/*/") if len(_lines(d, "predictions.jsonl")) >= at_least
                   and not (d / "metrics.json").exists()]
        if started:
            return started
        time.sleep(0.1)
    raise AssertionError("no cell made progress in time")


def _check_complete_without_duplicates(grid_path: Path, before: dict[Path, list[str]]) -> None:
    grid = load_grid(grid_path)
    statuses = grid_status(grid)
    assert [s.status for s in statuses] == ["done", "done"], [s.to_dict() for s in statuses]
    for status in statuses:
        predictions = _lines(status.run_dir, "predictions.jsonl")
        ids = [json.loads(line)["id"] for line in predictions]
        assert len(ids) == len(set(ids)) == 6
        traces = [json.loads(line)["id"] for line in _lines(status.run_dir, "traces.jsonl")]
        assert sorted(traces) == sorted(ids)
        metrics = json.loads((status.run_dir / "metrics.json").read_text())
        assert metrics["complete"] and metrics["n_done"] == 6
    for run_dir, lines in before.items():
        # what was finished before the kill is kept as it was (not recomputed): same lines, same order
        assert _lines(run_dir, "predictions.jsonl")[:len(lines)] == lines


def test_a_sweep_killed_with_sigkill_resumes_without_recomputing(slow_grid, isolated_runs):
    sweep = _sweep(slow_grid)
    started = _wait_for_progress(isolated_runs, 2)
    os.kill(sweep.pid, signal.SIGKILL)
    sweep.wait(timeout=30)
    deadline = time.monotonic() + 30  # the workers die with the sweep (PR_SET_PDEATHSIG) and free their folders
    while any(is_locked(d) for d in isolated_runs.glob("slow/*/")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(is_locked(d) for d in isolated_runs.glob("slow/*/"))
    before = {d: _lines(d, "predictions.jsonl") for d in started}
    statuses = {s.run_dir: s for s in grid_status(load_grid(slow_grid)) if s.run_dir}
    for run_dir, lines in before.items():
        assert statuses[run_dir].status == "interrupted" and statuses[run_dir].n_done <= len(lines) < 6
    rerun = _sweep(slow_grid)
    output, _ = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, output
    _check_complete_without_duplicates(slow_grid, before)
    answered = {line.split()[3]: int(line.split()[6]) for line in output.splitlines() if " ran " in line}
    for run_dir, lines in before.items():  # the rerun answered only what was missing
        cell = next(s.cell.key for s in statuses.values() if s.run_dir == run_dir)
        assert answered[cell] <= 6 - len(lines)


def test_a_cell_killed_with_sigkill_is_resumed_by_the_same_sweep(slow_grid, isolated_runs):
    sweep = _sweep(slow_grid, "--workers", "1")
    [run_dir] = _wait_for_progress(isolated_runs, 2)
    worker = int((run_dir / ".lock").read_text())  # the process holding the run folder: the cell's worker
    assert worker != sweep.pid
    before = {run_dir: _lines(run_dir, "predictions.jsonl")}
    os.kill(worker, signal.SIGKILL)
    output, _ = sweep.communicate(timeout=300)
    assert sweep.returncode == 0, output
    assert "2 cells ran, 0 skipped, 0 failed" in output
    _check_complete_without_duplicates(slow_grid, before)
