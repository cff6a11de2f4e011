"""Notebook conventions, and headless reproduction with papermill through `sparqlab reproduce`."""

import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from PIL import Image

from sparqlab.core.labels import STANDIN_BANNER
from sparqlab.notebooks import NOTEBOOKS_DIR, execute_notebook, find_notebooks, parse_parameter
from support.notebooks import reproduce

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_conventions(path):
    notebook = nbformat.read(path, as_version=4)
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert "parameters" in code[0].metadata.get("tags", []), "the first code cell holds the parameters"
    for cell in code:
        assert not cell.get("outputs"), "notebooks are committed without outputs"
        for keyword in ("def ", "class ", "while ", "lambda "):
            assert keyword not in cell.source, f"logic belongs in sparqlab, not in a notebook: {keyword!r}"


def test_parameters_parse_as_literals_or_strings():
    assert parse_parameter("8") == 8
    assert parse_parameter("None") is None
    assert parse_parameter("['a', 'b']") == ["a", "b"]
    assert parse_parameter("http://gpu:8000/v1") == "http://gpu:8000/v1"


def test_unknown_notebook_name_lists_the_known_ones():
    with pytest.raises(FileNotFoundError, match="00_quickstart"):
        find_notebooks(["no-such-notebook"])


def test_quickstart_reproduces_headless_then_replays_from_cache(tmp_path):
    # the smallest sensible run: two questions per dataset (the notebook must not assume more rows than that)
    first = reproduce(tmp_path, "00_quickstart", parameters={"limit": "2"}, progress=True)
    assert "all notebooks ran" in first.process.stdout
    assert "[1/1] 00_quickstart.ipynb ok in" in first.process.stderr  # progress lines with elapsed time
    code = first.code_cells("00_quickstart")
    assert [cell.execution_count for cell in code] == list(range(1, len(code) + 1)), "every code cell ran, in order"
    assert not [out for cell in code for out in cell.outputs if out.output_type == "error"]
    # made from a stand-in, and it says so: first in the executed copy, in the summary, under and in the figure
    banner = f"{STANDIN_BANNER} (standin-keyword-rules)"
    first_cell = first.notebook("00_quickstart").cells[0]
    assert first_cell.cell_type == "markdown" and first_cell.source == f"**{banner}**"
    assert banner in first.process.stdout
    # figures go under the experiment, named by the parameters that select questions, with a sidecar of runs
    stem = tmp_path / "figures" / "quickstart" / "f1_by_dataset--model-standin-keyword-rules--sample-40--seed-0--limit-2"
    assert stem.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert stem.with_suffix(".pdf").read_bytes()[:5] == b"%PDF-"
    sidecar = json.loads(stem.with_suffix(".json").read_text())
    assert len(sidecar["runs"]) == 3 and all("/quickstart/direct-" in run for run in sidecar["runs"])
    assert sidecar["made_from"] == banner and banner in sidecar["texts"]
    assert Image.open(stem.with_suffix(".png")).info["Description"] == banner
    metrics = [json.loads(p.read_text()) for p in (tmp_path / "runs" / "quickstart").glob("*/metrics.json")]
    assert len(metrics) == 4 and all(m["model_is_standin"] for m in metrics)
    showcase = [m for m in metrics if m["n_questions"] == 1]
    assert len(showcase) == 1 and showcase[0]["f1"] == 1.0, "the showcase question is one the baseline answers"

    # Replay: the same notebook again, model calls served from the response cache only (a miss would fail).
    reproduce(tmp_path, "00_quickstart", parameters={"limit": "2", "cache": "replay", "experiment": "quickstart-replay"})
    replayed = [json.loads(p.read_text()) for p in (tmp_path / "runs" / "quickstart-replay").glob("*/metrics.json")]
    assert sorted(m["f1"] for m in replayed) == sorted(m["f1"] for m in metrics)
    assert all(m["model_calls_uncached"] == 0 for m in replayed)


