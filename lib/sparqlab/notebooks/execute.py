"""Headless reproduction: execute the project's notebooks with papermill (``sparqlab reproduce``).

Every notebook in ``notebooks/`` has a cell tagged ``parameters`` whose defaults need no GPU and no network, so
``sparqlab reproduce`` re-executes all of them on a laptop (from cached model responses where a notebook asks for
replay). Parameters can be overridden, e.g. a real model URL, to run the same notebooks on a GPU endpoint; they are
checked against the declared names and types before any notebook runs (:mod:`.parameters`).

Each execution leaves its state beside the executed copies (``<output dir>/.reproduce/<notebook>/``: running,
done or failed with the failing cell's line, a lock held while it runs), so ``sparqlab reproduce status`` can tell
where every notebook stands, whether it ran here or in a scheduled job (:mod:`.jobs`).
"""

from __future__ import annotations

import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparqlab.core.environment import models_recorded, overrides_announced
from sparqlab.core.labels import noted_models, provenance_line
from sparqlab.core.paths import PROJECT_ROOT, notebooks_dirs, runs_dir, workspace_root
from sparqlab.notebooks.parameters import check_parameters, notebook_parameters
from sparqlab.runs.store import hold_lock, is_locked, read_json, write_json

NOTEBOOKS_DIR = PROJECT_ROOT / "notebooks"
"""The bundled notebooks: each ``.ipynb``, committed without outputs, is its own source (edited in JupyterLab)."""

STATE_DIR = ".reproduce"
"""Under the output folder: one folder per notebook with ``state.json`` (its last execution), ``job.json`` (the
job it was last submitted to) and the ``.lock`` its execution holds; the scheduled jobs' folders in ``jobs/``."""

MODELS_RECORD = "models.jsonl"
"""In a notebook's state folder: the models its last execution's kernel made (``SPARQLAB_MODELS_RECORD``)."""

NOTEBOOK_STATUSES = ("pending", "running", "done", "failed", "missing")
"""``pending``: submitted, not started; ``running``: a process executes it now; ``done`` / ``failed``: how its
last execution ended (a ``running`` state whose process is gone is ``failed``); ``missing``: never executed."""


@dataclass
class NotebookOutcome:
    """How one notebook execution ended: ``error`` is ``None`` on success, else the failing cell's error;
    ``made_from`` says what its outputs were made from (the stand-in banner or the model)."""

    notebook: str
    output: Path
    seconds: float
    error: str | None = None
    made_from: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class ReproduceReport:
    outcomes: list[NotebookOutcome] = field(default_factory=list)

    @property
    def failed(self) -> list[NotebookOutcome]:
        return [o for o in self.outcomes if not o.ok]

    def summary(self) -> str:
        lines = [f"{'ok' if o.ok else 'FAILED':6} {o.notebook:40} {o.seconds:7.1f}s  -> {o.output}"
                 + (f"\n{'':6} {o.made_from}" if o.made_from else "") for o in self.outcomes]
        for outcome in self.failed:
            lines.append(f"\n{outcome.notebook} failed:\n{outcome.error}")
        verdict = ("no notebook ran" if not self.outcomes else "all notebooks ran" if not self.failed
                   else f"{len(self.failed)} of {len(self.outcomes)} notebooks failed")
        return "\n".join(lines + [verdict])


def find_notebooks(names: list[str] | None = None, directories: list[Path] | None = None) -> list[Path]:
    """The notebooks to run: all of them in name order, or those named (by file name or stem, or a path).

    ``directories`` (default :func:`~sparqlab.core.paths.notebooks_dirs`) are searched in order; a notebook in an
    earlier one hides a same-named one in a later one (a workspace's edited copy wins over the bundled one).
    ``FileNotFoundError`` when none is found or a name matches no single notebook, naming where it looked."""
    directories = notebooks_dirs() if directories is None else directories
    available: dict[str, Path] = {}
    for directory in directories:
        for notebook in sorted(directory.glob("*.ipynb")):
            available.setdefault(notebook.name, notebook)
    notebooks = sorted(available.values(), key=lambda nb: nb.name)
    where = " and ".join(str(d) for d in directories)
    if not notebooks:
        raise FileNotFoundError(f"no notebooks (*.ipynb) in {where}")
    if not names:
        return notebooks
    chosen = []
    for name in names:
        path = Path(name)
        if path.suffix == ".ipynb" and path.is_file():
            chosen.append(path)
            continue
        matches = [nb for nb in notebooks if nb.name == name or nb.stem == name or nb.stem.startswith(name)]
        if len(matches) != 1:
            known = ", ".join(nb.stem for nb in notebooks)
            raise FileNotFoundError(f"no single notebook matches {name!r} in {where}; notebooks: {known}")
        chosen.append(matches[0])
    return chosen


