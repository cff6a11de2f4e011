"""``sparqlab reproduce --executor local|slurm``: the notebooks as scheduled jobs, papermill inside.

Each notebook is one task of one submitit array job (``slurm``; ``local`` is submitit's own local executor: real
job folders and logs on this machine). A job runs :func:`sparqlab.notebooks.execute.reproduce` on its notebooks,
so the executed copies, the figures and the runs land exactly where an in-process ``sparqlab reproduce`` puts
them, and every notebook's state is recorded for ``sparqlab reproduce status``.

The job settings (``--serve FILE.yaml``) hold a grid's ``serve:`` and ``executor:`` blocks (a grid file's work as
they are). With ``serve:`` the notebooks are split over ``serve.jobs`` jobs, each starting one model server that
its notebooks share: they get ``model`` = the served model and ``model_url`` = the server's URL. The Slurm
resources are the grid's: ``executor.slurm``, then the ``serve:`` block's. In process (no ``--executor``) the
server is started here for all the notebooks.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparqlab.experiments.executors import job_executor, job_groups
from sparqlab.experiments.grid import load_job_blocks
from sparqlab.experiments.model_launcher import ServerStartError, ServeSpec, served_model
from sparqlab.experiments.sweep import one_line
from sparqlab.notebooks.execute import (
    STATE_DIR,
    NotebookOutcome,
    ReproduceReport,
    find_notebooks,
    notebook_status,
    record_state,
    reproduce,
    state_folder,
)
from sparqlab.notebooks.parameters import check_parameters
from sparqlab.runs.store import write_json


@dataclass(frozen=True)
class JobSettings:
    """The ``serve:`` and ``executor:`` blocks of reproduce's jobs (what :func:`slurm_parameters` reads)."""

    serve: ServeSpec | None = None
    executor: dict[str, dict[str, Any]] = field(default_factory=dict)


def load_job_settings(path: str | Path) -> JobSettings:
    executor, serve = load_job_blocks(path)
    return JobSettings(serve, executor)


def served_parameters(serve: ServeSpec, url: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """``parameters`` with the notebooks sent to the served model at ``url``."""
    if parameters.get("model") not in (None, serve.model):
        raise ValueError(f"-p model {parameters['model']} is not the served model {serve.model!r}: leave it out "
                         "or serve that model")
    return {**parameters, "model": serve.model, "model_url": url}


def run_notebooks(names: list[str] | None, parameters: dict[str, Any], output_dir: Path,
                  serve: ServeSpec | None = None, folder: Path | None = None,
                  progress: bool = False) -> ReproduceReport:
    """:func:`reproduce` the notebooks, with a ``serve:`` block against one server started for them (log in
    ``folder``). A server that does not start fails every notebook with its one line."""
    if serve is None:
        return reproduce(names, parameters, output_dir, progress)
    try:
        with served_model(serve, folder or output_dir / STATE_DIR / "serve") as server:
            return reproduce(names, served_parameters(serve, server.url, parameters), output_dir, progress)
    except ServerStartError as error:
        reason = one_line(error)
        report = ReproduceReport()
        for notebook in find_notebooks(names):
            record_state(state_folder(output_dir, notebook), "failed", error=reason)
            report.outcomes.append(NotebookOutcome(notebook.name, output_dir / notebook.name, 0.0, reason))
        return report


def _notebooks_job():
    import submitit

    class NotebooksJob(submitit.helpers.Checkpointable):
        """Notebooks as one submitit job; requeued with the same arguments on timeout or preemption (the runs
        inside the notebooks resume from their folders)."""

        def __call__(self, names: list[str], parameters: dict[str, Any], output_dir: str,
                     serve: ServeSpec | None) -> ReproduceReport:
            return run_notebooks(names, parameters, Path(output_dir), serve, submitit.JobEnvironment().paths.folder)

    return NotebooksJob()


def submit_notebooks(names: list[str] | None, parameters: dict[str, Any], output_dir: Path,
                     settings: JobSettings, cluster: str | None = "slurm") -> list[tuple[list[Path], Any]]:
    """Submit the notebooks (default: all) as one array job: a task per notebook, or with ``serve:`` per group
    of :func:`job_groups`. Parameters are checked first; nothing is submitted when one is wrong. Returns each
    task's notebooks and submitit job."""
    notebooks = find_notebooks(names)
    served = served_parameters(settings.serve, settings.serve.endpoint, parameters) if settings.serve else parameters
    check_parameters(notebooks, served)
    groups = job_groups(notebooks, settings.serve)
    executor = job_executor(output_dir / STATE_DIR / "jobs", cluster, "reproduce", settings)
    submitted = time.time()  # before any job can start, so a job's own state is always newer
    with executor.batch():
        jobs = [executor.submit(_notebooks_job(), [str(nb) for nb in group], parameters, str(output_dir),
                                settings.serve) for group in groups]
    for group, job in zip(groups, jobs, strict=True):
        for notebook in group:
            folder = state_folder(output_dir, notebook)
            folder.mkdir(parents=True, exist_ok=True)
            write_json(folder / "job.json", {"job_id": job.job_id, "folder": str(Path(job.paths.folder)),
                                             "submitted": submitted})
    return list(zip(groups, jobs, strict=True))


def collect(submitted: list[tuple[list[Path], Any]], output_dir: Path) -> ReproduceReport:
    """Wait for each job and gather its notebooks' outcomes; a job that died (killed, requeued too often) fails
    its notebooks that had not finished, with submitit's error."""
    report = ReproduceReport()
    for group, job in submitted:
        try:
            report.outcomes.extend(job.result().outcomes)
        except Exception as error:  # submitit's error types for a job that did not return
            reason = one_line(error)
            for notebook in group:
                status = notebook_status(notebook, output_dir)
                if status.status in ("pending", "running"):
                    record_state(state_folder(output_dir, notebook), "failed", error=reason)
                report.outcomes.append(NotebookOutcome(notebook.name, output_dir / notebook.name, status.seconds or 0.0,
                                                       None if status.status == "done" else status.error or reason))
    return report
