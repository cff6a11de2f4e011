"""Shared fixtures of the KG tests: the movie KG (built once into the project cache), a small RDF file, and real
``oxigraph serve-read-only`` servers on 127.0.0.1."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from sparqlab.core.processes import stop_process

SMALL_TTL = """\
@prefix ex: <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:alice a ex:Person ; rdfs:label "Alice" , "Alicia"@es ; rdfs:comment "a test person who likes to delete things" ;
    ex:knows ex:bob ; ex:age 42 .
ex:bob a ex:Person ; rdfs:label "Bob" ; ex:knows ex:carol ; ex:age 37 .
ex:carol a ex:Person ; rdfs:label "Carol" ; ex:age "29"^^xsd:integer .
ex:Person a rdfs:Class ; rdfs:label "Person" .
ex:knows a <http://www.w3.org/1999/02/22-rdf-syntax-ns#Property> ; rdfs:label "knows" ;
    rdfs:domain ex:Person ; rdfs:range ex:Person .
ex:age rdfs:label "age" .
"""


@pytest.fixture(scope="session")
def movie_store() -> Path:
    """The movie KG store (built on first use into ``SPARQLAB_CACHE`` or the project's ``.cache``)."""
    from sparqlab.kg.movies import ensure_store

    return ensure_store()


@pytest.fixture(scope="session")
def movies_kg(movie_store):
    """The movie KG without a query cache, shared by the session's tests."""
    from sparqlab.kg import open_kg

    kg = open_kg("movies", cache=False)
    yield kg
    kg.close()


@pytest.fixture(scope="session")
def small_ttl(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("rdf") / "small.ttl"
    path.write_text(SMALL_TTL, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def small_triples(small_ttl) -> int:
    """How many triples the small file holds, counted by the RDF parser itself."""
    import pyoxigraph

    return len(list(pyoxigraph.parse(path=str(small_ttl))))


@pytest.fixture(scope="session")
def small_store(tmp_path_factory, small_ttl) -> Path:
    """A persistent pyoxigraph store holding ``SMALL_TTL`` (closed before anyone opens it read-only)."""
    import pyoxigraph

    path = tmp_path_factory.mktemp("store") / "store"
    store = pyoxigraph.Store(str(path))
    store.bulk_load(path=str(small_ttl))
    store.flush()
    del store
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def oxigraph_binary() -> str:
    local = Path(sys.executable).with_name("oxigraph")
    found = str(local) if local.exists() else shutil.which("oxigraph")
    if not found:
        pytest.fail("the oxigraph server is not installed (pip install -r requirements-dev.txt)")
    return found


@contextlib.contextmanager
def oxigraph_server(store: Path, timeout_s: float | None = None) -> Iterator[str]:
    """Run ``oxigraph serve-read-only`` on a free local port; yields the query URL, stops the server after."""
    port = free_port()
    command = [oxigraph_binary(), "serve-read-only", "--location", str(store), "--bind", f"127.0.0.1:{port}"]
    if timeout_s:
        command += ["--timeout-s", str(timeout_s)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/query"
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                pytest.fail(f"oxigraph server exited: {process.stderr.read().decode(errors='replace')}")
            try:
                urllib.request.urlopen(url + "?query=ASK%7B%7D", timeout=2).read()
                break
            except (urllib.error.URLError, ConnectionError):
                if time.monotonic() > deadline:
                    pytest.fail("oxigraph server did not start within 30 s")
                time.sleep(0.05)
        yield url
    finally:
        stop_process(process)
        process.stderr.close()


@pytest.fixture
def refused_url() -> str:
    """A local URL where nothing listens."""
    return f"http://127.0.0.1:{free_port()}/query"


@pytest.fixture(scope="session")
def small_server(small_store) -> Iterator[str]:
    with oxigraph_server(small_store) as url:
        yield url


@pytest.fixture(scope="session")
def movie_server(movie_store) -> Iterator[str]:
    """The movie KG behind a real oxigraph server that stops any query after 3 s."""
    with oxigraph_server(movie_store, timeout_s=3) as url:
        yield url
