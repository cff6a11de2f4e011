"""Executed notebooks read as run without a kernel: widget outputs get static fallbacks from their saved state, the
copy is signed, and a run with other parameters never writes over the figures of the defaults."""

import nbformat
import pytest
from nbformat.sign import NotebookNotary
from nbformat.v4 import new_code_cell, new_notebook, new_output

from sparqlab.notebooks import execute_notebook
from sparqlab.notebooks.static import WIDGET_STATE, WIDGET_VIEW, add_static_fallbacks

KERNEL = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}


def progress_notebook(own_html: str | None = None) -> nbformat.NotebookNode:
    """A notebook whose one output is a tqdm-like bar (HBox of HTML, FloatProgress, HTML) saved at 5/5."""
    def model(name, **state):
        return {"model_name": name, "model_module": "@jupyter-widgets/controls", "state": state}

    states = {"box": model("HBoxModel", children=["IPY_MODEL_left", "IPY_MODEL_bar", "IPY_MODEL_right"]),
              "left": model("HTMLModel", value="100%"), "bar": model("FloatProgressModel", value=5.0, max=5.0),
              "right": model("HTMLModel", value=" 5/5 [00:01&lt;00:00]")}
    data = {WIDGET_VIEW: {"model_id": "box", "version_major": 2, "version_minor": 0},
            "text/plain": "  0%|          | 0/5 [00:00<?, ?it/s]"}
    if own_html:
        data["text/html"] = own_html
    cell = new_code_cell("bar", outputs=[new_output("display_data", data=data)])
    return new_notebook(cells=[cell], metadata={"widgets": {WIDGET_STATE: {"state": states}}})


def test_a_progress_bar_reads_finished_without_a_kernel():
    notebook = progress_notebook()
    assert add_static_fallbacks(notebook) == 1
    data = notebook.cells[0].outputs[0].data
    assert '<progress value="5.0" max="5.0"' in data["text/html"] and "5/5" in data["text/html"]
    assert "100%" in data["text/plain"] and "0/5" not in data["text/plain"]
    assert WIDGET_VIEW not in data, "nbconvert would pick the view of a widget no kernel drives"
    assert "widgets" not in notebook.metadata, "no state left to embed (nbconvert would fetch a widget manager)"


def test_an_output_with_its_own_html_keeps_it_and_widgets_without_state_are_left_alone():
    notebook = progress_notebook(own_html="<style>p{}</style><b>run summary</b><div>q1 failed</div>")
    add_static_fallbacks(notebook)
    data = notebook.cells[0].outputs[0].data
    assert data["text/html"].startswith("<style>") and data["text/plain"] == "run summary\nq1 failed"
    notebook = progress_notebook()
    notebook.metadata = {}
    assert add_static_fallbacks(notebook) == 0


def test_figure_names_keep_shortened_values_and_overridden_parameters_apart(monkeypatch):
    from sparqlab.plots import figure_stem

    assert figure_stem("f", {"model": "org/model-a"}) != figure_stem("f", {"model": "org_model-a"})
    assert figure_stem("f", {"model": "org_model-a", "limit": None}) == "f--model-org_model-a"
    long = figure_stem("f", {"thresholds": "-".join(["0.1"] * 20)})
    assert long != figure_stem("f", {"thresholds": "-".join(["0.1"] * 21)}) and len(long) < 70 and "--" not in long[3:]
    monkeypatch.setenv("SPARQLAB_NOTEBOOK_OVERRIDES", '{"limit": 5, "train_limit": 100}')
    assert figure_stem("f", {"limit": 5}).startswith("f--limit-5--p-"), "a parameter the name leaves out"
    monkeypatch.setenv("SPARQLAB_NOTEBOOK_OVERRIDES", '{"limit": 5}')
    assert figure_stem("f", {"limit": 5}) == "f--limit-5"


@pytest.mark.slow
def test_executed_copy_is_signed_and_a_smoke_run_keeps_the_default_figures(tmp_path, monkeypatch):
    """One tiny notebook, run with its defaults and then with another ``train_limit`` (which its figure's params
    leave out): the second run writes new files and leaves the first run's untouched."""
    monkeypatch.setenv("SPARQLAB_FIGURES", str(tmp_path / "figures"))
    source = tmp_path / "tiny.ipynb"
    nbformat.write(new_notebook(metadata=KERNEL, cells=[
        new_code_cell("train_limit = 400\nlimit = 10", metadata={"tags": ["parameters"]}),
        new_code_cell("from sparqlab import plots\nfig, ax = plots.subplots()\nax.plot([0, train_limit])\n"
                      "plots.save_figure(fig, 'line', experiment='tiny', params={'limit': limit}, formats=['png'])"),
    ]), source)
    first = execute_notebook(source, tmp_path / "out")
    assert first.ok, first.error
    assert NotebookNotary().check_signature(nbformat.read(first.output, as_version=4)), "the executed copy is trusted"
    folder = tmp_path / "figures" / "tiny"
    defaults = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert sorted(defaults) == ["line--limit-10.json", "line--limit-10.png"]
    assert execute_notebook(source, tmp_path / "out", {"train_limit": 100}).ok
    after = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert len(after) == 4 and all(after[name] == content for name, content in defaults.items())
    smoke = [name for name in after if name not in defaults]
    assert all(name.startswith("line--limit-10--p-") for name in smoke), smoke
