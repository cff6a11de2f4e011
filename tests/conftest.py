"""Suite-wide settings and fixtures: every figure saved while the tests run (also in the notebook kernels they
start, which inherit the environment) is checked strictly, so a layout problem fails the test that drew it; one
movie KG for the session (folders that need another variant, such as tests/kg, define their own); the two
Wikidata-shaped fixtures every Wikidata test runs on (``wikidata_ttl``); the SPARQL servers an
embedded-vs-endpoint test runs against (``endpoint_engine``: oxigraph's server and Virtuoso); the real small model
(``real_model``: SmolLM2-135M on llama.cpp, :mod:`support.real_model`)."""

import os
from pathlib import Path

import pytest

from sparqlab.plots.check import CHECK_ENV
from support.engines import ENDPOINT_ENGINES, require_engine
from support.real_model import converted_real_model, real_model  # noqa: F401 - SmolLM2-135M served; converted
from support.wikidata_fixtures import WIKIDATA_FIXTURES, wikidata_store

os.environ[CHECK_ENV] = "strict"


@pytest.fixture(scope="session")
def movies_kg():
    """The movie KG (built on first use into the project cache) without a query cache, shared by the session."""
    from sparqlab.kg import open_kg
    from sparqlab.kg.movies import ensure_store

    ensure_store()
    kg = open_kg("movies", cache=False)
    yield kg
    kg.close()


@pytest.fixture(scope="session", params=sorted(WIKIDATA_FIXTURES))
def wikidata_ttl(request) -> Path:
    """Each Wikidata-shaped fixture file in turn: a test using it runs once per fixture."""
    return WIKIDATA_FIXTURES[request.param]


@pytest.fixture(scope="session")
def wikidata_shaped_endpoint(tmp_path_factory, wikidata_ttl):
    """A small Wikidata-shaped test KG (each fixture in turn) behind a real ``oxigraph serve-read-only`` on
    127.0.0.1. Like QLever (and unlike Wikidata's service) it predefines no prefixes, so it stands in for a QLever
    mirror of Wikidata."""
    from sparqlab.kg.server import serve_store

    with serve_store(wikidata_store(wikidata_ttl, tmp_path_factory.mktemp("wd"))) as url:
        yield url


@pytest.fixture(scope="session", params=ENDPOINT_ENGINES)
def endpoint_engine(request) -> str:
    """Each SPARQL server in turn (``oxigraph-server``, ``virtuoso``): a test using it runs once per engine;
    Virtuoso's is skipped where it is not installed, and fails in CI."""
    require_engine(request.param)
    return request.param


@pytest.fixture(scope="session")
def movie_endpoint(endpoint_engine):
    """The movie KG behind each server (:func:`sparqlab.kg.server.serve_on`; on Virtuoso in a named graph, the
    URL carrying ``default-graph-uri``)."""
    from sparqlab.kg.movies import ensure_store
    from sparqlab.kg.server import serve_on

    with serve_on(endpoint_engine, ensure_store()) as url:
        yield url
