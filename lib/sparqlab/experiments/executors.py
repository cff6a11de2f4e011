"""Running a grid's cells: on this machine (``local``) or through submitit on a Slurm cluster (``slurm``).

Both run :func:`sparqlab.experiments.sweep.run_cell` per cell, so a cell is the same ordinary, resumable run
either way and the metrics do not depend on the executor. Cells already done are skipped; cells another process
holds right now (``running``) are left alone; every other cell runs and resumes from what its folder holds. A
cell of ``shards: N`` runs as N units, one per shard (in the worker pool, or as N array tasks); the last shard
to finish merges them into the cell's run.

- ``local``: ``workers`` processes (default: one per core, at most one per cell), each running one cell at a
  time with the cell's own ``concurrency`` questions in flight. The workers die with the sweep (Linux
  ``PR_SET_PDEATHSIG``), so a ``kill -9`` of the sweep leaves no orphan holding a run folder; a worker killed on
  its own breaks the pool, which is restarted for the cells not finished yet (they resume). ``workers=0`` runs
  the cells one after the other in this process (no process start-up; notebooks).
- ``slurm``: one submitit job per cell (or shard), submitted as one array job (``executor.slurm`` of the grid:
  partition, time, GPUs, CPUs, memory, array parallelism), job folders and logs in the grid's state folder beside
  the run folders. A job is :class:`submitit.helpers.Checkpointable`: on a timeout or preemption it is requeued
  and resumes its run; a job killed otherwise resumes when the sweep is submitted again. ``cluster="local"`` uses
  submitit's own local executor (real job folders, pickled calls, logs) for tests and single machines.

A grid with a ``serve:`` block (:mod:`sparqlab.experiments.model_launcher`) brings its own model server: on Slurm the
cells are split over ``serve.jobs`` jobs, each starting one server (log in its job folder) that all its cells
share, one cell after the other; locally the sweep starts one server that every worker calls. A server that does
not start fails the job's cells with one line and the log's tail; one that dies mid-job stops the running cell
with the run's ``RunAborted`` message and fails the job's remaining cells; the next submission resumes them.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any, TypeVar

from sparqlab.core.extras import require
from sparqlab.core.registry import Registry
from sparqlab.experiments.grid import Cell, Grid
from sparqlab.experiments.model_launcher import ServerStartError, ServeSpec, served_model
from sparqlab.experiments.sweep import cell_done, failure_path, grid_status, one_line, record_failure, run_cell
from sparqlab.runs.store import write_json

T = TypeVar("T")

Executor = Callable[..., list["CellOutcome"]]
"""``executor(grid, cells, *, workers, wait, report) -> outcomes`` of the cells to run."""

EXECUTORS: Registry[Executor] = Registry("executor")
"""Grid executors by name: ``local`` and ``slurm`` here; a plug-in may add one (``sparqlab sweep --executor``)."""

SLURM_PARAMETERS = {"partition": "slurm_partition", "timeout_min": "timeout_min", "gpus_per_node": "gpus_per_node",
                    "cpus_per_task": "cpus_per_task", "mem_gb": "mem_gb",
                    "array_parallelism": "slurm_array_parallelism", "account": "slurm_account",
                    "qos": "slurm_qos", "constraint": "slurm_constraint",
                    "additional": "slurm_additional_parameters"}
"""Grid ``executor.slurm`` keys -> submitit parameters (submitit ignores ``slurm_*`` on its local executor)."""


@dataclass
class CellOutcome:
    """What happened to one cell in this sweep: ``ran`` (with the run's summary), ``skipped`` (already done or
    held by another process) or ``failed`` (with the one-line reason)."""

    cell: Cell
    outcome: str
    detail: dict[str, Any] | None = None
    reason: str | None = None


Report = Callable[[CellOutcome], None]


def plan(grid: Grid, cells: list[Cell]) -> tuple[list[Cell], list[CellOutcome]]:
    """The cells to run and the outcomes of those skipped (done, or being run by another process)."""
    todo, skipped = [], []
    for status in grid_status(grid, cells):
        if status.status in ("done", "running"):
            skipped.append(CellOutcome(status.cell, "skipped", reason=status.status))
        else:
            todo.append(status.cell)
    return todo, skipped


def units(cells: list[Cell]) -> list[Cell]:
    """What the executors run: every cell, a sharded one as its shards (:meth:`Cell.units`)."""
    return [unit for cell in cells for unit in cell.units()]


def _die_with_parent(parent: int) -> None:
    """Worker initialiser: be killed when the sweep process dies (even by SIGKILL), on Linux."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the sweep died before the signal was armed
        os._exit(1)


