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
    import subprocess
    import sys
    import time
    import urllib.error
    import urllib.request
    from pathlib import Path

    import pyoxigraph

    from sparqlab.core.paths import data_dir
    from sparqlab.core.processes import stop_process
    from sparqlab.notebooks import free_port

    store_path = tmp_path_factory.mktemp("wd") / "store"
    store = pyoxigraph.Store(str(store_path))
    store.bulk_load(path=str(data_dir() / "wikidata_test" / "wikidata_test.ttl"), format=pyoxigraph.RdfFormat.TURTLE)
    store.flush()
    del store
    port = free_port()
    binary = str(Path(sys.executable).with_name("oxigraph"))
    process = subprocess.Popen([binary, "serve-read-only", "--location", str(store_path), "--bind",
                                f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/query"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(url + "?query=ASK%7B%7D", timeout=2).read()
                break
            except (urllib.error.URLError, ConnectionError):
                if time.monotonic() > deadline or process.poll() is not None:
                    pytest.fail("oxigraph server did not start")
                time.sleep(0.05)
        yield url
    finally:
        stop_process(process)
