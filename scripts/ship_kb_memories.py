"""Embed the DeSQ KB memories that notebook 07 uses by default and ship their vectors in data/desq_memory/.

Run after a change to the movie KG, the Wikidata property list or item labels, ``entry_text`` or the bundled MiniLM (a shipped file
whose content digest no longer matches is simply not used: the memory is embedded again on first use)::

    HF_HUB_OFFLINE=1 PYTHONPATH=lib .venv/bin/python scripts/ship_kb_memories.py

Prints, per memory, the build time and how well the shipped int8 rows keep retrieval: the largest cosine change of a
row and the top-1 agreement of 1,000 label-only queries (fixed seed) against the float vectors.
"""

from __future__ import annotations

import json
import random

import numpy as np

from sparqlab.kg import get_profile, open_kg
from sparqlab.methods.desq.kb_memory import (
    DEFAULT_EMBEDDER,
    KBMemory,
    catalogue_entries,
    kg_entries,
    prebuilt_vectors,
    ship_prebuilt,
)


def ship(name: str, entries: list, kind: str) -> dict:
    memory = KBMemory.build(entries, DEFAULT_EMBEDDER, prebuilt=False)
    path = ship_prebuilt(memory, name)
    shipped = KBMemory(entries, prebuilt_vectors(DEFAULT_EMBEDDER, entries), DEFAULT_EMBEDDER)
    cosine = np.sum(memory.vectors * shipped.vectors, axis=1)
    sample = random.Random(0).sample([e for e in memory.entries if e.kind == kind], 1000)
    queries = memory.encode([e.label for e in sample])
    agree = sum(a[0].entry.id == b[0].entry.id for a, b in zip(memory.search_vectors(queries, kind, 1),
                                                                 shipped.search_vectors(queries, kind, 1), strict=True))
    return {"file": str(path), "bytes": path.stat().st_size, "entries": len(memory),
            "build_s": memory.info["build_s"], "min_cosine": round(float(cosine.min()), 6),
            "top1_agreement": agree / len(sample)}


def main() -> None:
    with open_kg("movies", cache=False) as kg:
        movies = kg_entries(kg)
    print(json.dumps({"movies-minilm": ship("movies-minilm", movies, "entity")}), flush=True)
    print(json.dumps({"wikidata-minilm": ship("wikidata-minilm", catalogue_entries(get_profile("wikidata")),
                                              "property")}), flush=True)


if __name__ == "__main__":
    main()
