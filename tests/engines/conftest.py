"""The KG test fixtures (tests/support/kg_stores.py): the movie KG, a small RDF file and store, oxigraph
servers."""

from support.kg_stores import (  # noqa: F401 - fixtures for this folder's tests
    movie_server,
    movie_store,
    movies_kg,
    refused_url,
    small_server,
    small_store,
    small_triples,
    small_ttl,
)
