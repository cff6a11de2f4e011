"""Where each cell of a grid stands, and running one cell.

A cell's run folder is found, without running anything, by matching the ``config.json`` of the folders in the
grid's experiment against the cell: the same method, method config and prompt digests, and the same
result-relevant run settings (:data:`sparqlab.runs.config.NOT_IN_RUN_ID` left out; settings the cell leaves to
the runner, such as the dataset's default split, the environment's model or the KG's answer-match rule, match
whatever the run resolved).
So a cell is "done" whether the sweep ran it or a single ``sparqlab run`` of the same configuration did, and a
cell killed mid-run is found as ``interrupted`` with its progress. A cell that failed before or during its run
leaves a one-line reason in the grid's state folder (``runs/<experiment>/.sweep/<grid>/``), cleared when it
succeeds.

A cell of ``shards: N`` runs as N shard runs (``<run_id>-shard<i>of<N>/``, each found like a cell by its
config plus its shard fields); the shard that completes last merges them into the cell's own run folder
(:func:`merge_when_complete`), which is what makes the cell ``done``. Until then its state is its shards'
(running, failed, ... with "k/N shards done"), and each shard keeps its own failure reason.
"""

from __future__ import annotations

import json
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sparqlab.experiments.grid import Cell, Grid
from sparqlab.runs.config import RUN_FORMAT, RunConfig, identity
from sparqlab.runs.results import UnreadableRunWarning, run_summary
from sparqlab.runs.store import (
    CONFIG,
    MANIFEST,
    RunUnreadable,
    hold_lock,
    is_locked,
    read_document,
    read_json,
    write_json,
)

RESOLVED_BY_RUNNER = frozenset({"kg", "split", "model", "model_url", "answer_match"})
"""Run fields a cell may leave ``None`` for the runner to resolve (from the questions, the dataset, the
environment, the KG profile); such a field matches any resolved value."""

STATUSES = ("done", "running", "interrupted", "incomplete", "failed", "unreadable", "missing")
"""Cell states: ``done`` (run complete), ``running`` (a process holds its folder), ``interrupted`` (killed while
running) / ``incomplete`` (stopped early), both resumable, ``failed`` (last attempt raised; reason kept),
``unreadable`` (a file of its run folder is damaged; the reason names it), ``missing`` (never started).
Progress is counted from the run's prediction lines (:func:`sparqlab.runs.results.run_summary`)."""


@dataclass
class CellStatus:
    """One cell's state: its run folder (if any), progress and the last failure's one-line reason; for a
    sharded cell, how many of its shards are done."""

    cell: Cell
    status: str
    run_dir: Path | None = None
    n_done: int = 0
    n_questions: int | None = None
    reason: str | None = None
    shards_done: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"row": self.cell.row, "dataset": self.cell.dataset, "cell": self.cell.key, "status": self.status,
                "done": self.n_done, "questions": self.n_questions,
                "run": self.run_dir.name if self.run_dir else None, "reason": self.reason,
                "shards": self.cell.shards, "shards_done": self.shards_done}


def _plain(value: Any) -> Any:
    """JSON round trip, so tuples and lists (and int/float keys) compare as ``config.json`` stores them."""
    return json.loads(json.dumps(value, default=str))


def method_signature(cell: Cell) -> dict[str, Any]:
    """What of the method's identity is known before ``prepare``: name, full config and prompt digests."""
    described = cell.build_method().describe()
    return _plain({k: described[k] for k in ("method", "config", "prompts")})


def _matches(stored: dict[str, Any], cell: Cell, signature: dict[str, Any]) -> bool:
    if stored.get("format") != RUN_FORMAT:  # another folder layout: never this cell's run
        return False
    method = stored.get("method") or {}
    if _plain({k: method.get(k) for k in ("method", "config", "prompts")}) != signature:
        return False
    run = stored.get("run") or {}
    execution = run.get("execution") or {}
    shard = (int(execution.get("shard_index") or 0), int(execution.get("num_shards") or 1))
    if shard != ((cell.shard_index, cell.shards) if cell.shard_index is not None else (0, 1)):
        return False  # a shard is not the cell's run (their merge is), nor another shard's
    wanted = RunConfig.flatten(_plain(identity(cell.run_config().resolved(needs_model=False), {}, "")["run"]))
    have = RunConfig.flatten(_plain((stored.get("identity") or {}).get("run") or {}))
    return all(have.get(key) == value for key, value in wanted.items()
               if not (value is None and key in RESOLVED_BY_RUNNER))


def find_cell_run(cell: Cell, signature: dict[str, Any] | None = None) -> Path | None:
    """The run folder of ``cell`` (or of the shard ``cell`` is) in its experiment (the most recently written if
    several match), or None."""
    experiment = cell.run_config().root() / cell.experiment
    if not experiment.is_dir():
        return None
    signature = signature or method_signature(cell)
    found = []
    for config_path in experiment.glob(f"*/{CONFIG}"):
        if not (config_path.parent / MANIFEST).exists():
            continue
        try:
            stored = read_document(config_path)
        except RunUnreadable as error:  # named, and the other folders are still searched
            warnings.warn(f"{error} (that run folder is left out of the search)", UnreadableRunWarning,
                          stacklevel=2)
            continue
        if _matches(stored, cell, signature):
            found.append(config_path.parent)
    return max(found, key=lambda d: (d / MANIFEST).stat().st_mtime) if found else None


def cell_done(cell: Cell) -> bool:
    """Whether the cell's run is complete (a damaged run folder is not: running the cell reports it)."""
    run_dir = find_cell_run(cell)
    if run_dir is None:
        return False
    try:
        return run_summary(run_dir)["status"] == "complete"
    except RunUnreadable:
        return False


