"""Grids whose jobs start their own model server (``serve:``), through submitit's local executor with the project's
``sparqlab serve-model`` as the served command: real processes on real ports. Covered: a normal job (the server's
log in the job folder, the run ids independent of the port, the server stopped), a server that never answers or
exits at once (one line with the log's tail), a server killed mid-job (the cell stops with the RunAborted message,
the next submission resumes it) and a preempted job (requeued, resumed, a fresh server)."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path

import pytest

from sparqlab.experiments.executors import run_local, run_submitit, slurm_parameters, submit_cells
from sparqlab.experiments.grid import GridError, load_grid
from sparqlab.experiments.model_launcher import LOG_NAME, STATE_NAME
from sparqlab.experiments.sweep import grid_status

SERVED = """\
name: served
run: {limit: LIMIT, concurrency: 1, cache_path: CACHE, model: standin-keyword-rules,
      model_options: {max_retries: 0}}
methods:
  direct: {method: direct}
  direct-reparse2: {method: direct, options: {reparse_attempts: 2}}
datasets:
  metaqa-1hop: {dataset: metaqa-1hop}
serve:
  model: standin-keyword-rules
  command: COMMAND
  gpus: 0
  start_timeout_s: START_TIMEOUT
  stop_grace_s: 5
  timeout_min: 10
  mem_gb: 2
executor:
  slurm: {partition: gpu, cpus_per_task: 1}
"""
SERVE_MODEL = "sparqlab serve-model --model {model} --host {host} --port {port} --delay-ms DELAY"


@pytest.fixture
def served_grid(tmp_path):
    """``served_grid(limit=, delay=, command=, start_timeout=)``: the grid above, loaded."""

    def make(limit=3, delay=0, command=None, start_timeout=120):
        text = SERVED
        for token, value in (("LIMIT", limit), ("CACHE", tmp_path / "responses.sqlite"),
                             ("COMMAND", json.dumps(command or SERVE_MODEL.replace("DELAY", str(delay)))),
                             ("START_TIMEOUT", start_timeout)):
            text = text.replace(token, str(value))
        path = tmp_path / "served.yaml"
        path.write_text(text, encoding="utf-8")
        return load_grid(path)

    return make


def _job_folder(grid, cell) -> Path:
    return Path(json.loads((grid.state_dir() / f"{cell.key}.job.json").read_text())["folder"])


def _lines(run_dir: Path) -> list[str]:
    path = run_dir / "predictions.jsonl"
    return path.read_text().splitlines() if path.exists() else []


def _wait_for(predicate, what: str, limit_s: float = 240):
    """Poll ``predicate`` until it returns something true (the job runs in other processes)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"gave up waiting for {what}")


def _progress(runs: Path, at_least: int):
    return lambda: next((d for d in sorted(runs.glob("served/*/")) if len(_lines(d)) >= at_least), None)


