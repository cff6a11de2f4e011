"""Do the three stores agree? The CK25 reference queries and MetaQA gold queries on the embedded store, oxigraph's
server and Virtuoso (Debian's virtuoso-opensource; its KG in a named graph, reached with ``default-graph-uri``).

Reports, per query set and server, how many queries give rows identical to the embedded store's, the same rows
in another order, the same flattened values, or different results, with the cause of each difference
(:func:`sparqlab.text2sparql.engine_report.store_difference`); the official-metric score (TEXT2SPARQL, ``set_F``) of the
50 CK25 reference queries on each store; and Virtuoso's start-up time (empty database, then with each KG loaded).

Usage: python benchmarks/engine_agreement.py [--metaqa 100] [--json OUT] [--markdown]
(``--metaqa N``: the first N gold queries of each of metaqa-1hop/2hop/3hop.)
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from typing import Any

from sparqlab.data import registry
from sparqlab.engines import serve_on
from sparqlab.kg import open_kg
from sparqlab.text2sparql.answers import reference_answers, score_answers
from sparqlab.text2sparql.engine_report import execution, store_difference

SERVERS = ("oxigraph-server", "virtuoso")


def compare(name: str, questions: list, stores: dict[str, Any]) -> dict[str, Any]:
    """Every gold query of ``questions`` on every store, compared with the embedded store's result."""
    report: dict[str, Any] = {"queries": len(questions)}
    runs = {store: {q.id: execution(kg, q.gold_sparql) for q in questions} for store, kg in stores.items()}
    for server in SERVERS:
        counts, causes, differing = collections.Counter(), collections.Counter(), []
        for question in questions:
            found = store_difference(question.gold_sparql, runs["embedded"][question.id], runs[server][question.id])
            counts[found["agreement"]] += 1
            if found["cause"]:
                causes[found["cause"]] += 1
            if found["agreement"] not in ("identical", "reordered"):
                differing.append({"id": question.id, **found,
                                  "error": runs[server][question.id]["error"] or runs["embedded"][question.id]["error"]})
        report[server] = {"agreement": dict(counts), "causes": dict(causes), "differing": differing}
    print(f"{name}: {report['queries']} queries; " + "; ".join(
        f"{server}: {report[server]['agreement']} causes {report[server]['causes']}" for server in SERVERS),
        file=sys.stderr)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--metaqa", type=int, default=100, help="gold queries per MetaQA hop count (default 100)")
    parser.add_argument("--json", metavar="OUT", help="write the report as JSON")
    parser.add_argument("--markdown", action="store_true", help="print the agreement table as Markdown")
    args = parser.parse_args()

    from sparqlab.engines.virtuoso import serve_virtuoso
    from sparqlab.graphs.movies import ensure_store as movie_store
    from sparqlab.text2sparql.ck25_store import ensure_store as ck25_store

    start = time.perf_counter()
    with serve_virtuoso({}):
        empty_start_s = time.perf_counter() - start
    sets = {"ck25": ("ck25", registry.load("ck25"), ck25_store()),
            "metaqa": ("movies", [q for hops in ("1hop", "2hop", "3hop")
                                  for q in registry.load(f"metaqa-{hops}")[:args.metaqa]], movie_store())}
    report: dict[str, Any] = {"virtuoso_start_s": {"empty": round(empty_start_s, 2)}}
    for name, (profile, questions, store) in sets.items():
        embedded = open_kg(profile, cache=False)
        with serve_on("oxigraph-server", store) as oxigraph_url:
            start = time.perf_counter()
            with serve_on("virtuoso", store) as virtuoso_url:
                report["virtuoso_start_s"][name] = round(time.perf_counter() - start, 2)
                stores = {"embedded": embedded, "oxigraph-server": open_kg(oxigraph_url, profile=profile, cache=False),
                          "virtuoso": open_kg(virtuoso_url, profile=profile, cache=False)}
                report[name] = compare(name, questions, stores)
                report[name]["engines"] = {store: kg.engine().label for store, kg in stores.items()}
                if name == "ck25":
                    report[name]["official_set_F"] = {
                        store: round(score_answers(reference_answers(questions), questions, kg)["summary"]["set_F"],
                                     4) for store, kg in stores.items()}
        embedded.close()
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=2)
    if args.markdown:
        print(markdown(report))
    else:
        print(json.dumps(report, indent=2))


def markdown(report: dict[str, Any]) -> str:
    """The agreement table: per query set and server, the counts of each agreement and the causes."""
    lines = ["| queries | server | identical | reordered | same set | different | causes (all but identical) |",
             "|---|---|---:|---:|---:|---:|---|"]
    for name in ("ck25", "metaqa"):
        for server in SERVERS:
            counts = report[name][server]["agreement"]
            causes = ", ".join(f"{cause} {n}" for cause, n in sorted(report[name][server]["causes"].items()))
            lines.append(f"| {name} ({report[name]['queries']}) | {report[name]['engines'][server]} | "
                         f"{counts.get('identical', 0)} | {counts.get('reordered', 0)} | {counts.get('same set', 0)} | "
                         f"{counts.get('different', 0)} | {causes or '—'} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
