"""The SPARQL engines the endpoint tests run on: oxigraph's server always, Virtuoso where Debian's
virtuoso-opensource is installed. Where it is not, a Virtuoso test is skipped saying why — except in CI (``CI``
set, as ``.ci/run`` does after installing the package), where a missing Virtuoso fails the test instead."""

from __future__ import annotations

import os

import pytest

from sparqlab.kg.virtuoso import INSTALL_HINT, virtuoso_installed

ENDPOINT_ENGINES = ("oxigraph-server", "virtuoso")
"""The servers an embedded-vs-endpoint test runs against (parametrise a fixture with them)."""


def in_ci() -> bool:
    """Whether this is a CI run (``CI`` set to anything but empty/false/0), where an engine must not be skipped."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require_engine(engine: str) -> None:
    """Skip (fail in CI) a test of ``engine`` when it is not installed."""
    if engine == "virtuoso" and not virtuoso_installed():
        if in_ci():
            pytest.fail(f"{INSTALL_HINT}: the Virtuoso tests cannot be skipped in CI (.ci/run installs it)")
        pytest.skip(f"{INSTALL_HINT}; its tests are skipped")
