"""Fixtures of the KG, engine and graph tests (imported by tests/conftest.py): the movie KG's store (built once
into the project cache), a small RDF file and store, and real ``oxigraph serve-read-only`` servers on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sparqlab.core.processes import free_port
from sparqlab.engines.oxigraph_server import serve_store

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
    from sparqlab.graphs.movies import ensure_store

    return ensure_store()


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


@pytest.fixture
def refused_url() -> str:
    """A local URL where nothing listens."""
    return f"http://127.0.0.1:{free_port()}/query"


@pytest.fixture(scope="session")
def small_server(small_store) -> Iterator[str]:
    with serve_store(small_store) as url:
        yield url


@pytest.fixture(scope="session")
def movie_server(movie_store) -> Iterator[str]:
    """The movie KG behind a real oxigraph server that stops any query after 3 s."""
    with serve_store(movie_store, timeout_s=3) as url:
        yield url