def execute_notebook(notebook: Path, output_dir: Path, parameters: dict[str, Any] | None = None,
                     kernel_name: str = "python3", progress: bool = False) -> NotebookOutcome:
    """Run one notebook headless with papermill; the executed copy goes to ``output_dir``.

    ``progress`` shows papermill's per-cell progress bar (on stderr). The copy — also of a failed execution —
    gets static fallbacks for its widget outputs and is signed (:func:`sparqlab.notebooks.static.finish_executed`),
    so JupyterLab shows finished progress bars and nbconvert or GitHub show what the widgets showed. Its first
    cell says what it was made from: the models its kernel made, noted in the notebook's state folder
    (:func:`sparqlab.core.labels.provenance_line`: the stand-in banner, or the model's name).
    """
    import papermill

    from sparqlab.notebooks.static import finish_executed

    output_dir = output_dir.resolve()  # the kernel runs in another folder and writes its models record here
    output_dir.mkdir(parents=True, exist_ok=True)
    output = output_dir / notebook.name
    workspace = workspace_root()
    # a bundled notebook (inside the installed package) runs in the workspace: nothing is written into the package
    cwd = notebook.parent if notebook.resolve().is_relative_to(workspace) else workspace
    record = state_folder(output_dir, notebook) / MODELS_RECORD
    start, error_line = time.perf_counter(), None
    try:
        with overrides_announced(changed_parameters(notebook, parameters or {})), models_recorded(record):
            papermill.execute_notebook(
                str(notebook), str(output), parameters=parameters or {}, kernel_name=kernel_name,
                cwd=str(cwd), progress_bar=progress, log_output=False,
            )
    except papermill.PapermillExecutionError as error:
        error_line = f"cell {error.exec_count}: {cell_error_line(error, output)}"
    made_from = provenance_line(noted_models(record))
    finish_executed(output, made_from)
    return NotebookOutcome(notebook.name, output, time.perf_counter() - start, error_line, made_from)


def changed_parameters(notebook: Path, parameters: dict[str, Any]) -> dict[str, Any]:
    """The overrides that differ from the notebook's declared defaults (what names its figures apart)."""
    declared = notebook_parameters(notebook)
    return {name: value for name, value in parameters.items()
            if name not in declared or declared[name].default != value}


EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Aborted|Failure|Refused|Exit|"
                            r"Interrupt|Timeout|Corrupt)\b(?::.*)?$")
"""The last line of a printed Python traceback: ``package.module.Name: message``."""


def cell_error_line(error, output: Path) -> str:
    """The failing cell's own error line: papermill's ``ename: evalue``, or — when the cell left no error output
    (papermill then says only ``CellExecutionError``) — the last exception line the cell printed on stderr, read
    from the executed copy, so the reason reaches the terminal instead of staying buried in the notebook."""
    if str(error.evalue).strip():
        return f"{error.ename}: {error.evalue}"
    import nbformat

    try:  # found by its execution count: papermill puts a note cell of its own at the top of the copy
        cells = nbformat.read(output, as_version=4).cells
    except (OSError, ValueError):
        return f"{error.ename}: (no message; see {output})"
    cell = next((c for c in cells if c.cell_type == "code" and c.get("execution_count") == error.exec_count), {})
    printed = "".join(o.get("text", "") for o in cell.get("outputs", [])
                      if o.get("output_type") == "stream" and o.get("name") == "stderr")
    lines = [line for line in printed.splitlines() if EXCEPTION_LINE.match(line.strip())]
    return lines[-1].strip() if lines else f"{error.ename}: (no message; see {output})"


