"""The project's notebooks as code: generation from ``scripts/make_*.py`` (:mod:`.generate`), typed parameters
(:mod:`.parameters`), headless execution with papermill (:mod:`.execute`) and the JupyterLab server with its
browser check (:mod:`.lab`)."""

from sparqlab.notebooks.execute import (
    NotebookOutcome,
    ReproduceReport,
    execute_notebook,
    find_notebooks,
    reproduce,
)
from sparqlab.notebooks.generate import NOTEBOOKS_DIR, config_parameters, parameters_cell, write_generated_notebook
from sparqlab.notebooks.lab import BROWSER_CONTROLS, browser_check, find_chromium, lab_command, serve_lab
from sparqlab.notebooks.parameters import (
    NotebookParameter,
    ParameterError,
    check_parameters,
    notebook_parameters,
    parse_parameter,
)

__all__ = [
    "BROWSER_CONTROLS", "NOTEBOOKS_DIR", "NotebookOutcome", "NotebookParameter", "ParameterError", "ReproduceReport",
    "browser_check", "check_parameters", "config_parameters", "execute_notebook", "find_chromium", "find_notebooks", "lab_command",
    "notebook_parameters", "parameters_cell", "parse_parameter", "reproduce", "serve_lab",
    "write_generated_notebook",
]
