"""Shared fixtures of the DeSQ tests: the movie KG, and small KB memories (a deterministic bag-of-words encoder for
the strategy logic, the real offline MiniLM where retrieval quality itself is tested)."""

from __future__ import annotations

import pytest
from desq_helpers import MOVIE_ENTRIES, small_memory

from sparqlab.methods.desq.kb_memory import KBMemory


@pytest.fixture
def movie_memory() -> KBMemory:
    return small_memory(MOVIE_ENTRIES)



@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """Runs and the cache of a test in its own folder."""
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path
