"""GenOp evaluation costs: the typed-mapping algebra against the store's own SPARQL evaluation (Proposition 1's
queries over the movie KG), and EvalSCC's model calls as the domain cap B grows, with and without memoisation.

For the GenOp-free queries, these paths are timed side by side in one run, interleaved, per query (issue 23
target 6: <= 1.5 x the store): ``algebra``, the operator-by-operator evaluation (``EvalSettings(pushdown=False)``);
``fresh loop``, the pushed-down evaluation in a fresh ``asyncio.run`` loop per call (how ``run_genop`` ran before);
``pushdown``, the same on the thread's kept loop (``run_sync(reuse_loop=True)``, how ``run_genop`` runs now);
``run_genop``, the whole call from the text (parse cache hit included); and ``store``, the KG's own
``SELECT DISTINCT`` of the text. rdflib's parse of the text (paid once per text, then cached) is reported apart.
Client CPU (this process's time: the store's work runs in the embedded store's worker process) is reported as
a load-independent view of the overhead.

Usage: python benchmarks/genop_bench.py [--repeat 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sparqlab.core.event_loops import run_sync
from sparqlab.kg import open_kg
from sparqlab.methods.genop import EvalSettings, Oracle, ScriptedModel, run_genop
from sparqlab.methods.genop.examples import EXAMPLES, write_example_files
from sparqlab.methods.genop.semantics import evaluate, kg_query_fn
from sparqlab.methods.genop.syntax import _parse_cached, parse_genop_query

parse_uncached = _parse_cached.__wrapped__  # rdflib's parse as paid by the first call with a text

M = "http://sparqlab.org/movies/entity/"
RIDLEY = '?d rdfs:label "Ridley Scott" . ?f mrel:directed_by ?d .'
QUERIES = {
    "union": 'SELECT ?f ?d WHERE { { ?d rdfs:label "Ridley Scott" . ?f mrel:directed_by ?d } UNION '
             '{ ?d rdfs:label "Tony Scott" . ?f mrel:directed_by ?d } }',
    "optional": f"SELECT ?f ?r WHERE {{ {RIDLEY} OPTIONAL {{ ?f mrel:has_imdb_rating ?r }} }}",
    "minus": f"SELECT ?f WHERE {{ {RIDLEY} MINUS {{ ?f mrel:release_year <{M}Year/2001> }} }}",
    "filter": 'SELECT ?f ?w WHERE { ?p rdfs:label "Woody Allen" . ?f mrel:directed_by ?p . '
              "?f mrel:written_by ?w . FILTER(?w != ?p) }",
    "large": f"SELECT ?f ?a WHERE {{ ?f mrel:release_year <{M}Year/2001> . ?f mrel:starred_actors ?a }}",  # ~770 rows
}


def scaled_script(width: int) -> dict[str, list[str]]:
    """Example 1 with ``width`` proposals per prompt; each (topic_i, city_i) supports itself."""
    topics = [f"topic{i}" for i in range(width)]
    cities = [f"city{i}" for i in range(width)]
    script = {"Suggest a topic related to Paris and <unknown:?z>": topics}
    script.update({f"Suggest a city related to topic {t}": cities for t in topics})
    script.update({f"Suggest a topic related to Paris and {c}": [t] for c, t in zip(cities, topics, strict=True)})
    return script


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timing repetitions (median reported)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    report: dict = {"algebra_vs_sparql": {}, "evalscc_calls": []}

    movies = open_kg("movies", cache=False, max_rows=50_000)
    query_fn = kg_query_fn(movies)
    prefixes = movies.profile.prefixes
    oracle = Oracle.for_model(ScriptedModel({}))  # no GenOp: never called

    def evaluation(parsed, pushdown: bool, reuse_loop: bool):
        return lambda: run_sync(evaluate(parsed, query_fn, oracle, EvalSettings(pushdown=pushdown),
                                         movies.profile.label_predicate), reuse_loop=reuse_loop)

    for name, text in QUERIES.items():
        parsed = parse_genop_query(text, prefixes)
        paths = {
            "algebra": evaluation(parsed, False, True),
            "fresh_loop": evaluation(parsed, True, False),
            "pushdown": evaluation(parsed, True, True),
            "run_genop": lambda t=text: run_genop(t, movies, oracle),
            "store": lambda t=text: movies.query(t.replace("SELECT ", "SELECT DISTINCT ", 1)),
        }
        answers = {key: path() for key, path in paths.items()}  # warm-up, and the answers must agree
        store_rows = {frozenset((v, (t.type, t.value, t.datatype, t.lang)) for v, t in r.items())
                      for r in answers.pop("store").rows}
        for key, result in answers.items():
            rows = {frozenset((v, (t.type, t.value, t.datatype, t.lang)) for v, t in r.items())
                    for r in result.to_query_result().rows}
            if rows != store_rows:
                raise SystemExit(f"{name}: {key} answers differ from the store's")
        wall: dict[str, list[float]] = {key: [] for key in paths}
        cpu: dict[str, list[float]] = {key: [] for key in paths}
        for _ in range(args.repeat):
            for key, path in paths.items():
                start, start_cpu = time.perf_counter(), time.process_time()
                path()
                cpu[key].append(time.process_time() - start_cpu)
                wall[key].append(time.perf_counter() - start)
        parse = [timed(lambda t=text: parse_uncached(t, tuple(sorted(prefixes.items()))))
                 for _ in range(max(1, args.repeat // 5))]
        row = {key + "_s": statistics.median(ts) for key, ts in wall.items()}
        row.update({key + "_cpu_s": statistics.mean(ts) for key, ts in cpu.items()})
        row["parse_s"] = statistics.median(parse)
        for key in ("algebra", "fresh_loop", "pushdown", "run_genop"):
            row[f"{key}/store"] = row[key + "_s"] / row["store_s"]
        report["algebra_vs_sparql"][name] = row
        print(f"{name:9s} " + "  ".join(f"{key} {row[key + '_s'] * 1000:6.2f} ms" for key in paths)
              + "  |  " + "  ".join(f"{key}/store {row[key + '/store']:5.2f}"
                                    for key in ("algebra", "fresh_loop", "pushdown", "run_genop"))
              + "  |  client CPU ms: " + " ".join(f"{key} {row[key + '_cpu_s'] * 1000:.2f}" for key in paths)
              + f"  |  parse (uncached) {row['parse_s'] * 1000:.1f} ms")

    paper = open_kg(write_example_files(tempfile.mkdtemp())["graph"], cache=False)
    for width in (2, 4, 8):
        for memoise in (True, False):
            result = run_genop(EXAMPLES["example1"]["query"], paper,
                               Oracle.for_model(ScriptedModel(scaled_script(width)), memoise=memoise),
                               EvalSettings(k=width, b=width))
            row = {"B": width, "memoise": memoise, "model_calls": result.model_calls, "rows": len(result.rows)}
            report["evalscc_calls"].append(row)
            print(f"EvalSCC B=K={width:2d} memo={'on ' if memoise else 'off'} model calls {result.model_calls:5d} "
                  f"accepted {len(result.rows)}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