def _dead(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_served_grid_runs_through_submitit_against_its_own_server(served_grid):
    grid = served_grid()
    assert slurm_parameters(grid) == {"slurm_partition": "gpu", "cpus_per_task": 1, "gpus_per_node": 0,
                                      "timeout_min": 10, "mem_gb": 2}
    assert {c.run["model_url"] for c in grid.cells} == {"serve:standin-keyword-rules"}
    outcomes = run_submitit(grid, grid.cells, cluster="local")
    assert [o.outcome for o in outcomes] == ["ran", "ran"], [o.reason for o in outcomes]
    folder = _job_folder(grid, grid.cells[0])
    assert folder == _job_folder(grid, grid.cells[1])  # one job, one server for both cells
    log = (folder / LOG_NAME).read_text()
    assert log.count("starting: sparqlab serve-model --model standin-keyword-rules") == 1
    assert "serving standin-keyword-rules at http://127.0.0.1:" in log and "--- stopped" in log
    assert not (folder / STATE_NAME).exists()
    statuses = grid_status(grid)
    assert [s.status for s in statuses] == ["done", "done"]
    config = json.loads((statuses[0].run_dir / "config.json").read_text())
    assert config["run"]["models"]["model_url"] == "serve:standin-keyword-rules"
    assert config["run"]["execution"]["served_urls"]["standin-keyword-rules"].startswith("http://127.0.0.1:")
    # the same grid through the local executor: one server for the sweep, the same runs (found done)
    assert {o.outcome for o in run_local(grid, grid.cells, workers=0)} == {"ran"}
    assert [s.run_dir for s in grid_status(grid)] == [s.run_dir for s in statuses]


@pytest.mark.parametrize("command, start_timeout, expected", [
    ("python -c \"import time; print('loading weights', flush=True); time.sleep(600)\"",
     1, r"did not answer http://127\.0\.0\.1:\d+/v1/models within 1 s \(stopped\): loading weights \(log: "),
    ("sparqlab serve-model --model standin-no-such-model --port {port}",
     120, r"exited with code \d+ before answering: .*standin-no-such-model"),
])
def test_a_server_that_does_not_start_fails_the_jobs_cells_with_one_line(served_grid, command, start_timeout,
                                                                         expected):
    grid = served_grid(command=command, start_timeout=start_timeout)
    outcomes = run_submitit(grid, grid.cells, cluster="local")
    assert [o.outcome for o in outcomes] == ["failed", "failed"]
    for outcome, status in zip(outcomes, grid_status(grid), strict=True):
        assert "\n" not in outcome.reason and outcome.reason.startswith("ServerStartError: the model server for")
        assert re.search(expected, outcome.reason), outcome.reason
        assert status.status == "failed" and status.reason == outcome.reason
    log = (_job_folder(grid, grid.cells[0]) / LOG_NAME).read_text()
    assert log.count("--- ") == (2 if "sleep" in command else 1)  # the never-ready server was stopped


def test_a_server_killed_mid_job_stops_the_cell_and_the_next_submission_resumes(served_grid, isolated_runs):
    grid = served_grid(limit=6, delay=300)
    [job] = submit_cells(grid, grid.cells, cluster="local")
    run_dir = _wait_for(_progress(isolated_runs, 2), "two answered questions")
    state = json.loads((_job_folder(grid, grid.cells[0]) / STATE_NAME).read_text())
    os.kill(state["pid"], signal.SIGKILL)
    stopped, queued = (entry["failed"] for entry in job.result())
    assert stopped.startswith(f"RunAborted: run {run_dir.name} stopped: ")
    assert "cannot reach the model endpoint http://127.0.0.1:" in stopped
    assert "ServerDied: the model server for 'standin-keyword-rules' exited with code -9 while the job needed it" \
        in queued
    before = _lines(run_dir)
    assert 2 <= len(before) < 6
    assert [s.status for s in grid_status(grid)] == ["failed", "failed"]
    outcomes = run_submitit(grid, grid.cells, cluster="local")
    assert [o.outcome for o in outcomes] == ["ran", "ran"], [o.reason for o in outcomes]
    assert outcomes[0].detail["answered"] == 6 - len(before)
    after = _lines(run_dir)
    assert after[:len(before)] == before and len({json.loads(line)["id"] for line in after}) == len(after) == 6


def test_a_preempted_job_is_requeued_with_a_fresh_server_and_resumes(served_grid, isolated_runs):
    grid = served_grid(limit=6, delay=300)
    cell = grid.cells[0]
    [job] = submit_cells(grid, [cell], cluster="local")
    run_dir = _wait_for(_progress(isolated_runs, 2), "two answered questions")
    first = json.loads((_job_folder(grid, cell) / STATE_NAME).read_text())
    # what Slurm sends the job's task before a preemption or the time limit (submitit's requeue signal)
    os.kill(int((run_dir / ".lock").read_text()), signal.SIGUSR2)
    [result] = job.result()
    assert result["complete"] and result["n_done"] == 6, result
    assert 0 < result["answered"] < 6  # the requeued job answered only what the first attempt had not
    log = (_job_folder(grid, cell) / LOG_NAME).read_text()
    assert log.count("starting: sparqlab serve-model") == 2 and log.count("--- stopped") == 2
    assert _dead(first["pid"])
    lines = _lines(run_dir)
    assert len({json.loads(line)["id"] for line in lines}) == len(lines) == 6


def test_a_bad_serve_block_is_refused_with_the_entry_named(served_grid, write_grid):
    with pytest.raises(GridError, match=r"serve: serve.command .* unknown placeholder 'gpu'"):
        served_grid(command="vllm serve {model} --tp {gpu}")
    with pytest.raises(GridError, match="serve: .*comand"):
        load_grid(write_grid("methods: {{d: {{method: direct}}}}\ndatasets: {{m: {{dataset: metaqa-1hop}}}}\n"
                             "serve: {{model: x, comand: y}}\n"))


def test_every_role_naming_the_served_model_is_sent_to_the_jobs_server(write_grid):
    grid = load_grid(write_grid("""\
        methods:
          ggc: {{method: ggc, model: served/m, model_roles: {{corrector: served/m, judge: {{model: other}}}}}}
          pinned: {{method: direct, model: served/m, model_url: http://elsewhere:8000/v1}}
        datasets: {{m: {{dataset: metaqa-1hop}}}}
        serve: {{model: served/m, command: "vllm serve {{model}} --port {{port}}"}}
        """))
    ggc, pinned = grid.cells
    assert ggc.run["model_url"] == "serve:served/m"
    roles = ggc.run_config().model_roles
    assert (roles["corrector"].model, roles["corrector"].url) == ("served/m", "serve:served/m")
    assert (roles["judge"].model, roles["judge"].url) == ("other", None)
    assert pinned.run["model_url"] == "http://elsewhere:8000/v1"  # a URL of its own is kept
