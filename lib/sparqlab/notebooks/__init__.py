"""The project's notebooks as code: typed parameters and their agreement with the settings they mirror
(:mod:`.parameters`), headless execution with papermill (:mod:`.execute`) and the JupyterLab server with its
browser check (:mod:`.lab`)."""

from sparqlab.notebooks.execute import (
    NOTEBOOKS_DIR,
    NotebookOutcome,
    ReproduceReport,
    execute_notebook,
    find_notebooks,
    reproduce,
)
from sparqlab.notebooks.lab import BROWSER_CONTROLS, browser_check, find_chromium, lab_command, serve_lab
from sparqlab.notebooks.parameters import (
    NotebookParameter,
    ParameterError,
    check_parameters,
    mirror_problems,
    notebook_parameters,
    parse_parameter,
)

__all__ = [
    "BROWSER_CONTROLS", "NOTEBOOKS_DIR", "NotebookOutcome", "NotebookParameter", "ParameterError", "ReproduceReport",
    "browser_check", "check_parameters", "execute_notebook", "find_chromium", "find_notebooks", "lab_command",
    "mirror_problems", "notebook_parameters", "parse_parameter", "reproduce", "serve_lab",
]
