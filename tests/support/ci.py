"""A program a test needs and the machine may lack (Chromium, Virtuoso): the test is skipped saying why — except
in CI (``CI`` set, as ``.ci/run`` does after installing both), where a missing program fails it instead."""

from __future__ import annotations

import os

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
