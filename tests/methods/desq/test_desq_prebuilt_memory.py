"""Shipped KB memory vectors (data/desq_memory): used only for exactly the entries and embedder they were built
from, and they keep retrieval."""

import random

import numpy as np
import pytest
from desq_helpers import MOVIE_ENTRIES

from sparqlab.core.paths import data_dir
from sparqlab.kg import get_profile
from sparqlab.methods.desq import kb_memory
from sparqlab.methods.desq.kb_memory import (
    DEFAULT_EMBEDDER,
    Entry,
    KBMemory,
    canonical_order,
    catalogue_entries,
    content_digest,
    kg_entries,
    prebuilt_vectors,
    ship_prebuilt,
)


def test_shipped_vectors_are_used_for_the_same_entries_only(tmp_path, monkeypatch):
    monkeypatch.setattr(kb_memory, "data_dir", lambda: tmp_path)
    memory = KBMemory.build(MOVIE_ENTRIES, "hashing", progress=False)
    ship_prebuilt(memory, "toy")
    assert (tmp_path / kb_memory.PREBUILT_DIR / "toy.npz").exists()

    shuffled = random.Random(3).sample(MOVIE_ENTRIES, len(MOVIE_ENTRIES))  # any input order: rows follow entries
    loaded = KBMemory.build(shuffled, "hashing", progress=False)
    assert loaded.info["prebuilt"] and set(loaded.entries) == set(memory.entries)
    row = {e.id: v for e, v in zip(memory.entries, memory.vectors, strict=True)}
    assert min(float(v @ row[e.id]) for e, v in zip(loaded.entries, loaded.vectors, strict=True)) > 0.999
    for entry in MOVIE_ENTRIES:
        assert loaded.search(entry.label, entry.description, kind=entry.kind)[0].entry.id == entry.id

    renamed = [Entry(e.id, e.label + " (2)", e.description, e.kind) if i == 0 else e
               for i, e in enumerate(MOVIE_ENTRIES)]
    assert prebuilt_vectors("hashing", renamed) is None, "one changed label: embedded again"
    assert prebuilt_vectors(DEFAULT_EMBEDDER, MOVIE_ENTRIES) is None, "another embedder: embedded again"
    assert prebuilt_vectors("hashing", MOVIE_ENTRIES[:-1]) is None
    assert "prebuilt" not in KBMemory.build(MOVIE_ENTRIES, "hashing", progress=False, prebuilt=False).info


def _shipped_digest(name):
    path = data_dir() / kb_memory.PREBUILT_DIR / f"{name}.npz"
    with np.load(path) as shipped:
        return str(shipped["digest"]), shipped["codes"].shape


@pytest.mark.parametrize("name", ["movies-minilm", "wikidata-minilm"])
def test_the_shipped_memories_match_todays_entries(name, movies_kg):
    """Fails when the movie KG, the Wikidata properties or items, or ``entry_text`` changed without re-running
    scripts/ship_kb_memories.py (the memory would silently be embedded again, minutes on a CPU)."""
    entries = kg_entries(movies_kg) if name == "movies-minilm" else catalogue_entries(get_profile("wikidata"))
    digest, shape = _shipped_digest(name)
    assert shape == (len(entries), 384)
    assert digest == content_digest(DEFAULT_EMBEDDER, [entries[i] for i in canonical_order(entries)]), \
        f"data/desq_memory/{name}.npz is stale: run scripts/ship_kb_memories.py"
