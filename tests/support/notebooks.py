"""Headless notebook runs as a user starts them: ``sparqlab reproduce`` in a subprocess, with runs, figures and
the cache in the test's temporary folder (so a test never reads or writes the project's own), and readers of what
the executed notebooks printed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat


def isolated_env(tmp_path: Path, cache: Path | None = None) -> dict[str, str]:
    """The environment of a run whose runs, figures and cache live under ``tmp_path`` (``cache``: another cache
    folder, e.g. a session-wide one), offline."""
    return {**os.environ, "SPARQLAB_RUNS": str(tmp_path / "runs"), "SPARQLAB_FIGURES": str(tmp_path / "figures"),
            "SPARQLAB_CACHE": str(cache or tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}


def with_movie_store(tmp_path: Path) -> Path:
    """A private cache holding a copy of the built movie KG store, so a notebook does not rebuild it."""
    from sparqlab.graphs.movies import ensure_store

    store = ensure_store()
    shutil.copytree(store.parent, tmp_path / "cache" / "kg" / store.parent.name)
    return tmp_path / "cache"


@dataclass
class Reproduced:
    """The outcome of one ``sparqlab reproduce`` call: its process and the executed notebooks."""

    process: subprocess.CompletedProcess
    output_dir: Path

    def notebook(self, name: str) -> nbformat.NotebookNode:
        return nbformat.read(self.output_dir / f"{name}.ipynb", as_version=4)

    def code_cells(self, name: str) -> list[nbformat.NotebookNode]:
        return [cell for cell in self.notebook(name).cells if cell.cell_type == "code"]

    def text(self, name: str) -> str:
        """Everything the notebook's code cells printed or displayed as text."""
        return "\n".join(str(output.get("text", "")) + str(output.get("data", {}).get("text/plain", ""))
                         for cell in self.code_cells(name) for output in cell.get("outputs", []))


def reproduce(tmp_path: Path, *notebooks: str, parameters: dict[str, str] | None = None,
              cache: Path | None = None, output_dir: Path | None = None, timeout: float = 600,
              progress: bool = False, check: bool = True) -> Reproduced:
    """Run ``sparqlab reproduce NOTEBOOK… -p NAME VALUE…`` isolated under ``tmp_path``; with ``check``, a failing
    run fails the test with the tail of its output."""
    output_dir = output_dir or tmp_path / "runs" / "notebooks"
    args = [item for name, value in (parameters or {}).items() for item in ("-p", name, value)]
    process = subprocess.run([sys.executable, "-m", "sparqlab", "reproduce", *notebooks, *args,
                              *([] if progress else ["--no-progress"]), "--output-dir", str(output_dir)],
                             capture_output=True, text=True, env=isolated_env(tmp_path, cache), timeout=timeout)
    if check:
        assert process.returncode == 0, process.stderr[-3000:] + process.stdout[-3000:]
    return Reproduced(process, output_dir)
