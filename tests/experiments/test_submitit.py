"""The Slurm path through submitit's own local executor (real job folders, pickled calls, logs): the metrics
equal the local executor's, and a job killed mid-run resumes when the sweep is submitted again."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from sparqlab.experiments.executors import run_local, run_submitit, slurm_parameters, submit_cells
from sparqlab.experiments.grid import load_grid
from sparqlab.experiments.sweep import grid_status

TIMING = {"wall_time_s", "latency_s", "updated", "model_cache_last_session", "role_cache_last_session"}


def _comparable(metrics: dict) -> dict:
    kept = {k: v for k, v in metrics.items() if k not in TIMING}
    kept["usage"] = {k: v for k, v in metrics["usage"].items() if k != "latency_s"}
    kept["usage"]["per_question"] = {k: v for k, v in metrics["usage"]["per_question"].items() if k != "latency_s"}
    kept["prepare"] = {k: v for k, v in metrics["prepare"].items() if k != "wall_s"}
    return kept


def _answers(run_dir) -> dict:
    lines = [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines()]
    return {r["id"]: (r["predicted_sparql"], r["predicted_answers"], r["f1"], r["em"]) for r in lines}


def test_submitit_jobs_give_the_local_executors_metrics(write_grid, tmp_path, monkeypatch):
    text = """\
        name: same
        run: {{limit: 4, cache_path: {cache}, model: standin-keyword-rules}}
        methods:
          direct: {{method: direct}}
          direct-reparse0: {{method: direct, options: {{reparse_attempts: 0}}}}
        datasets:
          metaqa-1hop: {{dataset: metaqa-1hop}}
          mcqa-movies: {{dataset: mcqa-movies, split: test}}
        executor:
          slurm: {{partition: gpu, timeout_min: 5, cpus_per_task: 1, array_parallelism: 2}}
        """
    grid_path = write_grid(text)
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "local"))
    local_grid = load_grid(grid_path)
    assert {o.outcome for o in run_local(local_grid, local_grid.cells, workers=0)} == {"ran"}
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "slurm"))
    # the jobs call the model themselves, not a cache the local run filled (cache_path is not in the run id)
    grid = load_grid(grid_path, {"cache_path": str(tmp_path / "jobs-responses.sqlite")})
    assert slurm_parameters(grid) == {"slurm_partition": "gpu", "timeout_min": 5, "cpus_per_task": 1,
                                      "slurm_array_parallelism": 2}
    outcomes = run_submitit(grid, grid.cells, cluster="local")
    assert [o.outcome for o in outcomes] == ["ran"] * 4, [o.reason for o in outcomes]
    local = {s.cell.key: s for s in grid_status(local_grid)}
    for status in grid_status(grid):
        assert status.status == "done"
        twin = local[status.cell.key].run_dir
        assert status.run_dir.name == twin.name  # the same run id
        assert _comparable(json.loads((status.run_dir / "metrics.json").read_text())) == \
            _comparable(json.loads((twin / "metrics.json").read_text()))
        assert _answers(status.run_dir) == _answers(twin)
        job = json.loads((grid.state_dir() / f"{status.cell.key}.job.json").read_text())
        folder = grid.state_dir() / "jobs" / job["job_id"]
        assert folder.is_dir() and list(folder.glob("*_log.out")) and list(folder.glob("*_result.pkl"))


def test_a_killed_job_resumes_when_the_sweep_is_submitted_again(slow_grid, isolated_runs):
    grid = load_grid(slow_grid)
    cell = grid.cells[0]
    [job] = submit_cells(grid, [cell], cluster="local")
    deadline = time.monotonic() + 240
    run_dir = None
    while time.monotonic() < deadline:
        found = [d for d in isolated_runs.glob("slow/*/") if (d / "predictions.jsonl").exists()
                 and len((d / "predictions.jsonl").read_text().splitlines()) >= 2]
        if found:
            run_dir = found[0]
            break
        time.sleep(0.1)
    assert run_dir is not None, "the job made no progress"
    os.kill(int((run_dir / ".lock").read_text()), signal.SIGKILL)  # the job's process
    with pytest.raises(Exception):  # noqa: B017 - submitit reports the killed job with its own error types
        job.result()
    before = (run_dir / "predictions.jsonl").read_text().splitlines()
    [status] = grid_status(grid, [cell])
    assert status.status == "interrupted" and status.run_dir == run_dir
    [outcome] = run_submitit(grid, [cell], cluster="local")
    assert outcome.outcome == "ran" and outcome.detail["answered"] == 6 - len(before)
    after = (run_dir / "predictions.jsonl").read_text().splitlines()
    assert after[:len(before)] == before and len({json.loads(line)["id"] for line in after}) == len(after) == 6


def test_the_slurm_executor_without_slurm_says_what_to_do(write_grid):
    import shutil

    if shutil.which("srun") or shutil.which("sbatch"):
        pytest.skip("this machine has Slurm")
    grid = load_grid(write_grid("methods: {{direct: {{method: direct}}}}\ndatasets: {{m: {{dataset: metaqa-1hop}}}}\n"))
    with pytest.raises(ValueError, match="cannot submit to slurm: .* or use the local executor"):
        run_submitit(grid, grid.cells, cluster="slurm")
    assert not list(grid.state_dir().glob("*.job.json"))
