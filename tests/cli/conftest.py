import pytest


@pytest.fixture(scope="session")
def movies_store():
    """The movie KG store, built on first use into the project cache (the CLI opens it by name)."""
    from sparqlab.kg.movies import ensure_store

    return ensure_store()


@pytest.fixture(scope="session")
def wikidata_shaped_endpoint(tmp_path_factory):
    """The small Wikidata-shaped test KG behind a real ``oxigraph serve-read-only`` on 127.0.0.1. Like QLever
    (and unlike Wikidata's service) it predefines no prefixes, so it stands in for a QLever mirror of Wikidata."""
    import pyoxigraph

    from sparqlab.core.paths import data_dir
    from sparqlab.kg.server import serve_store

    store_path = tmp_path_factory.mktemp("wd") / "store"
    store = pyoxigraph.Store(str(store_path))
    store.bulk_load(path=str(data_dir() / "wikidata_test" / "wikidata_test.ttl"), format=pyoxigraph.RdfFormat.TURTLE)
    store.flush()
    del store
    with serve_store(store_path) as url:
        yield url
