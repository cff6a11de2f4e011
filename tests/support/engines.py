"""The SPARQL engines the endpoint tests run on: oxigraph's server always, Virtuoso where Debian's
virtuoso-opensource is installed. Where it is not, a Virtuoso test is skipped saying why — except in CI (``CI``
set, as ``.ci/run`` does after installing the package), where a missing Virtuoso fails the test instead."""

from __future__ import annotations

from sparqlab.engines.virtuoso import INSTALL_HINT, virtuoso_installed
from support.ci import require_program

ENDPOINT_ENGINES = ("oxigraph-server", "virtuoso")
"""The servers an embedded-vs-endpoint test runs against (parametrise a fixture with them)."""


def require_engine(engine: str) -> None:
    """Skip (fail in CI) a test of ``engine`` when it is not installed."""
    if engine == "virtuoso":
        require_program(virtuoso_installed(), INSTALL_HINT, "the Virtuoso tests")
