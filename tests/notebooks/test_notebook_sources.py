"""The committed ``.ipynb`` is each notebook's source: no outputs, normalised metadata, and parameters that mirror
the settings they stand for (name, type, help, default), so a changed declaration fails here until the notebook
follows."""

from __future__ import annotations

import dataclasses

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from sparqlab.methods.desq.method import DesqConfig
from sparqlab.methods.genop.semantics import EvalSettings
from sparqlab.methods.ggc.method import GGCConfig
from sparqlab.notebooks import NOTEBOOKS_DIR, mirror_problems
from sparqlab.notebooks.sources import NOTEBOOK_METADATA, normalise, normalised
from sparqlab.runs import RunConfig

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))


def leaves_named(config_class, names) -> dict:
    """The settings of ``config_class`` by their last name (those in ``names``)."""
    by_name = {leaf.name: leaf for leaf in config_class.leaves().values()}
    return {name: by_name[name] for name in names}


RUN_SETTINGS = dict(RunConfig.flat_names())
MIRRORED = {
    "04_ggc_main": leaves_named(GGCConfig, ["threshold", "kg_feedback", "generator_share", "split_seed"]),
    "06_error_categorisation": leaves_named(GGCConfig, ["threshold", "generator_share", "split_seed"]),
    "07_uri_correction": leaves_named(DesqConfig, ["jaccard", "train_split", "memory_limit", "memory_dir"]),
    "08_generative_sparql": leaves_named(EvalSettings, ["k", "b", "t", "r", "similarity"]),
    "09_corrector_data_composition": leaves_named(GGCConfig, ["threshold", "generator_share", "split_seed"]),
}
"""Per notebook, the method settings its parameters mirror besides the run settings (RunConfig's, in every one)."""


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_notebooks_carry_no_outputs_and_normalised_metadata(path):
    notebook = nbformat.read(path, as_version=4)
    assert normalised(notebook) == notebook, f"normalise it: python -m sparqlab.notebooks.sources {path.name}"


def test_normalising_drops_outputs_counts_and_the_kernels_metadata(tmp_path):
    cell = new_code_cell("1 + 1", execution_count=3, outputs=[new_output("execute_result", {"text/plain": "2"})],
                         metadata={"tags": ["parameters"], "scrolled": True, "papermill": {"duration": 1.0}})
    path = tmp_path / "edited.ipynb"
    nbformat.write(new_notebook(cells=[cell], metadata={**NOTEBOOK_METADATA, "widgets": {"state": {}},
                                                        "language_info": {"name": "python", "version": "3.12"}}), path)
    assert normalise(path) and not normalise(path)
    saved = nbformat.read(path, as_version=4)
    assert saved.metadata == NOTEBOOK_METADATA
    assert (saved.cells[0].source, saved.cells[0].outputs, saved.cells[0].execution_count) == ("1 + 1", [], None)
    assert saved.cells[0].metadata == {"tags": ["parameters"]}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_parameter_mirrors_the_setting_it_stands_for(path):
    settings = {**RUN_SETTINGS, **MIRRORED.get(path.stem, {})}
    assert mirror_problems(path, settings) == []


def test_a_changed_declared_default_fails_until_the_notebook_follows():
    path = NOTEBOOKS_DIR / "01_agent_runs.ipynb"
    settings = dict(RUN_SETTINGS)
    assert mirror_problems(path, settings) == []
    settings["sample_seed"] = dataclasses.replace(settings["sample_seed"], default=7)  # the notebook keeps 0
    settings["concurrency"] = dataclasses.replace(settings["concurrency"], default=16)  # it says "declared: 8"
    settings["cache"] = dataclasses.replace(settings["cache"], type=int)
    settings["select"] = dataclasses.replace(settings["select"], help="Another help.")
    problems = mirror_problems(path, settings)
    assert [line.partition(":")[0] for line in problems] == ["sample_seed", "select", "concurrency", "cache"], problems
