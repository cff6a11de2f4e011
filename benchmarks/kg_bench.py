"""Benchmark of the KG layer on the bundled movie KG.

Reports: store build time (N-Triples generation + bulk load), first-query latency (worker start), median 1-hop
lookup latency through ``KnowledgeGraph.query`` (guard + worker + JSON) and directly on pyoxigraph, label-index
build time and search latency (exact and misspelt names), and pyoxigraph vs rdflib on the same queries (median
per query type and the ratio). rdflib loads the full graph unless ``--rdflib-triples`` asks for a sample (then
both engines run on that sample, so the ratio stays like for like).

Usage: python benchmarks/kg_bench.py [--samples 200] [--rdflib-queries 30] [--rdflib-triples 0] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path


def median_ms(timings: list[float]) -> float:
    return round(statistics.median(timings) * 1000, 3)


def timed(function, *args) -> float:
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


def misspell(name: str, rng: random.Random) -> str:
    """Drop one letter and double another: a typical typo that exact lookup misses."""
    letters = [i for i, c in enumerate(name) if c.isalpha()]
    if len(letters) < 4:
        return name
    drop, double = rng.sample(letters, 2)
    return "".join(c * (2 if i == double else 1) for i, c in enumerate(name) if i != drop)


def build_benchmark() -> dict:
    """Build the store from scratch into a temporary cache (the project's cache is left alone)."""
    from sparqlab.graphs import movies

    start = time.perf_counter()
    triples = movies.read_kb()
    text, _ = movies.to_ntriples(triples)
    generate_s = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as scratch:
        stats = movies.build(Path(scratch) / "movies-bench")
    return {"build_s": stats["build_seconds"], "ntriples_generation_s": round(generate_s, 2),
            "triples": stats["triples"], "entities": stats["entities"],
            "entities_per_class": stats["entities_per_class"]}


def labels_of(store, *classes: str) -> list[str]:
    """The sorted labels of the movie KG's entities of the given classes."""
    from sparqlab.graphs.movies import class_iri
    from sparqlab.kg.profiles import RDFS

    values = " ".join(f"<{class_iri(cls)}>" for cls in classes)
    query = f"SELECT ?l WHERE {{ VALUES ?c {{ {values} }} ?e a ?c ; <{RDFS}label> ?l }}"
    return sorted(s["l"].value for s in store.query(query))


def query_sets(store, rng: random.Random, samples: int) -> dict[str, list[str]]:
    """Queries of four shapes over randomly chosen films and people (same texts for every engine)."""
    from sparqlab.data.movieqa import PREFIXES
    from sparqlab.graphs.movies import FILM, entity_iri, relation_iri

    picked_films = rng.sample(labels_of(store, FILM), samples)
    picked_people = rng.sample(labels_of(store, "Person"), samples)
    return {
        "1-hop by IRI": [f"SELECT ?o WHERE {{ <{entity_iri(FILM, f)}> <{relation_iri('directed_by')}> ?o }}"
                         for f in picked_films],
        "1-hop by label": [PREFIXES + f'SELECT ?label WHERE {{ ?f rdfs:label {json.dumps(f)} ; ?rel ?o . '
                           f'?rel rdfs:label "starred_actors" . ?o rdfs:label ?label }}' for f in picked_films],
        "2-hop by label": [PREFIXES + f'SELECT DISTINCT ?label WHERE {{ ?p rdfs:label {json.dumps(p)} . '
                           f'?f ?r1 ?p . ?r1 rdfs:label "starred_actors" . ?f ?r2 ?d . '
                           f'?r2 rdfs:label "directed_by" . ?d rdfs:label ?label }}' for p in picked_people],
        "count by label": [PREFIXES + f'SELECT (COUNT(DISTINCT ?f) AS ?n) WHERE {{ ?p rdfs:label {json.dumps(p)} . '
                           f'?f ?rel ?p }}' for p in picked_people],
    }


def kg_benchmark(samples: int, rng: random.Random) -> tuple[dict, dict[str, list[str]], str]:
    from sparqlab.kg import open_kg
    from sparqlab.kg.search import LabelIndex, build_index

    start = time.perf_counter()
    kg = open_kg("movies", cache=False)
    open_s = time.perf_counter() - start
    first_s = timed(kg.query, "ASK { ?s ?p ?o }")
    queries = query_sets(kg.store, rng, samples)
    result: dict = {"open_s": round(open_s, 3), "first_query_s": round(first_s, 3), "query_ms": {}}
    for shape, texts in queries.items():
        via_kg = [timed(kg.query, q) for q in texts]
        direct = [timed(lambda q: list(kg.store.query(q)), q) for q in texts]
        result["query_ms"][shape] = {"KnowledgeGraph.query": median_ms(via_kg), "pyoxigraph direct": median_ms(direct)}

    names = rng.sample(labels_of(kg.store, "Film", "Person"), samples)
    with tempfile.TemporaryDirectory() as scratch:
        index_path = Path(scratch) / "index.sqlite"
        index_s = timed(build_index, kg, index_path)
        index = LabelIndex(kg, index_path)
        exact = [timed(index.search, n) for n in names]
        typos = [misspell(n, rng) for n in names]
        fuzzy = [timed(index.search, t) for t in typos]
        found = sum(any(h.label == n for h in index.search(t, limit=3)) for n, t in zip(names, typos, strict=True))
    result["search"] = {"index_build_s": round(index_s, 2), "exact_ms": median_ms(exact),
                        "misspelt_ms": median_ms(fuzzy), "misspelt_found_in_top3": f"{found}/{len(names)}"}
    store_path = str(kg.store_path)
    kg.close()
    return result, queries, store_path


def engines_benchmark(store_path: str, queries: dict[str, list[str]], per_shape: int, sample: int) -> dict:
    """The same query texts on pyoxigraph and on rdflib (in-memory graph of the same triples)."""
    import pyoxigraph
    import rdflib

    store = pyoxigraph.Store.read_only(store_path)
    triples = [q.triple for q in store.quads_for_pattern(None, None, None, None)]
    if sample:
        random.Random(1).shuffle(triples)
        triples = triples[:sample]
        store = pyoxigraph.Store()
        store.extend([pyoxigraph.Quad(t.subject, t.predicate, t.object) for t in triples])
    ntriples = "".join(f"{t.subject} {t.predicate} {t.object} .\n" for t in triples)
    start = time.perf_counter()
    graph = rdflib.Graph()
    graph.parse(data=ntriples, format="nt")
    rdflib_load_s = time.perf_counter() - start
    start = time.perf_counter()
    memory = pyoxigraph.Store()
    memory.bulk_load(ntriples.encode(), format=pyoxigraph.RdfFormat.N_TRIPLES)
    oxigraph_load_s = time.perf_counter() - start

    rows = {}
    for shape, texts in queries.items():
        texts = texts[:per_shape]
        ox = [timed(lambda q: list(store.query(q)), q) for q in texts]
        rd = [timed(lambda q: list(graph.query(q)), q) for q in texts]
        same = all(len(list(store.query(q))) == len(list(graph.query(q))) for q in texts[:5])
        rows[shape] = {"pyoxigraph_ms": median_ms(ox), "rdflib_ms": median_ms(rd),
                       "rdflib/pyoxigraph": round(statistics.median(rd) / statistics.median(ox), 1),
                       "same_row_counts": same}
    return {"triples": len(triples), "sample": bool(sample), "rdflib_load_s": round(rdflib_load_s, 2),
            "pyoxigraph_load_in_memory_s": round(oxigraph_load_s, 2), "queries": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200, help="queries / names per measurement")
    parser.add_argument("--rdflib-queries", type=int, default=30, help="queries per shape on rdflib")
    parser.add_argument("--rdflib-triples", type=int, default=0, help="sample size for rdflib (0 = full KG)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args(argv)

    import pyoxigraph
    import rdflib

    report = {"machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0],
                          "pyoxigraph": pyoxigraph.__version__, "rdflib": rdflib.__version__}}
    print("building the movie KG from scratch ...", flush=True)
    report["build"] = build_benchmark()
    print(json.dumps(report["build"], indent=2), flush=True)
    print("query and search latency ...", flush=True)
    report["kg"], queries, store_path = kg_benchmark(args.samples, random.Random(args.seed))
    print(json.dumps(report["kg"], indent=2), flush=True)
    print("pyoxigraph vs rdflib ...", flush=True)
    report["engines"] = engines_benchmark(store_path, queries, args.rdflib_queries, args.rdflib_triples)
    print(json.dumps(report["engines"], indent=2), flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
