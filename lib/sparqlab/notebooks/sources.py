"""The committed notebooks are their own source: each ``notebooks/*.ipynb`` is edited in JupyterLab and committed
without outputs and with normalised metadata, so that an edit is a diff of its cells' source only.

``python -m sparqlab.notebooks.sources notebooks/*.ipynb`` normalises notebooks in place before a commit (the
test ``tests/notebooks/test_notebook_sources.py`` says which ones need it).
"""

from __future__ import annotations

import sys
from copy import deepcopy
from pathlib import Path

import nbformat

NOTEBOOK_METADATA = {
    "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
    "language_info": {"name": "python"},
}
"""A committed notebook's whole metadata (no kernel version, widget state or papermill record)."""

CELL_METADATA = ("tags",)
"""The cell metadata a committed notebook keeps (``parameters`` marks the cell papermill overrides)."""


def normalised(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``notebook`` without outputs, execution counts and metadata beyond :data:`NOTEBOOK_METADATA` and
    :data:`CELL_METADATA`."""
    copy = deepcopy(notebook)
    copy.metadata = nbformat.from_dict(NOTEBOOK_METADATA)
    for cell in copy.cells:
        cell.metadata = nbformat.from_dict({key: cell.metadata[key] for key in CELL_METADATA if key in cell.metadata})
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return copy


def normalise(path: Path) -> bool:
    """Rewrite the notebook at ``path`` normalised (:func:`normalised`); whether anything changed."""
    notebook = nbformat.read(path, as_version=4)
    clean = normalised(notebook)
    if clean == notebook:
        return False
    nbformat.write(clean, path)
    return True


if __name__ == "__main__":
    for name in sys.argv[1:]:
        if normalise(Path(name)):
            print(f"normalised {name}")
