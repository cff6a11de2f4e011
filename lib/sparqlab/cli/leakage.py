"""`sparqlab leakage --pool DATASET[:split] --test DATASET[:split]`: near-duplicates between a pool and a test set."""

from __future__ import annotations

import argparse
import json


def register(subparsers) -> None:
    """Add ``sparqlab leakage``."""
    from sparqlab.runs.leakage import QUERY_THRESHOLD, TEXT_THRESHOLD

    parser = subparsers.add_parser(
        "leakage", help="near-duplicate questions between an example/training pool and a test set",
        description="For every test question, its most similar pool question by text (MiniLM cosine) and by "
                    "normalised gold query; a pair is a near-duplicate when either similarity reaches its "
                    "threshold. The runner records the same report in metrics.json for every pool a method "
                    "reads (docs/metrics.md).")
    parser.add_argument("--pool", required=True, metavar="DATASET[:SPLIT]",
                        help="the pool: a dataset name (or JSONL path) and optionally its split")
    parser.add_argument("--test", required=True, metavar="DATASET[:SPLIT]", help="the scored questions")
    parser.add_argument("--language", default=None,
                        help="only the test questions of this language (multilingual datasets)")
    parser.add_argument("--text-threshold", type=float, default=TEXT_THRESHOLD,
                        help=f"MiniLM cosine from which two questions are near-duplicates (default {TEXT_THRESHOLD})")
    parser.add_argument("--query-threshold", type=float, default=QUERY_THRESHOLD,
                        help=f"normalised-query similarity from which two are near-duplicates (default "
                             f"{QUERY_THRESHOLD})")
    parser.add_argument("--all", action="store_true", help="list every test question, not only near-duplicates")
    parser.add_argument("--json", action="store_true", help="the report as JSON")
    parser.set_defaults(handler=handle)


def _load(spec: str, language: str | None = None):
    from sparqlab.data import registry

    name, _, split = spec.partition(":")
    if language is not None:
        return registry.load(name, split or None, language=language)
    return registry.load(name, split or None)


def handle(args: argparse.Namespace) -> int:
    from sparqlab.core.extras import require
    from sparqlab.runs.leakage import find_pairs, leakage_report

    require("embed", what="sparqlab leakage (MiniLM similarity)")

    pool, test = _load(args.pool), _load(args.test, args.language)
    report = leakage_report(pool, test, text_threshold=args.text_threshold, query_threshold=args.query_threshold,
                            keep_pairs=None)
    if args.all:
        report["pairs"] = [p.to_json() for p in find_pairs(pool, test, text_threshold=args.text_threshold,
                                                           query_threshold=args.query_threshold)]
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    print(f"{'test':<14}{'pool (text)':<16}{'text':>6}  {'pool (query)':<16}{'query':>6}  near-duplicate")
    for pair in report["pairs"]:
        text = "-" if pair["text_similarity"] is None else f"{pair['text_similarity']:.3f}"
        print(f"{pair['test_id']:<14}{pair['pool_id']:<16}{text:>6}  {pair['query_pool_id']:<16}"
              f"{pair['query_similarity']:>6.3f}  {'yes' if pair['near_duplicate'] else 'no'}")
    print(f"{report['near_duplicates']} of {report['n_test']} test questions ({100 * report['share']:.1f} %) have a "
          f"near-duplicate among the {report['n_pool']} pool questions (text >= {args.text_threshold} or query >= "
          f"{args.query_threshold}); {report['same_query']} share their gold query exactly")
    return 0
