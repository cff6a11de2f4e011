"""Shared fixtures of the Freebase tests: the hand-written Freebase-shaped KG served by a real
``oxigraph serve-read-only`` on 127.0.0.1, and a KG object over that endpoint."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sparqlab.engines.oxigraph_server import serve_store


@pytest.fixture(scope="session")
def freebase_url() -> Iterator[str]:
    """The query URL of the fixture endpoint (one server for the session)."""
    from sparqlab.graphs.freebase import fixture_store

    with serve_store(fixture_store()) as url:
        yield url


@pytest.fixture(scope="session")
def freebase_kg(freebase_url):
    """The fixture endpoint with the Freebase profile, without a query cache."""
    from sparqlab.kg import open_kg

    return open_kg(freebase_url, profile="freebase", cache=False)


@pytest.fixture
def shared_search_cache(tmp_path, monkeypatch):
    """A per-test ``SPARQLAB_CACHE`` whose ``search/`` folder is the project cache's: the Freebase label index (keyed
    by the data files, not by the endpoint) is built once, not per test; runs' artifacts stay in the test folder."""
    from sparqlab.core.paths import cache_dir

    shared = cache_dir() / "search"
    shared.mkdir(parents=True, exist_ok=True)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "search").symlink_to(shared, target_is_directory=True)
    monkeypatch.setenv("SPARQLAB_CACHE", str(cache))
    return cache
