"""DeSQ KB memory on the movie KG: build time, index size, and query latency (targets: build < 90 s on 2 cores,
query p50 < 5 ms).

Run: ``python benchmarks/kb_memory_bench.py [--queries 300] [--embedder minilm] [--out DIR | --reuse DIR]``.
The report includes the machine's 1-minute load average: on a shared machine, other jobs slow both numbers.
Query latency is measured twice: the exact search alone (a query vector against the entity block, numpy) and end
to end (embedding the query's label + description with the same model, then searching), each over ``--queries``
entries drawn with a fixed seed. The memory is built from scratch unless ``--reuse`` names a saved one; ``--out``
keeps the saved copy (e.g. for ``sparqlab run desq -o memory_dir=DIR``), else it goes to a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=300, help="number of timed queries (default 300)")
    parser.add_argument("--embedder", default="minilm", help="minilm (offline) or a sentence-transformers name")
    parser.add_argument("--out", default=None, help="keep the saved memory in this folder")
    parser.add_argument("--reuse", default=None, metavar="DIR",
                        help="load the memory saved in DIR instead of building one (query latency only)")
    args = parser.parse_args()

    from sparqlab.kg import open_kg
    from sparqlab.methods.desq.kb_memory import KBMemory, kg_entries

    with open_kg("movies", cache=False) as kg:
        start = time.perf_counter()
        entries = kg_entries(kg)
        read_s = time.perf_counter() - start
    from sparqlab.llm.embeddings import load_model

    start = time.perf_counter()
    load_model()
    load_s = time.perf_counter() - start
    build_s = None
    start = time.perf_counter()
    if args.reuse:
        memory = reloaded = KBMemory.load(args.reuse)
        reload_s = time.perf_counter() - start
    else:
        memory = KBMemory.build(entries, args.embedder)
        build_s = time.perf_counter() - start
        with tempfile.TemporaryDirectory() as scratch:
            start = time.perf_counter()
            memory.save(args.out or scratch)
            reloaded = KBMemory.load(args.out or scratch)
            reload_s = time.perf_counter() - start
    rng = random.Random(0)
    sample = rng.sample([e for e in reloaded.entries if e.kind == "entity"], args.queries)
    vectors = reloaded.encode([e.text for e in sample[:8]])  # warm-up of the encoder
    search_ms, end_to_end_ms, hits = [], [], 0
    for entry in sample:
        start = time.perf_counter()
        vector = reloaded.encode([entry.text])
        middle = time.perf_counter()
        found = reloaded.search_vectors(vector, "entity", 1)[0]
        end = time.perf_counter()
        search_ms.append(1000 * (end - middle))
        end_to_end_ms.append(1000 * (end - start))
        hits += int(found[0].entry.id == entry.id)
    del vectors
    report = {
        "entries": len(entries), "read_entries_s": round(read_s, 2), "model_load_s": round(load_s, 2),
        "build_s": build_s and round(build_s, 2), "strings_per_s": build_s and round(len(entries) / build_s, 1),
        "index_mb": round(memory.nbytes / 2**20, 1), "save_and_reload_s": round(reload_s, 2),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "search_p50_ms": round(statistics.median(search_ms), 3), "search_p95_ms": round(percentile(search_ms, .95), 3),
        "end_to_end_p50_ms": round(statistics.median(end_to_end_ms), 3),
        "end_to_end_p95_ms": round(percentile(end_to_end_ms, .95), 3),
        "self_retrieval_top1": round(hits / len(sample), 3), "queries": len(sample),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
