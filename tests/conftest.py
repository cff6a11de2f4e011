"""Suite-wide settings and fixtures: every figure saved while the tests run (also in the notebook kernels they
start, which inherit the environment) is checked strictly, so a layout problem fails the test that drew it; one
movie KG for the session (folders that need another variant, such as tests/kg, define their own); the two
Wikidata-shaped fixtures every Wikidata test runs on (``wikidata_ttl``); the SPARQL servers an
embedded-vs-endpoint test runs against (``endpoint_engine``: oxigraph's server and Virtuoso); the real small model
(``real_model``: SmolLM2-135M on llama.cpp, :mod:`support.real_model`); the stand-in model server the client and
serving tests share (``echo_server``)."""

import os
from pathlib import Path

import pytest

from sparqlab.plots.check import CHECK_ENV
from support.engines import ENDPOINT_ENGINES, require_engine
from support.kg_stores import (  # noqa: F401 - the KG, engine and graph tests' stores and servers
    movie_server,
    movie_store,
    refused_url,
    small_server,
    small_store,
    small_triples,
    small_ttl,
)
from support.real_model import converted_real_model, real_model  # noqa: F401 - SmolLM2-135M served; converted
from support.wikidata_fixtures import WIKIDATA_FIXTURES, wikidata_store

os.environ[CHECK_ENV] = "strict"


@pytest.fixture(scope="session")
def movies_kg():
    """The movie KG (built on first use into the project cache) without a query cache, shared by the session."""
    from sparqlab.graphs.movies import ensure_store
    from sparqlab.kg import open_kg

    ensure_store()
    kg = open_kg("movies", cache=False)
    yield kg
    kg.close()


@pytest.fixture(scope="session")
def echo_server():
    """Base URL of `sparqlab serve-model --model standin-echo --port 0`, started as a subprocess once (it keeps
    no state between requests)."""
    from sparqlab.serving.model_server import serve_in_background

    with serve_in_background("standin-echo", process=True) as url:
        yield url


@pytest.fixture(scope="session", params=sorted(WIKIDATA_FIXTURES))
def wikidata_ttl(request) -> Path:
    """Each Wikidata-shaped fixture file in turn: a test using it runs once per fixture."""
    return WIKIDATA_FIXTURES[request.param]


@pytest.fixture(scope="session")
def wikidata_shaped_endpoint(tmp_path_factory, wikidata_ttl):
    """A small Wikidata-shaped test KG (each fixture in turn) behind a real ``oxigraph serve-read-only`` on
    127.0.0.1. Like QLever (and unlike Wikidata's service) it predefines no prefixes, so it stands in for a QLever
    mirror of Wikidata."""
    from sparqlab.engines.oxigraph_server import serve_store

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
    """The movie KG behind each server (:func:`sparqlab.engines.serve_on`; on Virtuoso in a named graph, the
    URL carrying ``default-graph-uri``)."""
    from sparqlab.engines import serve_on
    from sparqlab.graphs.movies import ensure_store

    with serve_on(endpoint_engine, ensure_store()) as url:
        yield url
