"""`sparqlab leaderboard DATASET...`: the TEXT2SPARQL leaderboard rebuilt from the published files."""

from __future__ import annotations

import argparse

from sparqlab.text2sparql.metric import CONVENTIONS, OFFICIAL_METRIC


def register(subparsers) -> None:
    """Add ``sparqlab leaderboard``."""
    parser = subparsers.add_parser(
        "leaderboard", help="the TEXT2SPARQL leaderboard from the organisers' published files (+ sparqlab runs)",
        description="One row per team folder of the published files (its system result set scored without a KG, "
                    "its evaluation file, or its answers executed on the KG), plus sparqlab runs and answers files; "
                    "the published means per dataset, per language and overall, 95%% CIs over the questions, paired tests against a baseline row (docs/ck25.md).")
    parser.add_argument("datasets", nargs="+", metavar="DATASET",
                        help="ck25, db25, ck26 or db26; several give an overall group over all their questions")
    parser.add_argument("--published-dir", action="append", default=[], metavar="DATASET=DIR",
                        help="a folder of team folders for DATASET instead of data/text2sparql/published/DATASET "
                             "(repeatable)")
    parser.add_argument("--run", action="append", default=[], metavar="RUN",
                        help="a sparqlab run or run group (folder or name) over these datasets as an extra row, a "
                             "group as mean ± sd between its runs with the two-level interval (repeatable)")
    parser.add_argument("--answers", action="append", default=[], metavar="NAME=FILE",
                        help="a system's answers as an extra row NAME, executed on the dataset's KG and scored: the "
                             "official answers file, or a peer's output (GRASP's .jsonl; docs/peers.md) (repeatable)")
    parser.add_argument("--kg", default=None, metavar="KG",
                        help="the KG answers files are executed on (default: the dataset's, e.g. ck25)")
    parser.add_argument("--baseline", default=None, metavar="ROW",
                        help="row the others are tested against (paired bootstrap on set_F, McNemar on set_F = 1)")
    parser.add_argument("--metric", choices=CONVENTIONS, default=OFFICIAL_METRIC,
                        help="text2sparql: as published; text2sparql-strict: empty true sets, ASK and the combined "
                             "mean as they read (teams with only an evaluation file are left out)")
    parser.add_argument("--format", choices=["text", "csv", "md", "latex"], default="text")
    parser.add_argument("--columns", default=None,
                        help="comma-separated measures to show (set_P, set_recall, set_F, ndcg, set_F_ndcg, "
                             "f1_diff, p_mcnemar, flips; default: all)")
    parser.add_argument("--output", "-o", default=None, help="write to this file instead of standard output")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from sparqlab.experiments.table import emit
    from sparqlab.text2sparql.leaderboard import build_leaderboard

    folders = {}
    for item in args.published_dir:
        dataset, sep, folder = item.partition("=")
        if not sep:
            raise ValueError(f"--published-dir takes DATASET=DIR, got {item!r}")
        folders[dataset] = folder
    from sparqlab.cli.run_options import parse_pairs

    answers = parse_pairs(args.answers, "--answers")
    kg = None
    if args.kg:
        from sparqlab.kg import open_kg

        kg = open_kg(args.kg)
    try:
        table = build_leaderboard(args.datasets, folders=folders, runs=args.run, answers=answers, kg=kg,
                                  baseline=args.baseline, convention=args.metric)
    finally:
        if kg is not None:
            kg.close()
    columns = [c.strip() for c in args.columns.split(",")] if args.columns else None
    emit(table, args.format, columns, args.output)
    return 0
