"""sparqlab as a library (issue 39): this checkout installed by the README's own install line (read from
README.md and run as written, with the pip a fresh ``python3.11 -m venv`` gets — issue 51: an older pip refused
the line), with its dependencies, used from an empty folder as a researcher would — the README's first session
(its commands read from README.md, so this is where that block runs) writes everything there and nothing into the
environment, ``environment.json`` names the commit the install was built from, and a command whose extra is not
installed stops with one line naming it.

Slow (pip builds the wheel from a clone of the committed checkout, ~60 s of installing, ~40 s of session; CI
runs it): the environment is made once for the test run, by whichever xdist worker meets it first. The install
uses the project's constraints (the versions the suite is tested with, through ``PIP_CONSTRAINT``) and pip's
configured package index; torch is not pulled (it is only in extras)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sparqlab.core.paths import CHECKOUT, WORKSPACE_MARKER
from support.docs import first_session, install_command
from support.shared import built_once

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900),
              pytest.mark.skipif(CHECKOUT is None, reason="builds the wheel from the checkout")]

def timed(argv: list[str], **options) -> tuple[subprocess.CompletedProcess, float]:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, **options)
    return done, time.perf_counter() - start


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    """A fresh venv (``python3.11 -m venv``, its own pip) into which the README's install line, as written there,
    installs the checkout (at ``$HOME/src/sparqlab``: a link to it): its ``bin`` folder, the installed version and
    the seconds the install took (printed for the notes). pip clones the committed checkout. Made once per test
    run and shared by the xdist workers (:func:`support.shared.built_once`)."""
    made = built_once(tmp_path_factory, "install", install_checkout)
    return {"bin": Path(made["bin"]), "version": made["version"], "venv": Path(made["venv"])}


def install_checkout(root: Path) -> dict[str, str]:
    """The README's install line run in a fresh venv under ``root``; the record :func:`installed` reads."""
    home = root / "home"
    (home / "src").mkdir(parents=True)
    (home / "src" / "sparqlab").symlink_to(CHECKOUT)
    made, _ = timed([shutil.which("python3.11") or sys.executable, "-m", "venv", str(root / "venv")])
    assert made.returncode == 0, made.stderr
    bin_dir = root / "venv" / "bin"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARQLAB_", "VIRTUAL_ENV", "PYTHON", "PIP_"))}
    env.update(HOME=str(home), PIP_CONSTRAINT=str(CHECKOUT / "constraints.txt"), PIP_NO_COMPILE="1")
    line = [word.replace("$HOME", str(home)) for word in install_command()]
    done, install_s = timed([str(bin_dir / "pip"), *line[1:]], env=env, cwd=root)
    assert done.returncode == 0, f"{' '.join(line)}:\n{done.stderr[-3000:]}"
    pip = timed([str(bin_dir / "pip"), "--version"])[0].stdout.split()[1]
    version = timed([str(bin_dir / "python"), "-c", "from importlib.metadata import version; "
                     "print(version('sparqlab'))"])[0].stdout.strip()
    print(f"\n{' '.join(line)} with pip {pip}: sparqlab {version} installed with its dependencies in "
          f"{install_s:.0f} s")
    return {"bin": str(bin_dir), "version": version, "venv": str(root / "venv")}


