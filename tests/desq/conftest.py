"""Shared fixtures of the DeSQ tests: the movie KG, and small KB memories (a deterministic bag-of-words encoder for
the strategy logic, the real offline MiniLM where retrieval quality itself is tested)."""

from __future__ import annotations

import pytest
from desq_helpers import MOVIE_ENTRIES, small_memory

from sparqlab.methods.desq.kb_memory import KBMemory


@pytest.fixture
def movie_memory() -> KBMemory:
    return small_memory(MOVIE_ENTRIES)


@pytest.fixture(scope="session")
def movies_kg():
    """The movie KG (built on first use into the project cache) without a query cache."""
    from sparqlab.kg import open_kg
    from sparqlab.kg.movies import ensure_store

    ensure_store()
    kg = open_kg("movies", cache=False)
    yield kg
    kg.close()
