"""Fixtures of the attack tests: isolated caches, a small store, and a local listener that counts connections
(the target a hostile ``SERVICE`` clause would call)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

SMALL_TTL = """\
@prefix ex: <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:alice a ex:Person ; rdfs:label "Alice" ; ex:knows ex:bob .
ex:bob a ex:Person ; rdfs:label "Bob" .
"""

_ANSWER = (b'{"head": {"vars": ["a", "b", "c"]}, "results": {"bindings": [{"a": {"type": "literal", '
           b'"value": "leaked"}}]}}')


@pytest.fixture(autouse=True)
def isolated_paths(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SPARQLAB_FIGURES", str(tmp_path / "figures"))
    return tmp_path


def _link_project_store(module) -> Path:
    """The test's own cache folder (``SPARQLAB_CACHE``) holding a link to the project's store of a bundled KG
    (``module``: :mod:`sparqlab.graphs.movies` or :mod:`sparqlab.text2sparql.ck25_store`), so the store is built once
    per checkout, not per test (stores are opened read-only; a test that damages a store builds its own)."""
    import os

    from sparqlab.core.paths import cache_dir

    folder = cache_dir()
    os.environ.pop("SPARQLAB_CACHE")
    try:
        module.ensure_store()
        built = module.build_dir()
        relative = built.relative_to(cache_dir())
    finally:
        os.environ["SPARQLAB_CACHE"] = str(folder)
    link = folder / relative
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(built, target_is_directory=True)
    return folder


@pytest.fixture
def movie_cache(isolated_paths):
    """The test's cache folder with the project's movie KG store linked in (:func:`_link_project_store`)."""
    from sparqlab.graphs import movies

    return _link_project_store(movies)


@pytest.fixture
def ck25_cache(isolated_paths):
    """The test's cache folder with the project's CK25 store linked in (:func:`_link_project_store`)."""
    from sparqlab.text2sparql import ck25_store as ck25

    return _link_project_store(ck25)


@pytest.fixture(scope="session")
def small_ttl(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("rdf") / "small.ttl"
    path.write_text(SMALL_TTL, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def small_kg(small_ttl):
    from sparqlab.kg import open_kg

    kg = open_kg(small_ttl, cache=False)
    yield kg
    kg.close()


class CountingListener:
    """A TCP listener on 127.0.0.1 that counts every connection and answers it as a SPARQL endpoint would, so
    that a request that got out would also produce a (scored) answer."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/sparql"
        self.connections = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                conn.settimeout(2)
                try:
                    conn.recv(65536)
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/sparql-results+json\r\n"
                                 b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(_ANSWER), _ANSWER))
                except OSError:
                    pass

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[CountingListener]:
    server = CountingListener()
    yield server
    server.close()
