"""`sparqlab reproduce --real`: the notebooks against the real small model served here, their outputs beside the
stand-ins' and labelled with the model (never with the stand-in banner); and what a real model's run looks like in
a comparison table and a run report."""

from __future__ import annotations

import json
import subprocess
import sys

from PIL import Image

from sparqlab.core.labels import STANDIN_BANNER
from sparqlab.experiments.executors import run_grid
from sparqlab.experiments.grid import load_grid
from sparqlab.experiments.table import build_table, render
from sparqlab.notebooks import find_notebooks
from sparqlab.notebooks.parameters import check_parameters
from sparqlab.notebooks.real import REAL_PARAMETERS, real_parameters
from sparqlab.plots.report import report_page
from support.notebooks import isolated_env, with_movie_store
from support.real_model import require_real_model


def test_every_notebook_has_real_parameters_it_declares():
    notebooks = find_notebooks()
    assert sorted(REAL_PARAMETERS) == sorted(nb.stem for nb in notebooks)
    for notebook in notebooks:  # names and types as each notebook declares them, the model pointed at the server
        values = check_parameters([notebook], real_parameters(notebook.stem, "smollm2-135m", "http://h:1/v1"))
        assert not {"{model}", "{url}"} & {v for v in values[notebook].values() if isinstance(v, str)}
        stand_ins_only = notebook.stem == "09_corrector_data_composition"  # REAL_NOTES says why
        assert ("http://h:1/v1" in values[notebook].values()) != stand_ins_only, notebook.stem



def test_an_override_can_make_the_served_model_the_ggc_generator():
    """A fine-tuned generator served by --real-model takes the stand-in generator's place through -p (its URL is
    known only once it listens); without the override the stand-in stays the generator."""
    notebook = find_notebooks(["04_ggc_main"])[0]
    overrides = check_parameters([notebook], {"model": "{model}", "model_url": "{url}"})[notebook]
    tuned = real_parameters(notebook.stem, "mcqa-generator", "http://h:1/v1", overrides)
    assert [tuned[k] for k in ("model", "model_url", "corrector", "corrector_url")] == [
        "mcqa-generator", "http://h:1/v1", "mcqa-generator", "http://h:1/v1"]
    default = real_parameters(notebook.stem, "mcqa-generator", "http://h:1/v1")
    assert (default["model"], default["model_url"]) == ("standin-knn", None)


def test_real_threads_is_refused_without_real_and_below_one(tmp_path):
    """--real-threads sizes the llama.cpp server --real starts: meaningless without it, and never zero."""
    for arguments, message in ((["--real-threads", "2"], "--real-threads needs --real"),
                               (["--real", "--real-threads", "0"], "--real-threads must be at least 1")):
        done = subprocess.run([sys.executable, "-m", "sparqlab", "reproduce", *arguments, "00_quickstart"],
                              capture_output=True, text=True, env=isolated_env(tmp_path), timeout=120)
        assert done.returncode != 0 and message in done.stderr, done.stderr[-2000:]

def test_the_quickstart_reproduced_against_the_real_model_names_it(tmp_path):
    require_real_model()
    env = isolated_env(tmp_path, with_movie_store(tmp_path))
    done = subprocess.run([sys.executable, "-m", "sparqlab", "reproduce", "--real", "00_quickstart", "--no-progress",
                           "-p", "datasets", "metaqa-1hop", "-p", "limit", "1", "-p", "max_tokens", "48"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    executed = tmp_path / "runs" / "notebooks-real" / "smollm2-135m" / "00_quickstart.ipynb"
    cells = json.loads(executed.read_text(encoding="utf-8"))["cells"]
    assert "".join(cells[0]["source"]) == "**model: smollm2-135m**"
    assert STANDIN_BANNER not in executed.read_text(encoding="utf-8") + done.stdout
    figures = list((tmp_path / "figures" / "real" / "smollm2-135m" / "quickstart").glob("*--model-smollm2-135m*.png"))
    assert figures, "figures beside the stand-ins', named by the model"
    assert not (tmp_path / "figures" / "quickstart").exists(), "nothing written over the stand-ins' figures"
    assert all(Image.open(png).info["Description"] == "model: smollm2-135m" for png in figures)
    assert "[standin]" not in "".join(str(output) for cell in cells for output in cell.get("outputs", []))
    runs = list((tmp_path / "runs" / "real" / "smollm2-135m" / "quickstart").glob("*/metrics.json"))
    metrics = [json.loads(path.read_text()) for path in runs]
    assert metrics and all(m["model_is_standin"] is False and m["tokens_estimated"] is False for m in metrics)
    assert all("method_error" not in m["error_categories"] for m in metrics)  # each question a typed outcome
    page = report_page([runs[0].parent])
    assert '<p class="sq-model">model: smollm2-135m</p>' in page and STANDIN_BANNER not in page


def test_a_table_of_real_model_runs_names_the_model(real_model, tmp_path, monkeypatch):
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    grid = tmp_path / "real.yaml"
    grid.write_text("name: real\nrun: {limit: 1, cache: 'off', max_tokens: 48, concurrency: 1}\n"
                    "methods: {direct: {method: direct}}\ndatasets: {metaqa-1hop: {dataset: metaqa-1hop}}\n")
    sweep = load_grid(grid, {"model": real_model.name, "model_url": real_model.url})
    assert [o.outcome for o in run_grid(sweep, sweep.cells, "local", 0)] == ["ran"]
    table = build_table(sweep)
    assert table.rows == ["direct"] and table.made_from == f"model: {real_model.name}"
    for fmt in ("text", "md", "latex"):
        shown = render(table, fmt)
        assert real_model.name in shown and "stand-in" not in shown, fmt
