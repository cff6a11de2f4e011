"""Typed notebook parameters: `sparqlab reproduce` checks every override's name and type before running anything."""

import ast

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from papermill import inspect_notebook

from sparqlab.notebooks import (
    NOTEBOOKS_DIR,
    ParameterError,
    check_parameters,
    notebook_parameters,
)

PARAMS = '''\
limit: int = 40                   # questions per dataset
datasets: list[str] = ["metaqa-1hop", "mcqa-movies"]  # dataset names
model_url: str | None = None      # endpoint
proxy: Optional[str] = None       # papermill-friendly optional
temperature: float = 0.0
replay: bool = False
old_style = 3                     # untyped: kind of the default
'''


@pytest.fixture
def notebook(tmp_path):
    path = tmp_path / "nb.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell(PARAMS, metadata={"tags": ["parameters"]})]), path)
    return path


def test_declared_parameters_have_kinds_defaults_and_help(notebook):
    params = notebook_parameters(notebook)
    assert {n: p.kind for n, p in params.items()} == {
        "limit": "int", "datasets": "list[str]", "model_url": "str | None", "temperature": "float",
        "replay": "bool", "old_style": "int", "proxy": "str | None"}
    assert params["limit"].default == 40 and params["limit"].help == "questions per dataset"


def test_command_line_strings_are_parsed_by_declared_type(notebook):
    checked = check_parameters([notebook], {"limit": "2", "datasets": "metaqa-1hop, mcqa-movies",
                                            "model_url": "None", "temperature": "0.7", "replay": "true"})[notebook]
    assert checked == {"limit": 2, "datasets": ["metaqa-1hop", "mcqa-movies"], "model_url": None,
                       "temperature": 0.7, "replay": True}
    assert check_parameters([notebook], {"datasets": "['a', 'b']", "model_url": "http://h:8000/v1"})[notebook] == {
        "datasets": ["a", "b"], "model_url": "http://h:8000/v1"}


def test_yaml_values_are_checked_too(notebook):
    assert check_parameters([notebook], {"limit": 5, "temperature": 1})[notebook] == {"limit": 5, "temperature": 1.0}
    with pytest.raises(ParameterError, match="'datasets' expects list"):
        check_parameters([notebook], {"datasets": 3})


@pytest.mark.parametrize("name, value", [("limit", "ten"), ("limit", "2.5"), ("replay", "maybe"),
                                         ("temperature", "hot"), ("limit", True)])
def test_wrong_type_names_the_parameter(notebook, name, value):
    with pytest.raises(ParameterError, match=f"parameter '{name}' expects"):
        check_parameters([notebook], {name: value})


def test_unknown_name_lists_the_declared_ones(notebook):
    with pytest.raises(ParameterError, match="unknown parameter.*limt.*declare: datasets, limit"):
        check_parameters([notebook], {"limt": "2"})


def test_a_parameter_goes_only_to_the_notebooks_declaring_it(notebook, tmp_path):
    other = tmp_path / "other.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("seed: int = 0", metadata={"tags": ["parameters"]})]), other)
    checked = check_parameters([notebook, other], {"limit": "3", "seed": "1"})
    assert checked == {notebook: {"limit": 3}, other: {"seed": 1}}


@pytest.mark.parametrize("path", sorted(NOTEBOOKS_DIR.glob("*.ipynb")), ids=lambda p: p.name)
def test_project_notebooks_annotate_every_parameter(path):
    """So `papermill --help-notebook` shows types and `sparqlab reproduce` can check overrides."""
    cell = next(c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
    untyped = [node.targets[0].id for node in ast.parse(cell.source).body if isinstance(node, ast.Assign)]
    assert not untyped, f"parameters without a type annotation: {untyped}"
    assert notebook_parameters(path), "the parameters cell declares something"


@pytest.mark.parametrize("path", sorted(NOTEBOOKS_DIR.glob("*.ipynb")), ids=lambda p: p.name)
def test_papermill_reads_every_declared_parameter(path):
    """A line papermill cannot parse (a second '=' in its comment) is missing from `papermill --help-notebook`
    and from papermill's check of `-p` overrides."""
    seen = inspect_notebook(str(path))
    assert sorted(set(notebook_parameters(path)) - set(seen)) == []


def test_all_methods_workers_is_a_typed_override():
    path = NOTEBOOKS_DIR / "11_all_methods.ipynb"
    assert inspect_notebook(str(path))["workers"]["inferred_type_name"] == "int"
    assert check_parameters([path], {"workers": "2"})[path] == {"workers": 2}