def failure_path(grid_state: Path, cell: Cell) -> Path:
    return grid_state / f"{cell.key}.failed.json"


def one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}"[:300]


def record_failure(grid_state: Path, cell: Cell, reason: str) -> None:
    grid_state.mkdir(parents=True, exist_ok=True)
    write_json(failure_path(grid_state, cell), {"cell": cell.key, "reason": reason, "time": time.time()})


def cell_status(grid: Grid, cell: Cell) -> CellStatus:
    """The state of one cell, or of one shard of it (see :data:`STATUSES`)."""
    run_dir = find_cell_run(cell)
    if run_dir is None and cell.shards > 1 and cell.shard_index is None:
        return _shards_status(grid, cell)
    failure = failure_path(grid.state_dir(), cell)
    failed = read_json(failure) if failure.exists() else None
    if run_dir is None:
        return CellStatus(cell, "failed", reason=failed["reason"]) if failed else CellStatus(cell, "missing")
    try:
        summary = run_summary(run_dir)
    except RunUnreadable as error:
        return CellStatus(cell, "unreadable", run_dir, reason=str(error))
    status = {"complete": "done"}.get(summary["status"], summary["status"])
    if failed and status != "running" and failed["time"] >= (run_dir / MANIFEST).stat().st_mtime:
        status = "failed"
    return CellStatus(cell, status, run_dir, summary["n_done"], summary["n_questions"],
                      failed["reason"] if failed and status == "failed" else None,
                      cell.shards if cell.shards > 1 and cell.shard_index is None else None)


def _shards_status(grid: Grid, cell: Cell) -> CellStatus:
    """A sharded cell not merged yet: the most pressing state of its shards (all done: ``incomplete`` until the
    merge), their progress summed, the first shard's reason."""
    shards = [cell_status(grid, shard) for shard in cell.units()]
    present = {shard.status for shard in shards}
    status = next((s for s in ("running", "failed", "unreadable", "interrupted", "incomplete") if s in present),
                  "incomplete" if "done" in present else "missing")
    reason = next((f"shard {s.cell.shard_index}: {s.reason}" for s in shards if s.reason), None)
    known = [s.n_questions for s in shards if s.n_questions is not None]
    return CellStatus(cell, status, None, sum(s.n_done for s in shards),
                      sum(known) if len(known) == len(shards) else None, reason,
                      sum(s.status == "done" for s in shards))


def grid_status(grid: Grid, cells: list[Cell] | None = None) -> list[CellStatus]:
    return [cell_status(grid, cell) for cell in (grid.cells if cells is None else cells)]


def run_cell(cell: Cell, grid_state: str | Path) -> dict[str, Any]:
    """Run (or resume) one cell, or one shard of it: an ordinary :func:`sparqlab.runs.run` of its configuration;
    a shard then merges the cell's shards if it was the last to finish. A failure is recorded for ``sweep
    status`` and raised. Returns the run's folder, id and progress (and ``merged``: the cell's run, for a shard).
    A repeat writes the cell's run group when it completes the last of them (``group``).
    Top-level and given plain data, so executors can pickle it into another process or a Slurm job."""
    from sparqlab.runs import run

    grid_state = Path(grid_state)
    failure_path(grid_state, cell).unlink(missing_ok=True)  # this attempt's outcome replaces the last one's
    try:
        result = run(cell.build_method(), config=cell.run_config())
        merged = merge_when_complete(cell.whole, grid_state) if cell.shard_index is not None else None
        grouped = group_when_complete(cell) if cell.repeats > 1 else None
    except BaseException as error:
        record_failure(grid_state, cell, one_line(error))
        raise
    return {"cell": cell.key, "run_dir": str(result.run_dir), "run_id": result.run_id,
            "answered": result.answered, "n_done": result.metrics["n_done"],
            "complete": bool(result.metrics["complete"]), **({"merged": merged} if merged else {}),
            **({"group": grouped} if grouped else {})}


def group_when_complete(cell: Cell) -> str | None:
    """Write the run group of ``cell``'s repeats once every repeat's run is complete (each repeat that finishes
    rewrites it, so it reflects the latest runs); returns the group folder, or None (not all done yet)."""
    from sparqlab.runs.groups import write_group

    members = [find_cell_run(repeat) for repeat in cell.repeat_cells()]
    if any(member is None or run_summary(member)["status"] != "complete" for member in members):
        return None
    group_dir = cell_group(cell)
    write_group(group_dir, members)
    return str(group_dir)


def cell_group(cell: Cell) -> Path | None:
    """The run group folder of a repeated cell (named after its first repeat's run), ``None`` while that repeat
    has no run; the folder holds ``group.json`` once every repeat is complete."""
    from sparqlab.runs.groups import group_name

    first = find_cell_run(cell.repeat_cells()[0])
    return None if first is None else first.parent / group_name(first.name, cell.repeats)


def merge_when_complete(cell: Cell, grid_state: Path) -> str | None:
    """Merge the shards of ``cell`` into its run once every shard is complete; returns the merged folder, or
    None (not all done yet, or merged already). A lock in the grid's state folder keeps two shards finishing
    at once from both merging."""
    from sparqlab.runs import merge_shards

    with hold_lock(grid_state / f"{cell.key}.merge.lock"):
        if cell_done(cell):
            return None
        shards = [find_cell_run(shard) for shard in cell.units()]
        if any(path is None or is_locked(path) or run_summary(path)["status"] != "complete" for path in shards):
            return None
        return str(merge_shards(shards[0]).target)
