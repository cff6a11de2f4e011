"""Fixtures of the agent tests: the Wikidata-shaped test KG behind a real ``oxigraph serve-read-only`` server,
``standin-agent`` behind the project's OpenAI-compatible server, and per-test runs/response-cache folders.

The movie KG and its label index stay in the project cache (building them per test would take minutes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparqlab.core.paths import PROJECT_ROOT
from sparqlab.kg.server import serve_store

WIKIDATA_TEST = PROJECT_ROOT / "data" / "wikidata_test"


@pytest.fixture(scope="session")
def wd_store(tmp_path_factory) -> Path:
    """A pyoxigraph store holding the Wikidata-shaped test KG (closed before the server opens it)."""
    import pyoxigraph

    path = tmp_path_factory.mktemp("wdstore") / "store"
    store = pyoxigraph.Store(str(path))
    store.bulk_load(path=str(WIKIDATA_TEST / "wikidata_test.ttl"))
    store.flush()
    del store
    return path


@pytest.fixture(scope="session")
def wd_server(wd_store) -> str:
    """The test KG behind ``oxigraph serve-read-only`` on a free 127.0.0.1 port; yields the query URL."""
    with serve_store(wd_store) as url:
        yield url


@pytest.fixture(scope="session")
def agent_model_url() -> str:
    """``standin-agent`` served by ``sparqlab.llm.server`` (OpenAI-compatible HTTP) on 127.0.0.1."""
    import sparqlab.methods.agents  # noqa: F401  (registers standin-agent)
    from sparqlab.llm.server import serve_in_background

    with serve_in_background("standin-agent") as url:
        yield url


@pytest.fixture
def run_settings(tmp_path) -> dict:
    """RunConfig fields that keep a test's runs and model responses in its own folder."""
    return {"output_root": str(tmp_path / "runs"), "cache_path": str(tmp_path / "responses.sqlite"),
            "progress": False}