def with_served_url(cell: Cell, serve: ServeSpec, url: str) -> Cell:
    """``cell`` calling ``serve.model`` at ``url`` (the server this job or sweep started)."""
    served = {**(cell.run.get("served_urls") or {}), serve.model: url}
    return dataclasses.replace(cell, run={**cell.run, "served_urls": served})


def run_local(grid: Grid, cells: list[Cell], workers: int | None = None, report: Report | None = None,
              max_restarts: int = 3) -> list[CellOutcome]:
    """Run ``cells`` on this machine with ``workers`` processes (see the module docstring); with a ``serve:``
    block, against one model server started for them."""
    cells = units(cells)
    if grid.serve is None or not cells:
        return _run_local(grid, cells, workers, report, max_restarts)
    try:
        with served_model(grid.serve, grid.state_dir() / "serve") as server:
            served = [with_served_url(cell, grid.serve, server.url) for cell in cells]
            return _run_local(grid, served, workers, report, max_restarts)
    except ServerStartError as error:
        return _fail_all(grid.state_dir(), cells, one_line(error), report)


def _fail_all(state: Path, cells: list[Cell], reason: str, report: Report | None) -> list[CellOutcome]:
    outcomes = []
    for cell in cells:
        record_failure(state, cell, reason)
        outcomes.append(CellOutcome(cell, "failed", reason=reason))
        (report or (lambda o: None))(outcomes[-1])
    return outcomes


def _run_local(grid: Grid, cells: list[Cell], workers: int | None, report: Report | None,
               max_restarts: int) -> list[CellOutcome]:
    report = report or (lambda outcome: None)
    state = grid.state_dir()
    if workers is None:
        workers = int((grid.executor.get("local") or {}).get("workers") or os.cpu_count() or 1)
    outcomes = []
    if workers == 0:
        for cell in cells:
            outcomes.append(_outcome(state, cell, lambda c=cell: run_cell(c, state)))
            report(outcomes[-1])
        return outcomes
    pending = list(cells)
    restarts = 0
    while pending:
        context = get_context("spawn")
        with ProcessPoolExecutor(min(workers, len(pending)), mp_context=context, initializer=_die_with_parent,
                                 initargs=(os.getpid(),)) as pool:
            futures = {pool.submit(run_cell, cell, state): cell for cell in pending}
            broken = []
            for future in as_completed(futures):
                cell = futures[future]
                if isinstance(future.exception(), BrokenProcessPool):
                    broken.append(cell)
                    continue
                outcomes.append(_outcome(state, cell, future.result))
                report(outcomes[-1])
        pending = broken
        if pending:
            restarts += 1
            if restarts > max_restarts:
                for cell in pending:
                    reason = "a worker process died (killed?) while this cell was queued or running"
                    record_failure(state, cell, reason)
                    outcomes.append(CellOutcome(cell, "failed", reason=reason))
                    report(outcomes[-1])
                break
    return outcomes


def _outcome(state: Path, cell: Cell, call: Callable[[], dict[str, Any]]) -> CellOutcome:
    """Call ``call`` (the cell's run, here or in a worker or job); a failure is an outcome, and is recorded for
    ``sweep status`` unless ``run_cell`` recorded its more precise reason already (a killed job records none)."""
    try:
        return CellOutcome(cell, "ran", detail=call())
    except Exception as error:
        reason = one_line(error)
        if not failure_path(state, cell).exists():
            record_failure(state, cell, reason)
        return CellOutcome(cell, "failed", reason=reason)


