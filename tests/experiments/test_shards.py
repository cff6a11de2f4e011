"""A grid cell of ``shards: N`` runs as N shard runs (submitit array tasks, or the local executor's units) that the
last one to finish merges into the cell's run: the same run id and predictions as the unsharded cell, and
`sweep status` shows how many shards are done meanwhile."""

from __future__ import annotations

import json

import pytest

from sparqlab.cli import main
from sparqlab.experiments.executors import run_local, run_submitit
from sparqlab.experiments.grid import GridError, load_grid
from sparqlab.experiments.sweep import grid_status

GRID = """\
    name: sharded
    run: {{limit: 7, cache_path: {cache}, model: standin-keyword-rules}}
    methods:
      direct: {{method: direct, shards: SHARDS}}
    datasets:
      metaqa-1hop: {{dataset: metaqa-1hop}}
    """


def _predictions(run_dir) -> dict:
    """Each question's prediction and scores (an unsharded run writes them in completion order, a merge in
    question order)."""
    lines = [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines()]
    return {r["id"]: (r["predicted_sparql"], r["predicted_answers"], r["f1"], r["em"]) for r in lines}


@pytest.fixture
def unsharded(write_grid, tmp_path, monkeypatch):
    """The cell run whole by the local executor, in a runs root of its own: its run folder."""
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "whole"))
    grid = load_grid(write_grid(GRID.replace("SHARDS", "1"), "whole"))
    assert [o.outcome for o in run_local(grid, grid.cells, workers=0)] == ["ran"]
    [status] = grid_status(grid)
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    return status.run_dir


def test_a_sharded_cell_runs_as_array_tasks_and_merges_into_the_unsharded_run(write_grid, unsharded, capsys):
    path = write_grid(GRID.replace("SHARDS", "3"))
    grid = load_grid(path)
    [cell] = grid.cells
    assert [unit.key for unit in cell.units()] == [f"direct@metaqa-1hop.shard{i}of3" for i in range(3)]
    assert [o.outcome for o in run_local(grid, cell.units()[:1], workers=0)] == ["ran"]  # one shard, in process
    [status] = grid_status(grid)
    assert (status.status, status.shards_done, status.n_done, status.run_dir) == ("incomplete", 1, 3, None)
    assert main(["sweep", "status", str(path)]) == 0
    assert "1/3 shards done" in capsys.readouterr().out

    outcomes = run_submitit(grid, grid.cells, cluster="local")
    assert [o.outcome for o in outcomes] == ["ran"] * 3, [o.reason for o in outcomes]
    assert len({json.loads((grid.state_dir() / f"{u.key}.job.json").read_text())["job_id"]
                for u in cell.units()}) == 3  # one array task per shard
    merged = [o.detail["merged"] for o in outcomes if "merged" in o.detail]
    assert len(merged) == 1, "the last shard to finish merged them, once"
    [status] = grid_status(grid)
    assert (status.status, status.shards_done, status.n_done) == ("done", 3, 7)
    assert str(status.run_dir) == merged[0] and status.run_dir.name == unsharded.name  # the unsharded run id
    assert _predictions(status.run_dir) == _predictions(unsharded)
    assert main(["sweep", "status", str(path)]) == 0
    shown = capsys.readouterr().out
    assert "3/3 shards done" in shown and shown.startswith("done ")


def test_the_local_executor_runs_the_shards_and_merges_them(write_grid, unsharded):
    grid = load_grid(write_grid(GRID.replace("SHARDS", "2")))
    outcomes = run_local(grid, grid.cells, workers=0)
    assert [o.cell.shard_index for o in outcomes] == [0, 1] and "merged" in outcomes[1].detail
    [status] = grid_status(grid)
    assert status.status == "done" and _predictions(status.run_dir) == _predictions(unsharded)


@pytest.mark.parametrize("shards", ["0", "two", "true"])
def test_shards_must_be_a_whole_number(write_grid, shards):
    with pytest.raises(GridError, match="shards must be a whole number >= 1"):
        load_grid(write_grid(GRID.replace("SHARDS", shards)))
