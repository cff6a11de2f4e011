"""A program a test needs and the machine may lack (Chromium, Virtuoso): the test is skipped saying why — except
in CI (``CI`` set, as ``.ci/run`` does after installing both), where a missing program fails it instead; and the
folder CI keeps between runs for what is slow to make and never changes for the same input."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def in_ci() -> bool:
    """Whether this is a CI run (``CI`` set to anything but empty/false/0), where a check must not be skipped."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require_program(installed: bool, hint: str, what: str) -> None:
    """Skip ``what`` (fail it in CI) when its program is not ``installed``; ``hint`` says how to install it."""
    if installed:
        return
    if in_ci():
        pytest.fail(f"{hint}: {what} cannot be skipped in CI (.ci/run installs it)")
    pytest.skip(f"{hint}; {what} skipped")


def ci_cache() -> Path:
    """The folder kept between CI runs (``SPARQLAB_CI_CACHE``, default ``~/.cache/sparqlab-ci``), as ``make setup``
    keeps the llama.cpp wheel there: for builds whose output is fixed by their input (a key in the folder name)."""
    return Path(os.environ.get("SPARQLAB_CI_CACHE") or Path.home() / ".cache" / "sparqlab-ci")
