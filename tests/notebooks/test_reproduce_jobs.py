"""`sparqlab reproduce --executor local|slurm` through submitit's local executor (real job folders, pickled calls,
logs): the executed notebooks and figures land where an in-process reproduction puts them, a `serve:` block
starts the job's own model server (the project's `sparqlab serve-model`) whose URL the notebooks get, and
`sparqlab reproduce status` tells done, failed (with the failing cell's line), running and missing apart."""

from __future__ import annotations

import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from sparqlab.cli import main
from sparqlab.core.paths import PROJECT_ROOT
from sparqlab.experiments.model_launcher import LOG_NAME
from sparqlab.notebooks.execute import notebook_status, record_state, state_folder
from support.docs import notebook_jobs
from support.notebooks import isolated_env, with_movie_store


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """Runs, figures and a cache holding the movie KG under ``tmp_path``; the jobs inherit this environment."""
    for name, value in isolated_env(tmp_path, with_movie_store(tmp_path)).items():
        monkeypatch.setenv(name, value)
    return tmp_path


def _notebook(path, *sources):
    cells = [new_code_cell("x = 1", metadata={"tags": ["parameters"]}), *map(new_code_cell, sources)]
    nbformat.write(new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                      "language": "python"}}), path)
    return path


def _printed(path) -> str:
    return "".join(o.get("text", "") for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"
                   for o in c.outputs)


def _status(capsys, *names) -> str:
    assert main(["reproduce", "status", *names]) == 0
    return capsys.readouterr().out


def test_reproduce_as_jobs_runs_the_quickstart_against_the_jobs_own_server(isolated, capsys, monkeypatch):
    """The sweeps guide's commands as written there (its job settings, experiments/reproduce_served.yaml, read from
    a working folder that links the checkout's), with a failing notebook added to the job."""
    reproduce, status = notebook_jobs()
    (isolated / "experiments").symlink_to(PROJECT_ROOT / "experiments", target_is_directory=True)
    monkeypatch.chdir(isolated)
    broken = _notebook(isolated / "broken.ipynb", "1 / 0")
    assert "missing  00_quickstart.ipynb" in _status(capsys, "00_quickstart")
    first_option = next(i for i, word in enumerate(reproduce) if word.startswith("-"))
    assert reproduce[1:first_option] == ["reproduce", "00_quickstart"] and "--serve" in reproduce
    code = main([*reproduce[1:first_option], str(broken), *reproduce[first_option:]])
    printed = capsys.readouterr()
    assert code == 1, printed.err
    [job_line] = [line for line in printed.err.splitlines() if line.startswith("job ")]
    assert job_line.endswith(": 00_quickstart.ipynb, broken.ipynb")  # one job: one server for both notebooks
    assert "broken.ipynb failed:\ncell 2: ZeroDivisionError: division by zero" in printed.err

    output = isolated / "runs" / "notebooks"
    executed = nbformat.read(output / "00_quickstart.ipynb", as_version=4)
    assert not [o for c in executed.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert list((isolated / "figures" / "quickstart").glob("f1_by_dataset--*--limit-2*.png"))
    configs = [json.loads(p.read_text()) for p in (isolated / "runs" / "quickstart").glob("*/config.json")]
    urls = {c["run"]["models"]["model_url"] for c in configs}
    assert len(configs) == 4 and len(urls) == 1 and urls.pop().startswith("http://127.0.0.1:")

    state = notebook_status(output / "00_quickstart.ipynb", output)
    log = (isolated / "runs" / "notebooks" / ".reproduce" / "jobs" / state.job_id / LOG_NAME).read_text()
    assert "starting: sparqlab serve-model --model standin-keyword-rules" in log and "--- stopped" in log
    assert main(status[1:]) == 0 and "done     00_quickstart.ipynb" in capsys.readouterr().out  # as the guide
    shown = _status(capsys, "00_quickstart", str(broken))
    assert "done     00_quickstart.ipynb" in shown and f"job {state.job_id}" in shown
    assert "failed   broken.ipynb" in shown and "cell 2: ZeroDivisionError: division by zero" in shown
    assert shown.rstrip().endswith("2 notebooks — 1 done, 1 failed")


def test_reproduce_as_jobs_without_a_server_runs_one_array_task_per_notebook(isolated, capsys):
    first = _notebook(isolated / "first.ipynb", "print(x + 1)")
    second = _notebook(isolated / "second.ipynb", "print(x + 2)")
    assert main(["reproduce", str(first), str(second), "--executor", "local", "-p", "x", "40"]) == 0
    printed = capsys.readouterr()
    assert len({line for line in printed.err.splitlines() if line.startswith("job ")}) == 2
    assert "all notebooks ran" in printed.out
    output = isolated / "runs" / "notebooks"
    assert _printed(output / "first.ipynb") == "41\n" and _printed(output / "second.ipynb") == "42\n"


def test_reproduce_status_tells_a_notebook_whose_process_is_gone_from_a_running_one(isolated):
    output = isolated / "runs" / "notebooks"
    notebook = _notebook(isolated / "any.ipynb")
    folder = state_folder(output, notebook)
    record_state(folder, "running")  # as a job killed mid-notebook leaves it
    gone = notebook_status(notebook, output)
    assert gone.status == "failed" and gone.error.startswith("stopped while running (killed")
    with (folder / ".lock").open("a+") as handle:
        import fcntl

        fcntl.flock(handle, fcntl.LOCK_EX)
        assert notebook_status(notebook, output).status == "running"
