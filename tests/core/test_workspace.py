"""Where a pip-installed sparqlab writes (the workspace), what it bundles, what it declares, and how a missing
optional package is reported (issue 39). The end-to-end pip install is tests/test_install.py."""

from __future__ import annotations

import ast
import json
import re
import sys
import tomllib
from importlib import metadata

import pytest

from sparqlab.cli import main
from sparqlab.core import extras, paths
from sparqlab.core.paths import (
    CHECKOUT,
    PROJECT_ROOT,
    WORKSPACE_MARKER,
    find_workspace,
    init_workspace,
    outside_package,
)
from sparqlab.notebooks import find_notebooks
from sparqlab.notebooks.execute import ReproduceReport
from sparqlab.runs import manifest


@pytest.fixture
def no_locations(monkeypatch):
    for name in ("SPARQLAB_WORKSPACE", "SPARQLAB_RUNS", "SPARQLAB_CACHE", "SPARQLAB_FIGURES", "SPARQLAB_DATA"):
        monkeypatch.delenv(name, raising=False)


def test_the_nearest_marked_folder_is_the_workspace_else_the_folder_itself(tmp_path):
    inner = tmp_path / "study" / "notes" / "week1"
    inner.mkdir(parents=True)
    assert find_workspace(inner) == inner
    (tmp_path / "study" / WORKSPACE_MARKER).write_text("")
    assert find_workspace(inner) == tmp_path / "study"


def test_outputs_follow_the_workspace_and_each_variable_still_wins(tmp_path, monkeypatch, no_locations):
    assert paths.workspace_root() == CHECKOUT  # in a checkout, as before
    monkeypatch.setenv("SPARQLAB_WORKSPACE", str(tmp_path))
    assert (paths.runs_dir(), paths.figures_dir(), paths.cache_dir()) == \
        (tmp_path / "runs", tmp_path / "figures", tmp_path / ".cache")
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "elsewhere"))
    assert paths.runs_dir() == tmp_path / "elsewhere"
    assert paths.data_dir() == PROJECT_ROOT / "data"  # bundled data is read where it ships


def test_outside_a_checkout_the_current_folder_is_the_workspace(tmp_path, monkeypatch, no_locations):
    monkeypatch.setattr(paths, "CHECKOUT", None)
    monkeypatch.chdir(tmp_path)
    assert paths.runs_dir() == tmp_path / "runs" and paths.cache_dir() == tmp_path / ".cache"


def test_init_copies_notebooks_and_grids_keeps_readable_files_and_sets_truncated_ones_aside(tmp_path):
    edited = tmp_path / "notebooks" / "00_quickstart.ipynb"
    edited.parent.mkdir(parents=True)
    edited.write_text('{"cells": [], "metadata": {"mine": "my edits"}}')
    bundled_09 = (PROJECT_ROOT / "notebooks" / "09_corrector_data_composition.ipynb").read_bytes()
    truncated = tmp_path / "notebooks" / "09_corrector_data_composition.ipynb"
    truncated.write_bytes(bundled_09[:1000])  # what an init cut by a full disk left
    files = init_workspace(tmp_path)
    assert files.kept == [edited] and "my edits" in edited.read_text()
    assert files.replaced == [truncated] and truncated.read_bytes() == bundled_09
    assert truncated.with_name(truncated.name + ".damaged").read_bytes() == bundled_09[:1000], "nothing is lost"
    assert (tmp_path / WORKSPACE_MARKER).is_file()
    bundled = {p.name for p in (PROJECT_ROOT / "notebooks").glob("*.ipynb")} | \
        {p.name for p in (PROJECT_ROOT / "experiments").glob("*.yaml")}
    assert {p.name for p in files.copied} == bundled - {edited.name, truncated.name}
    assert not [p for p in tmp_path.rglob("*.tmp")], "no scratch file is left"


def test_a_workspace_notebook_hides_the_bundled_one_and_misses_say_where_they_looked(tmp_path):
    own = tmp_path / "own"
    own.mkdir()
    (own / "00_quickstart.ipynb").write_text("{}")
    bundled = PROJECT_ROOT / "notebooks"
    found = find_notebooks(None, [own, bundled])
    assert found[0] == own / "00_quickstart.ipynb" and len(found) == len(list(bundled.glob("*.ipynb")))
    with pytest.raises(FileNotFoundError, match=rf"no single notebook matches 'nope' in {own} and {bundled}; "
                                                r"notebooks: 00_quickstart, 01_"):
        find_notebooks(["nope"], [own, bundled])
    with pytest.raises(FileNotFoundError, match=f"no notebooks .* in {tmp_path / 'empty'}"):
        find_notebooks(None, [tmp_path / "empty"])
    assert ReproduceReport().summary() == "no notebook ran"


def test_nothing_is_written_inside_an_installed_package_by_default(monkeypatch):
    monkeypatch.setattr(paths, "CHECKOUT", None)
    with pytest.raises(ValueError, match="inside the installed sparqlab package.*--out"):
        outside_package(paths.PACKAGE_DIR / "bundled" / "data" / "mcqa_movies", "--out")


