"""In a real browser: JupyterLab in headless Chromium runs the quickstart and the trace browser widget renders
(its controls are in the page), not only the notebook's code. Skipped, saying why, where Chromium is absent; in CI
(``CI`` set, as ``.ci/run`` does after installing Debian's chromium) a missing Chromium fails the test instead."""

import os

import papermill
import pytest

from sparqlab.notebooks import BROWSER_CONTROLS, NOTEBOOKS_DIR, browser_check, find_chromium
from support.ci import require_program

CHROMIUM = find_chromium()


def require_chromium() -> None:
    """Skip the test where Chromium is absent (fail it in CI): called by the test, so CI reports it as failed."""
    require_program(CHROMIUM is not None, "Chromium not installed (apt-get install chromium, or set SPARQLAB_CHROMIUM)",
                    "the headless-browser check of the lab")


@pytest.fixture
def lab_env(tmp_path, monkeypatch):
    """The notebook's runs, figures and model offline in ``tmp_path``."""
    for name, folder in (("SPARQLAB_RUNS", "runs"), ("SPARQLAB_FIGURES", "figures")):
        monkeypatch.setenv(name, str(tmp_path / folder))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_quickstart_trace_browser_renders_in_jupyterlab(tmp_path, lab_env):
    require_chromium()
    lab_root = tmp_path / "lab"
    lab_root.mkdir()
    notebook = lab_root / "00_quickstart.ipynb"
    # parameters injected as `sparqlab reproduce -p limit 2` would, not executed: the browser runs every cell
    papermill.execute_notebook(str(NOTEBOOKS_DIR / "00_quickstart.ipynb"), str(notebook), prepare_only=True,
                               parameters={"limit": 2, "datasets": ["metaqa-1hop"]}, progress_bar=False)
    labels = browser_check(notebook, CHROMIUM, timeout_s=240)
    assert set(BROWSER_CONTROLS) <= set(labels)
    assert list((tmp_path / "runs" / "quickstart").glob("*/predictions.jsonl")), "the kernel ran the notebook"
    assert os.environ["SPARQLAB_RUNS"] == str(tmp_path / "runs")


@pytest.mark.slow
def test_an_executed_notebook_shows_finished_bars_and_the_failing_questions(tmp_path, lab_env):
    """What `sparqlab reproduce` writes, opened in JupyterLab without running anything: finished progress bars and
    the trace browser's static fallback — the run's summary and its failing questions with gold and predicted SPARQL;
    nbconvert's HTML too."""
    require_chromium()
    from nbconvert import HTMLExporter

    from sparqlab.notebooks import execute_notebook
    from sparqlab.notebooks.lab import rendered_outputs

    outcome = execute_notebook(NOTEBOOKS_DIR / "00_quickstart.ipynb", tmp_path / "lab",
                               {"limit": 2, "datasets": ["metaqa-1hop", "metaqa-2hop"]})
    assert outcome.ok, outcome.error
    # the widgets no kernel drives any more are frozen into what they showed: the bars at 2/2, the trace browser's
    # run summary and failing questions
    expected = ["Failing questions", "not answered exactly", "gold SPARQL", "predicted SPARQL", "100%", "2/2"]
    shown = rendered_outputs(outcome.output, CHROMIUM, expected, timeout_s=180)
    assert "[standin]" in shown and "0/2 [" not in shown
    # nbconvert (and GitHub) show the same
    page, _ = HTMLExporter().from_filename(str(outcome.output))
    assert all(text in page for text in ["Failing questions", "gold SPARQL", "predicted SPARQL", 'max="2'])
