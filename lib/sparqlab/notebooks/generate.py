"""Writing the project's notebooks from their generator scripts (``scripts/make_*.py``): the tagged parameters cell
and the notebook file with the Python 3 kernelspec."""

from __future__ import annotations

from pathlib import Path

import nbformat

from sparqlab.core.paths import PROJECT_ROOT

NOTEBOOKS_DIR = PROJECT_ROOT / "notebooks"


def parameters_cell(source: str) -> nbformat.NotebookNode:
    """A code cell tagged ``parameters`` (the one papermill overrides and :func:`notebook_parameters` reads)."""
    return nbformat.v4.new_code_cell(source, metadata={"tags": ["parameters"]})


def write_generated_notebook(cells: list, name: str) -> Path:
    """Write ``cells`` as ``notebooks/<name>`` with the Python 3 kernelspec and say so (for ``scripts/make_*.py``)."""
    notebook = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    })
    path = NOTEBOOKS_DIR / name
    nbformat.write(notebook, path)
    print(f"wrote {path}")
    return path