def test_a_pip_install_records_the_commit_its_wheel_was_built_from(tmp_path, monkeypatch):
    (tmp_path / "bundled").mkdir()
    (tmp_path / "bundled" / "build.json").write_text(json.dumps({"revision": "ab" * 20, "dirty": False}))
    monkeypatch.setattr(manifest, "PACKAGE_DIR", tmp_path)
    assert manifest.git_state(None) == {"revision": "ab" * 20, "dirty": False}
    (tmp_path / "bundled" / "build.json").unlink()
    assert manifest.git_state(None) == {"revision": None, "dirty": None}


def test_a_method_missing_its_extra_stops_the_run_before_it_starts(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(extras.EXTRAS, "desq", ("igraph", "no_such_module_for_this_test"))
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    code = main(["run", "desq", "-d", "mcqa-movies", "--limit", "2", "-m", "standin-desq", "-o", "embedder=hashing"])
    error = capsys.readouterr().err
    assert code == 1 and not (tmp_path / "runs").exists()
    assert error.strip().splitlines() == [
        "sparqlab run: MissingExtra: method desq needs no_such_module_for_this_test, not installed: "
        "pip install 'sparqlab[desq]'"]


def test_training_without_the_train_extra_is_one_line_naming_it(tmp_path, monkeypatch, capsys):
    """``sparqlab train`` and notebook 09's experiment stop before any work, naming the extra, not with a bare
    ``ModuleNotFoundError`` from deep inside (the module list is the extra's, one entry missing here)."""
    from sparqlab.experiments.train import composition_experiment

    monkeypatch.setitem(extras.EXTRAS, "train", ("torch", "no_such_module_for_this_test"))
    code = main(["train", "sft", "--base", str(tmp_path), "--data", str(tmp_path / "d.jsonl"), "--out",
                 str(tmp_path / "out")])
    assert code == 1 and not (tmp_path / "out").exists()
    assert capsys.readouterr().err.strip().splitlines() == [
        "sparqlab train: MissingExtra: sparqlab train sft needs no_such_module_for_this_test, not installed: "
        "pip install 'sparqlab[train]'"]
    with pytest.raises(extras.MissingExtra, match=r"notebook 09\) needs no_such_module_for_this_test"):
        composition_experiment(tmp_path / "composition")
    assert not (tmp_path / "composition").exists()


def test_a_grid_a_notebook_names_is_the_workspace_copy_before_the_bundled_one(tmp_path, monkeypatch):
    """Notebook 11 runs in the workspace's notebooks/ and names experiments/all_methods.yaml: the workspace's
    copy (perhaps edited) is read, not the bundled one."""
    from sparqlab.experiments.grid import load_grid

    init_workspace(tmp_path)
    grid = tmp_path / "experiments" / "all_methods.yaml"
    grid.write_text(grid.read_text(encoding="utf-8").replace("metaqa-1hop", "metaqa-2hop"), encoding="utf-8")
    monkeypatch.setenv("SPARQLAB_WORKSPACE", str(tmp_path))
    monkeypatch.chdir(tmp_path / "notebooks")
    loaded = load_grid("experiments/all_methods.yaml")
    assert loaded.path == grid
    assert "metaqa-2hop" in {cell.dataset for cell in loaded.cells}
    assert str(paths.find_input("experiments/none.yaml")) == "experiments/none.yaml", "a miss is named as given"


def _declared() -> tuple[set[str], dict[str, set[str]]]:
    """pyproject.toml's base dependencies and each extra's packages (normalised names, extras expanded)."""
    project = tomllib.loads((CHECKOUT / "pyproject.toml").read_text())["project"]

    def names(requirements: list[str]) -> set[str]:
        found = set()
        for requirement in requirements:
            name, _, rest = re.match(r"([A-Za-z0-9_.\-]+)(\[([^\]]*)\])?", requirement).group(1, 2, 3)
            if name == "sparqlab":
                found |= {n for extra in rest.split(",") for n in names(project["optional-dependencies"][extra])}
            else:
                found.add(re.sub(r"[-_.]+", "-", name).lower())
        return found

    return names(project["dependencies"]), {extra: names(reqs) for extra, reqs in
                                            project["optional-dependencies"].items()}


OPTIONAL_ELSEWHERE = {"faiss": "an optional DeSQ memory backend; its error names faiss-cpu",
                      "websocket": "the headless-browser check of the tests (requirements-dev.txt)"}


@pytest.mark.skipif(CHECKOUT is None, reason="reads the checkout's pyproject.toml")
def test_every_package_the_library_imports_is_declared():
    base, optional = _declared()
    declared = base | set().union(*optional.values())
    owners = metadata.packages_distributions()
    imported = set()
    for source in (CHECKOUT / "lib" / "sparqlab").rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"sparqlab"} - set(OPTIONAL_ELSEWHERE)
    undeclared = {module: owners.get(module) for module in third_party
                  if not {re.sub(r"[-_.]+", "-", d).lower() for d in owners.get(module, [module])} & declared}
    assert undeclared == {}
    for extra, modules in extras.EXTRAS.items():  # each extra's checked modules come with that extra
        packages = {re.sub(r"[-_.]+", "-", d).lower() for m in modules for d in owners[m]}
        assert packages <= optional[extra], extra
    assert "torch" not in base  # unpinned, torch pulls a multi-GB CUDA build
