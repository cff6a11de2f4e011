"""Expensive set-ups made once per test run, not once per pytest-xdist worker: a session or module fixture runs in
every worker that meets it (three workers, three fresh venvs for the install test), so the first worker to ask
builds while holding a file lock and the others wait for it and read what it recorded (pytest-xdist's documented
way: a lock in the folder the workers' temporary folders share)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock


def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary folder of this whole test run: shared by its xdist workers, new for every run."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], dict]) -> dict:
    """``build(folder)``'s record (JSON-serialisable), made once per test run in ``<run folder>/<name>``. A build
    that fails records nothing, so the next worker to ask builds again (and fails the same way, saying why)."""
    root = run_folder(tmp_path_factory)
    record = root / f"{name}.json"
    with FileLock(str(root / f"{name}.lock")):
        if not record.is_file():
            folder = root / name
            shutil.rmtree(folder, ignore_errors=True)  # what a failed build left
            folder.mkdir()
            record.write_text(json.dumps(build(folder)), encoding="utf-8")
    return json.loads(record.read_text(encoding="utf-8"))