def test_reproduce_refuses_a_wrong_parameter_before_running_anything(tmp_path, monkeypatch, capsys):
    from sparqlab.cli import main

    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    assert main(["reproduce", "00_quickstart", "-p", "limit", "two"]) == 1
    assert "parameter 'limit' expects int | None" in capsys.readouterr().err
    assert main(["reproduce", "00_quickstart", "-p", "limt", "2"]) == 1
    err = capsys.readouterr().err
    assert "unknown parameter(s) limt (did you mean 'limit'?)" in err
    assert not (tmp_path / "runs").exists(), "nothing ran"


def test_failing_notebook_is_reported_by_name(tmp_path):
    notebook = new_notebook(cells=[new_code_cell("x = 1", metadata={"tags": ["parameters"]}),
                                   new_code_cell("1 / 0")],
                            metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                     "language": "python"}})
    path = tmp_path / "broken.ipynb"
    nbformat.write(notebook, path)
    outcome = execute_notebook(path, tmp_path / "out")
    assert not outcome.ok and "ZeroDivisionError" in outcome.error
    result = reproduce(tmp_path, str(path), output_dir=tmp_path / "out", check=False).process
    assert result.returncode == 1
    assert "broken.ipynb failed" in result.stderr and "ZeroDivisionError" in result.stderr


def test_a_relative_output_dir_is_where_the_kernel_notes_its_models(tmp_path, monkeypatch):
    """The kernel runs in the workspace or the notebook's folder, not the caller's: a relative output folder (as
    `reproduce --output-dir runs/x` gives) must still receive the models record the kernel writes."""
    notebook = new_notebook(cells=[new_code_cell("x = 1", metadata={"tags": ["parameters"]}),
                                   new_code_cell("from sparqlab.core.labels import note_model\n"
                                                 "note_model('a-real-model', False)")],
                            metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                     "language": "python"}})
    nbformat.write(notebook, tmp_path / "noting.ipynb")
    monkeypatch.chdir(tmp_path)
    outcome = execute_notebook(Path("noting.ipynb"), Path("relative") / "out")
    assert outcome.ok, outcome.error
    assert outcome.made_from == "model: a-real-model"
    assert (tmp_path / "relative" / "out" / "noting.ipynb").is_file()


def test_a_cell_without_error_output_reports_the_exception_it_printed(tmp_path):
    """papermill names only ``CellExecutionError`` for a failed cell that left no error output (the quickstart's
    run against an unreachable endpoint does this): the reason the cell printed on stderr is what is reported."""
    from types import SimpleNamespace

    from sparqlab.notebooks.execute import cell_error_line

    printed = ("Traceback (most recent call last):\n  File \"runner.py\", line 661, in _answer_all\n"
               "sparqlab.runs.runner.RunAborted: run r stopped: cannot reach the model endpoint http://h:9/v1\n")
    cells = [new_markdown_cell("papermill's note"), new_code_cell("x = 1", execution_count=1),
             new_code_cell("run(...)", execution_count=2, outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="ValueError: not this one\n"),
        nbformat.v4.new_output("stream", name="stderr", text=printed)])]
    output = tmp_path / "out.ipynb"
    nbformat.write(new_notebook(cells=cells), output)
    silent = SimpleNamespace(ename="CellExecutionError", evalue="", exec_count=2)
    assert cell_error_line(silent, output) == ("sparqlab.runs.runner.RunAborted: run r stopped: cannot reach the "
                                               "model endpoint http://h:9/v1")
    assert cell_error_line(SimpleNamespace(ename="ZeroDivisionError", evalue="division by zero", exec_count=2),
                           output) == "ZeroDivisionError: division by zero"
    cells[2].outputs = []
    nbformat.write(new_notebook(cells=cells), output)
    assert cell_error_line(silent, output) == f"CellExecutionError: (no message; see {output})"