def session_env(installed: dict, home: Path) -> dict[str, str]:
    """The researcher's shell: the venv first on PATH, no sparqlab variables, a home folder of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARQLAB_", "VIRTUAL_ENV", "PYTHON"))}
    home.mkdir(parents=True, exist_ok=True)
    return {**env, "PATH": f"{installed['bin']}{os.pathsep}{env.get('PATH', '')}", "HOME": str(home),
            "HF_HUB_OFFLINE": "1", "VIRTUAL_ENV": str(installed["venv"])}


def venv_files(venv: Path) -> dict[str, int]:
    """Every file of the environment (Python's own bytecode caches aside) with its modification time."""
    return {str(p.relative_to(venv)): p.stat().st_mtime_ns for p in venv.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def test_the_first_session_runs_from_an_empty_folder_and_writes_only_there(installed, tmp_path):
    folder = tmp_path / "study"
    folder.mkdir()
    env = session_env(installed, tmp_path / "home")
    before = venv_files(installed["venv"])
    session = [*first_session(), ["sparqlab", "data", "show", "metaqa-2hop", "--limit", "2"]]
    outputs = {}
    for argv in session:
        done, seconds = timed([str(installed["bin"] / "sparqlab"), *argv[1:]], cwd=folder, env=env, timeout=600)
        assert done.returncode == 0, f"{' '.join(argv)}:\n{done.stderr[-3000:]}"
        print(f"{' '.join(argv[:3])}: {seconds:.1f} s")
        outputs[argv[1]] = done.stdout
    assert "Blade Runner" in outputs["query"]
    assert [json.loads(line)["id"] for line in outputs["data"].splitlines()] == ["test_0", "test_1"]
    assert "try" in outputs["runs"]  # the README lists runs before it reproduces the quickstart (checked below)

    assert (folder / ".cache" / "kg").is_dir() and (folder / "runs" / "notebooks" / "00_quickstart.ipynb").is_file()
    assert list((folder / "figures" / "quickstart").glob("*.png"))
    environment = json.loads(next((folder / "runs" / "try").glob("*/environment.json")).read_text())
    head = subprocess.run(["git", "-C", str(CHECKOUT), "rev-parse", "HEAD"], capture_output=True, text=True)
    assert environment["git"]["revision"] == head.stdout.strip()
    version = installed["version"]
    assert environment["packages"]["sparqlab"] == version and "+g" in version  # a version per commit
    assert venv_files(installed["venv"]) == before, "the session wrote into the environment"
    assert {p.name for p in folder.iterdir()} == {".cache", "runs", "figures"}


def test_without_its_extra_a_command_stops_with_one_line_naming_it(installed, tmp_path):
    env = session_env(installed, tmp_path / "home")
    for argv, extra in [(["run", "desq", "-d", "mcqa-movies", "--limit", "2", "-m", "standin-desq"], "desq"),
                        (["train", "sft", "--base", "b", "--data", "d.jsonl", "--out", "out"], "train")]:
        done, _ = timed([str(installed["bin"] / "sparqlab"), *argv], cwd=tmp_path, env=env, timeout=120)
        assert done.returncode == 1
        assert len(done.stderr.strip().splitlines()) == 1 and f"pip install 'sparqlab[{extra}]'" in done.stderr
    assert not (tmp_path / "runs").exists() and not (tmp_path / "out").exists()  # stopped before any work


def test_init_makes_a_workspace_that_subfolders_write_to(installed, tmp_path):
    env = session_env(installed, tmp_path / "home")
    sparqlab = str(installed["bin"] / "sparqlab")
    done, _ = timed([sparqlab, "init", "study"], cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    study = tmp_path / "study"
    assert (study / WORKSPACE_MARKER).is_file() and (study / "experiments" / "all_methods.yaml").is_file()
    bundled = {p.name for p in installed["venv"].glob("lib/python3*/site-packages/sparqlab/bundled/notebooks/*.ipynb")}
    assert {p.name for p in (study / "notebooks").glob("*.ipynb")} == bundled and "00_quickstart.ipynb" in bundled
    (study / "notes").mkdir()
    done, _ = timed([sparqlab, "reproduce", "status", "00_quickstart"], cwd=study / "notes", env=env)
    assert done.returncode == 0, done.stderr
    assert str(study / "runs" / "notebooks") in done.stdout  # the workspace's runs/, found from a subfolder
    done, _ = timed([sparqlab, "reproduce", "no-such-notebook"], cwd=study, env=env)
    assert done.returncode == 1 and str(study / "notebooks") in done.stderr and "00_quickstart" in done.stderr


def test_a_clean_clone_stays_clean_after_the_first_session(tmp_path):
    """In a checkout (a fresh clone of this commit) the README's first session writes runs, figures and caches,
    none of them tracked: ``git status`` stays clean, so later runs do not record the checkout as dirty. The KG
    build is shared with the suite's cache (building it again here would test nothing more)."""
    from sparqlab.core.paths import cache_dir

    clone = tmp_path / "clone"
    done = subprocess.run(["git", "clone", "--quiet", "--local", str(CHECKOUT), str(clone)], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPARQLAB_")}
    env.update(PYTHONPATH=str(clone / "lib"), SPARQLAB_CACHE=str(cache_dir()), HF_HUB_OFFLINE="1")
    run = [sys.executable, "-c", "import sys; from sparqlab.cli import main; sys.exit(main())"]
    for argv in first_session():
        done = subprocess.run([*run, *argv[1:]], cwd=clone, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{' '.join(argv)}:\n{done.stderr[-3000:]}"
    assert list((clone / "figures").rglob("*.png")) and (clone / "runs" / "try").is_dir()
    status = subprocess.run(["git", "-C", str(clone), "status", "--porcelain", "--untracked-files=all"],
                            capture_output=True, text=True)
    assert status.stdout == ""
    environment = json.loads(next((clone / "runs" / "try").glob("*/environment.json")).read_text())
    assert environment["git"]["dirty"] is False