def _checkpointable_job():
    import submitit

    class CellJob(submitit.helpers.Checkpointable):
        """A cell as a submitit job; on timeout or preemption submitit requeues it with the same arguments,
        and the run resumes from its folder."""

        def __call__(self, cell: Cell, grid_state: str) -> dict[str, Any]:
            return run_cell(cell, grid_state)

    return CellJob()


def run_served_cells(cells: list[Cell], grid_state: str | Path, serve: ServeSpec,
                     folder: str | Path) -> list[dict[str, Any]]:
    """A job with its own model server: start it (log in ``folder``), run the cells not done yet one after the
    other against it, stop it. Returns one entry per cell: ``run_cell``'s summary, ``{"cell", "skipped"}`` or
    ``{"cell", "failed": reason}`` (recorded for ``sweep status`` too)."""
    results: list[dict[str, Any]] = []
    todo = []
    for cell in cells:
        if cell_done(cell):
            results.append({"cell": cell.key, "skipped": "done"})
        else:
            todo.append(cell)
    if not todo:
        return results
    try:
        with served_model(serve, folder) as server:
            for cell in todo:
                if not server.alive():
                    reason = one_line(server.death())
                    record_failure(Path(grid_state), cell, reason)
                    results.append({"cell": cell.key, "failed": reason})
                    continue
                try:
                    results.append(run_cell(with_served_url(cell, serve, server.url), grid_state))
                except Exception as error:  # recorded by run_cell; the job goes on with its other cells
                    results.append({"cell": cell.key, "failed": one_line(error)})
    except ServerStartError as error:
        reason = one_line(error)
        for cell in todo:
            record_failure(Path(grid_state), cell, reason)
            results.append({"cell": cell.key, "failed": reason})
    return results


def _served_job():
    import submitit

    class ServedCellsJob(submitit.helpers.Checkpointable):
        """Cells with the job's own model server as one submitit job; requeued on timeout or preemption with
        the same arguments (done cells are skipped, the others resume)."""

        def __call__(self, cells: list[Cell], grid_state: str, serve: ServeSpec) -> list[dict[str, Any]]:
            return run_served_cells(cells, grid_state, serve, submitit.JobEnvironment().paths.folder)

    return ServedCellsJob()


def job_groups(items: list[T], serve: ServeSpec | None) -> list[list[T]]:
    """The cells (or notebooks) of each job: one per job, or with a ``serve:`` block ``serve.jobs`` groups
    (round robin), each sharing its job's server."""
    if serve is None:
        return [[item] for item in items]
    count = min(serve.jobs, len(items))
    return [items[i::count] for i in range(count)]


def slurm_parameters(jobs: Grid | Any) -> dict[str, Any]:
    """The submitit parameters of the jobs of ``jobs`` (a grid, or reproduce's job settings: anything with the
    grid's ``executor`` and ``serve``): ``executor.slurm``, then the ``serve:`` block's resources."""
    settings = jobs.executor.get("slurm") or {}
    parameters = {SLURM_PARAMETERS[key]: value for key, value in settings.items()}
    return {**parameters, **(jobs.serve.slurm_parameters() if jobs.serve else {})}


def job_executor(folder: Path, cluster: str | None, name: str, jobs: Grid | Any) -> Any:
    """A submitit executor with job folders ``folder/<job id>`` and the Slurm parameters of ``jobs``.
    ``cluster``: ``slurm``, ``local`` (submitit's local executor) or ``None`` (submitit picks)."""
    require("cluster", what="submitting jobs (submitit)")
    import submitit

    try:
        executor = submitit.AutoExecutor(folder=folder / "%j", cluster=cluster)
    except RuntimeError as error:  # e.g. no srun/sbatch on this machine
        raise ValueError(f"cannot submit to {cluster or 'a cluster'}: {error} — submit from a login node of "
                         "the cluster, or use the local executor") from error
    executor.update_parameters(name=name, **slurm_parameters(jobs))
    return executor


