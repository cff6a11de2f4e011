"""Fixtures of the agent tests: the Wikidata-shaped test KGs behind real servers (oxigraph's; Virtuoso too),
``standin-agent`` behind the project's OpenAI-compatible server, and per-test runs/response-cache folders.

The movie KG and its label index stay in the project cache (building them per test would take minutes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparqlab.engines import serve_on


@pytest.fixture(scope="session")
def wd_store(tmp_path_factory, wikidata_ttl) -> Path:
    """A pyoxigraph store holding a Wikidata-shaped test KG (each fixture in turn; closed before the server opens
    it)."""
    from support.wikidata_fixtures import wikidata_store

    return wikidata_store(wikidata_ttl, tmp_path_factory.mktemp("wdstore"))


@pytest.fixture(scope="session")
def wd_server(wd_store) -> str:
    """The test KG behind ``oxigraph serve-read-only`` on a free 127.0.0.1 port; yields the query URL."""
    with serve_on("oxigraph-server", wd_store) as url:
        yield url


@pytest.fixture(scope="session")
def wd_endpoint(wd_store, endpoint_engine) -> str:
    """The test KG behind each server in turn (oxigraph's, Virtuoso with the KG in a named graph); yields the
    URL a client opens."""
    with serve_on(endpoint_engine, wd_store) as url:
        yield url


@pytest.fixture(scope="session")
def agent_model_url() -> str:
    """``standin-agent`` served by ``sparqlab.serving.model_server`` (OpenAI-compatible HTTP) on 127.0.0.1."""
    import sparqlab.methods.agents  # noqa: F401  (registers standin-agent)
    from sparqlab.serving.model_server import serve_in_background

    with serve_in_background("standin-agent") as url:
        yield url


@pytest.fixture
def run_settings(tmp_path) -> dict:
    """RunConfig fields that keep a test's runs and model responses in its own folder."""
    return {"output_root": str(tmp_path / "runs"), "cache_path": str(tmp_path / "responses.sqlite"),
            "progress": False}
