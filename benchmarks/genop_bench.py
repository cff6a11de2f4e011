"""GenOp evaluation costs: the typed-mapping algebra against the store's own SPARQL evaluation (Proposition 1's
queries over the movie KG), and EvalSCC's model calls as the domain cap B grows, with and without memoisation.

For the GenOp-free queries, three paths are timed side by side in one run: the operator-by-operator algebra
(``EvalSettings(pushdown=False)``, the old path), the default that pushes GenOp-free subpatterns to the store
(issue 23 target 6: <= 1.5 x the store), and the store alone; the evaluation is timed on the parsed query, and
the parse (rdflib's SPARQL parser, paid once per query text) is reported on its own.

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

from sparqlab.kg import open_kg
from sparqlab.llm.base import run_sync
from sparqlab.methods.genop import EvalSettings, Oracle, ScriptedModel, run_genop
from sparqlab.methods.genop.examples import EXAMPLES, write_example_files
from sparqlab.methods.genop.semantics import evaluate, kg_query_fn
from sparqlab.methods.genop.syntax import parse_genop_query

M = "http://sparqlab.org/movies/entity/"
RIDLEY = '?d rdfs:label "Ridley Scott" . ?f mrel:directed_by ?d .'
QUERIES = {
    "union": 'SELECT ?f ?d WHERE { { ?d rdfs:label "Ridley Scott" . ?f mrel:directed_by ?d } UNION '
             '{ ?d rdfs:label "Tony Scott" . ?f mrel:directed_by ?d } }',
    "optional": f"SELECT ?f ?r WHERE {{ {RIDLEY} OPTIONAL {{ ?f mrel:has_imdb_rating ?r }} }}",
    "minus": f"SELECT ?f WHERE {{ {RIDLEY} MINUS {{ ?f mrel:release_year <{M}Year/2001> }} }}",
    "filter": 'SELECT ?f ?w WHERE { ?p rdfs:label "Woody Allen" . ?f mrel:directed_by ?p . '
              "?f mrel:written_by ?w . FILTER(?w != ?p) }",
}


def scaled_script(width: int) -> dict[str, list[str]]:
    """Example 1 with ``width`` proposals per prompt; each (topic_i, city_i) supports itself."""
    topics = [f"topic{i}" for i in range(width)]
    cities = [f"city{i}" for i in range(width)]
    script = {"Suggest a topic related to Paris and <unknown:?z>": topics}
    script.update({f"Suggest a city related to topic {t}": cities for t in topics})
    script.update({f"Suggest a topic related to Paris and {c}": [t] for c, t in zip(cities, topics, strict=True)})
    return script


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timing repetitions (median reported)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    report: dict = {"algebra_vs_sparql": {}, "evalscc_calls": []}

    movies = open_kg("movies", cache=False, max_rows=50_000)
    query_fn = kg_query_fn(movies)

    def timed(fn) -> float:
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start

    for name, text in QUERIES.items():
        times: dict[str, list[float]] = {"parse": [], "algebra": [], "pushdown": [], "store": []}
        parsed = parse_genop_query(text, movies.profile.prefixes)
        for _ in range(args.repeat):
            times["parse"].append(timed(lambda t=text: parse_genop_query(t, movies.profile.prefixes)))
            for key, flag in (("algebra", False), ("pushdown", True)):
                times[key].append(timed(lambda f=flag, q=parsed: run_sync(evaluate(
                    q, query_fn, Oracle.for_model(ScriptedModel({})), EvalSettings(pushdown=f),
                    movies.profile.label_predicate))))
            times["store"].append(timed(lambda t=text: movies.query(t.replace("SELECT ", "SELECT DISTINCT ", 1))))
        row = {key + "_s": statistics.median(ts) for key, ts in times.items()}
        row["algebra/store"] = row["algebra_s"] / row["store_s"]
        row["pushdown/store"] = row["pushdown_s"] / row["store_s"]
        report["algebra_vs_sparql"][name] = row
        print(f"{name:10s} algebra {row['algebra_s'] * 1000:7.1f} ms  pushdown {row['pushdown_s'] * 1000:7.1f} ms  "
              f"store {row['store_s'] * 1000:7.1f} ms  pushdown/store {row['pushdown/store']:5.2f}  "
              f"algebra/store {row['algebra/store']:5.2f}  (parse {row['parse_s'] * 1000:6.1f} ms)")

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