def submit_cells(grid: Grid, cells: list[Cell], cluster: str | None = "slurm") -> list[Any]:
    """Submit the cells' jobs (:func:`job_groups`) as an array job; returns the submitit jobs, one per group."""
    executor = job_executor(grid.state_dir() / "jobs", cluster, f"sweep-{grid.name}", grid)
    groups = job_groups(units(cells), grid.serve)
    state = str(grid.state_dir())
    with executor.batch():
        if grid.serve is None:
            job = _checkpointable_job()
            jobs = [executor.submit(job, cell, state) for [cell] in groups]
        else:
            job = _served_job()
            jobs = [executor.submit(job, group, state, grid.serve) for group in groups]
    for group, submitted in zip(groups, jobs, strict=True):
        for cell in group:
            write_json(grid.state_dir() / f"{cell.key}.job.json",
                       {"cell": cell.key, "job_id": submitted.job_id, "folder": str(Path(submitted.paths.folder))})
    return jobs


def run_submitit(grid: Grid, cells: list[Cell], cluster: str | None = "slurm", wait: bool = True,
                 report: Report | None = None) -> list[CellOutcome]:
    """Submit ``cells`` and (with ``wait``) collect each job's result as it finishes."""
    report = report or (lambda outcome: None)
    jobs = submit_cells(grid, cells, cluster)
    groups = job_groups(units(cells), grid.serve)
    outcomes = []
    for group, job in zip(groups, jobs, strict=True):
        if not wait:
            found = [CellOutcome(cell, "submitted", detail={"job_id": job.job_id}) for cell in group]
        elif grid.serve is None:
            found = [_outcome(grid.state_dir(), group[0], job.result)]
        else:
            found = _served_outcomes(grid.state_dir(), group, job)
        for outcome in found:
            outcomes.append(outcome)
            report(outcome)
    return outcomes


def _served_outcomes(state: Path, group: list[Cell], job: Any) -> list[CellOutcome]:
    """The outcome of each cell of a served job (the job failing as a whole fails every cell)."""
    try:
        results = {entry["cell"]: entry for entry in job.result()}
    except Exception as error:  # killed, or requeued too often: submitit's error
        reason = one_line(error)
        for cell in group:
            if not failure_path(state, cell).exists():
                record_failure(state, cell, reason)
        return [CellOutcome(cell, "failed", reason=reason) for cell in group]
    outcomes = []
    for cell in group:
        entry = results[cell.key]
        if "failed" in entry:
            outcomes.append(CellOutcome(cell, "failed", reason=entry["failed"]))
        elif "skipped" in entry:
            outcomes.append(CellOutcome(cell, "skipped", reason=entry["skipped"]))
        else:
            outcomes.append(CellOutcome(cell, "ran", detail=entry))
    return outcomes


def run_grid(grid: Grid, cells: list[Cell] | None = None, executor: str = "local", workers: int | None = None,
             wait: bool = True, report: Report | None = None) -> list[CellOutcome]:
    """Run the cells of ``grid`` not done yet (all cells by default) with an executor of :data:`EXECUTORS`
    (``local``, ``slurm``); the outcomes of skipped cells come first."""
    run_cells = EXECUTORS.get(executor)
    todo, skipped = plan(grid, grid.cells if cells is None else cells)
    for outcome in skipped:
        (report or (lambda o: None))(outcome)
    return skipped + run_cells(grid, todo, workers=workers, wait=wait, report=report)


EXECUTORS.register("local", lambda grid, cells, *, workers, wait, report: run_local(grid, cells, workers, report))
EXECUTORS.register("slurm", lambda grid, cells, *, workers, wait, report: run_submitit(grid, cells, "slurm", wait=wait,
                                                                                     report=report))