def state_folder(output_dir: Path, notebook: str | Path) -> Path:
    return output_dir / STATE_DIR / Path(notebook).stem


def record_state(folder: Path, status: str, **fields: Any) -> None:
    """Write a notebook's ``state.json``; its time orders it against the job it was submitted to."""
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "state.json", {"status": status, **fields, "time": time.time()})


def execute_recorded(notebook: Path, output_dir: Path, parameters: dict[str, Any] | None = None,
                     progress: bool = False) -> NotebookOutcome:
    """:func:`execute_notebook` with its state recorded for ``sparqlab reproduce status``."""
    folder = state_folder(output_dir, notebook)
    with hold_lock(folder / ".lock"):  # a second execution into the same folder waits
        record_state(folder, "running")
        outcome = execute_notebook(notebook, output_dir, parameters, progress=progress)
        record_state(folder, "done" if outcome.ok else "failed", error=outcome.error,
                     seconds=round(outcome.seconds, 1), made_from=outcome.made_from)
    return outcome


@dataclass
class NotebookStatus:
    """Where one notebook stands (:data:`NOTEBOOK_STATUSES`), with its last error line and job."""

    notebook: str
    status: str
    error: str | None = None
    seconds: float | None = None
    job_id: str | None = None
    job_folder: str | None = None


def notebook_status(notebook: Path, output_dir: Path | None = None) -> NotebookStatus:
    """The state of ``notebook``'s execution into ``output_dir`` (default: runs/notebooks)."""
    folder = state_folder(output_dir or runs_dir() / "notebooks", notebook)
    job = read_json(folder / "job.json") if (folder / "job.json").exists() else {}
    state = read_json(folder / "state.json") if (folder / "state.json").exists() else None
    found = NotebookStatus(notebook.name, "missing", job_id=job.get("job_id"), job_folder=job.get("folder"))
    if is_locked(folder):
        found.status = "running"
    elif job and (state is None or state["time"] < job["submitted"]):
        found.status = "pending"
    elif state is not None:
        found.status, found.error, found.seconds = state["status"], state.get("error"), state.get("seconds")
        if found.status == "running":  # its process is gone without recording the end
            found.status = "failed"
            found.error = "stopped while running (killed, timed out or preempted?)" + (
                f"; job log in {found.job_folder}" if found.job_folder else "")
    return found


def reproduce(names: list[str] | None = None, parameters: dict[str, Any] | None = None,
              output_dir: Path | None = None, progress: bool = False) -> ReproduceReport:
    """Execute the chosen notebooks (default: all) and report each outcome; a failure does not stop the rest.

    ``parameters`` are checked against every chosen notebook's declarations first (:func:`check_parameters`);
    nothing runs when one is wrong. ``progress`` prints ``[i/n] name`` with the elapsed time per notebook on
    stderr and shows a per-cell bar.
    """
    checked = check_parameters(find_notebooks(names), parameters or {})
    return execute_all(checked, output_dir or runs_dir() / "notebooks", progress)


def execute_all(checked: dict[Path, dict[str, Any]], output_dir: Path, progress: bool = False,
                notes: dict[str, str] | None = None) -> ReproduceReport:
    """Execute each notebook of ``checked`` with its (checked) parameters, in order, recording each state; with
    ``progress``, ``[i/n] name`` lines on stderr, the first one with the notebook's entry of ``notes``."""
    report = ReproduceReport()
    for position, (notebook, parameters) in enumerate(checked.items(), 1):
        if progress:
            note = f" ({notes[notebook.stem]})" if notes and notebook.stem in notes else ""
            print(f"[{position}/{len(checked)}] {notebook.name}{note} ...", file=sys.stderr, flush=True)
        outcome = execute_recorded(notebook, output_dir, parameters, progress=progress)
        if progress:
            print(f"[{position}/{len(checked)}] {notebook.name} {'ok' if outcome.ok else 'FAILED'} in "
                  f"{outcome.seconds:.1f}s", file=sys.stderr, flush=True)
        report.outcomes.append(outcome)
    return report
