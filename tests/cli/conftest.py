import pytest


@pytest.fixture(scope="session")
def movies_store():
    """The movie KG store, built on first use into the project cache (the CLI opens it by name)."""
    from sparqlab.kg.movies import ensure_store

    return ensure_store()


@pytest.fixture(scope="session")
def wikidata_shaped_endpoint(tmp_path_factory, wikidata_ttl):
    """A small Wikidata-shaped test KG (each fixture in turn) behind a real ``oxigraph serve-read-only`` on
    127.0.0.1. Like QLever (and unlike Wikidata's service) it predefines no prefixes, so it stands in for a QLever
    mirror of Wikidata."""
    from sparqlab.kg.server import serve_store
    from wikidata_fixtures import wikidata_store

    with serve_store(wikidata_store(wikidata_ttl, tmp_path_factory.mktemp("wd"))) as url:
        yield url
