"""Headless reproduction: execute the project's notebooks with papermill.

Every notebook in ``notebooks/`` has a cell tagged ``parameters`` whose defaults need no GPU and no network, so
``sparqlab reproduce`` re-executes all of them on a laptop (from cached model responses where a notebook asks for
replay). Parameters can be overridden, e.g. a real model URL, to run the same notebooks on a GPU endpoint.
"""

from __future__ import annotations

import ast
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparqlab.core.paths import PROJECT_ROOT, runs_dir

NOTEBOOKS_DIR = PROJECT_ROOT / "notebooks"


@dataclass
class NotebookOutcome:
    """How one notebook execution ended: ``error`` is ``None`` on success, else the failing cell's error."""

    notebook: str
    output: Path
    seconds: float
    error: str | None = None

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
        lines = [f"{'ok' if o.ok else 'FAILED':6} {o.notebook:40} {o.seconds:7.1f}s  -> {o.output}" for o in self.outcomes]
        for outcome in self.failed:
            lines.append(f"\n{outcome.notebook} failed:\n{outcome.error}")
        verdict = "all notebooks ran" if not self.failed else f"{len(self.failed)} of {len(self.outcomes)} notebooks failed"
        return "\n".join(lines + [verdict])


def find_notebooks(names: list[str] | None = None, directory: Path = NOTEBOOKS_DIR) -> list[Path]:
    """The notebooks to run: all of ``directory`` in name order, or those named (by file name or stem)."""
    available = sorted(directory.glob("*.ipynb"))
    if not names:
        return available
    chosen = []
    for name in names:
        path = Path(name)
        if path.exists():
            chosen.append(path)
            continue
        matches = [nb for nb in available if nb.name == name or nb.stem == name or nb.stem.startswith(name)]
        if len(matches) != 1:
            known = ", ".join(nb.stem for nb in available)
            raise FileNotFoundError(f"no single notebook matches {name!r}; notebooks: {known}")
        chosen.append(matches[0])
    return chosen


def parse_parameter(text: str) -> Any:
    """A command-line parameter value: a Python literal (``8``, ``0.5``, ``None``, ``['a']``) or a plain string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def execute_notebook(notebook: Path, output_dir: Path, parameters: dict[str, Any] | None = None,
                     kernel_name: str = "python3") -> NotebookOutcome:
    """Run one notebook headless with papermill; the executed copy goes to ``output_dir``."""
    import papermill

    output_dir.mkdir(parents=True, exist_ok=True)
    output = output_dir / notebook.name
    start = time.perf_counter()
    try:
        papermill.execute_notebook(
            str(notebook), str(output), parameters=parameters or {}, kernel_name=kernel_name,
            cwd=str(notebook.parent), progress_bar=False, log_output=False,
        )
    except papermill.PapermillExecutionError as error:
        return NotebookOutcome(notebook.name, output, time.perf_counter() - start,
                               f"cell {error.exec_count}: {error.ename}: {error.evalue}")
    return NotebookOutcome(notebook.name, output, time.perf_counter() - start)


def reproduce(names: list[str] | None = None, parameters: dict[str, Any] | None = None,
              output_dir: Path | None = None) -> ReproduceReport:
    """Execute the chosen notebooks (default: all) and report each outcome; a failure does not stop the rest.

    A parameter a notebook does not declare is ignored by papermill for that notebook (with a warning), so one
    override such as ``model_url`` can be passed to all notebooks.
    """
    output_dir = output_dir or runs_dir() / "notebooks"
    report = ReproduceReport()
    for notebook in find_notebooks(names):
        report.outcomes.append(execute_notebook(notebook, output_dir, parameters))
    return report
