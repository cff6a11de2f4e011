"""Shared fixtures of the TEXT2SPARQL dataset tests: the DBpedia-shaped fixture behind a real
``oxigraph serve-read-only`` on 127.0.0.1 (and behind each engine, Virtuoso too), and the agents' stand-in model
behind the project's model server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sparqlab.engines.oxigraph_server import serve_store


@pytest.fixture(scope="session")
def dbpedia_url() -> Iterator[str]:
    from sparqlab.graphs.dbpedia import fixture_store

    with serve_store(fixture_store()) as url:
        yield url


@pytest.fixture(scope="session")
def dbpedia_kg(dbpedia_url):
    from sparqlab.kg import open_kg

    return open_kg(dbpedia_url, profile="dbpedia", cache=False)


@pytest.fixture(scope="session")
def dbpedia_each_engine(endpoint_engine):
    """The DBpedia-shaped fixture behind each server in turn (oxigraph's, Virtuoso), opened with the profile."""
    from sparqlab.engines import serve_on
    from sparqlab.graphs.dbpedia import fixture_store
    from sparqlab.kg import open_kg

    with serve_on(endpoint_engine, fixture_store()) as url:
        yield open_kg(url, profile="dbpedia", cache=False)


@pytest.fixture(scope="module")
def agent_url():
    import sparqlab.methods.agents  # noqa: F401  (registers standin-agent)
    from sparqlab.serving.model_server import serve_in_background

    with serve_in_background("standin-agent") as url:
        yield url
