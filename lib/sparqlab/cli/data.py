"""``sparqlab data``: list the benchmarks, print a split's questions as JSONL, regenerate the MCQA-style set, take
a gold snapshot."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from sparqlab.cli.kg import add_profile_option


def register(subparsers) -> None:
    """Add ``sparqlab data list|show|generate-mcqa|snapshot-gold``."""
    from sparqlab.cli.run_options import add_run_options

    parser = subparsers.add_parser(
        "data", help="benchmarks: list, show questions, generate the MCQA set", description=__doc__
    )
    commands = parser.add_subparsers(dest="data_command", metavar="SUBCOMMAND")
    parser.set_defaults(handler=lambda args: parser.print_help() or 2)

    listing = commands.add_parser("list", help="dataset names, their KG and splits")
    listing.set_defaults(handler=handle_list)

    show = commands.add_parser("show", help="print a split's questions as JSONL (one Question per line)")
    show.add_argument("name", help="dataset name (see `sparqlab data list`) or path to an own-format JSONL file")
    show.add_argument("--split", help="split name (default: test)")
    show.add_argument("--limit", type=int, help="print only the first N questions")
    show.set_defaults(handler=handle_show)

    generate = commands.add_parser(
        "generate-mcqa",
        help="regenerate the MCQA-style question set over the movie KG",
        description="Instantiate the 64 MCQA templates with entities of the movie KG; gold answers by execution.",
    )
    generate.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    generate.add_argument("--train", type=int, default=5000, help="train size (default: 5000)")
    generate.add_argument("--dev", type=int, default=500, help="dev size (default: 500)")
    generate.add_argument("--test", type=int, default=1000, help="test size (default: 1000)")
    generate.add_argument("--kg", default="movies", help="KG name, endpoint URL or RDF file (default: movies)")
    add_profile_option(generate)
    generate.add_argument("--out", type=Path, help="output folder (default: data/mcqa_movies)")
    generate.add_argument("--workers", type=int, default=2, help="parallel gold queries (default: 2)")
    generate.set_defaults(handler=handle_generate)

    snapshot = commands.add_parser(
        "snapshot-gold", help="execute a dataset's gold queries once and keep their answers as a gold snapshot",
        description="Run every gold query of a split (of the questions that ship no gold answers) once on the KG "
                    "and write the answers with the endpoint, the date, each query's digest and each result's "
                    "digest. Runs of the same dataset, split and KG then score against the snapshot (RunConfig."
                    "gold_snapshot, `sparqlab run --gold-snapshot`) instead of a live endpoint that drifts. The "
                    "questions whose gold query failed or returned nothing are listed.")
    add_run_options(snapshot, skip=SNAPSHOT_SKIPS)
    snapshot.add_argument("--out", type=Path, default=None,
                          help="snapshot file (default: <dataset>.<split>.<kg>.json in data/gold_snapshots, or "
                               "SPARQLAB_GOLD_SNAPSHOTS, where runs find it)")
    snapshot.add_argument("--workers", type=int, default=4, help="gold queries in parallel (default 4)")
    snapshot.set_defaults(handler=handle_snapshot)


SNAPSHOT_SKIPS = ("experiment", "models", "execution", "limit", "sample", "sample_seed", "select",
                  "question_timeout_s", "generate_only", "gold_snapshot")
"""Run settings ``snapshot-gold`` does not take: it reads every question of a split (the dataset, split, KG and
answer rule are the run's flags)."""


def handle_list(args: argparse.Namespace) -> int:
    from sparqlab.data import DATASETS

    width = max(len(name) for name in DATASETS)
    for dataset in DATASETS.values():
        print(f"{dataset.name:<{width}}  {dataset.kg:<8}  {','.join(dataset.splits):<15}  {dataset.description}")
    return 0


def handle_show(args: argparse.Namespace) -> int:
    from sparqlab.data import load

    for question in load(args.name, split=args.split, limit=args.limit):
        sys.stdout.write(json.dumps(question.to_dict(), ensure_ascii=False) + "\n")
    return 0


def handle_generate(args: argparse.Namespace) -> int:
    from collections import Counter

    from sparqlab.core.paths import data_dir, outside_package
    from sparqlab.data.mcqa import generate_mcqa, write_mcqa
    from sparqlab.kg import open_kg

    start = time.perf_counter()
    sizes = {"train": args.train, "dev": args.dev, "test": args.test}
    kg = open_kg(args.kg, workers=args.workers, profile=args.profile)
    splits = generate_mcqa(kg, sizes, seed=args.seed, workers=args.workers)
    paths = write_mcqa(splits, args.out or outside_package(data_dir() / "mcqa_movies", "--out"))
    for split, questions in splits.items():
        per_type = Counter(q.metadata["qtype"] for q in questions)
        spread = f"{min(per_type.values())}-{max(per_type.values())}" if per_type else "-"
        print(
            f"{split}: {len(questions)} questions, {len(per_type)} question types ({spread} each) -> {paths[split]}"
        )
    print(f"generated in {time.perf_counter() - start:.1f}s (seed {args.seed})")
    return 0


def handle_snapshot(args: argparse.Namespace) -> int:
    """Take the snapshot, write it, print where and which questions it cannot judge."""
    from sparqlab.cli.run_options import run_config
    from sparqlab.core.paths import outside_package
    from sparqlab.data.gold_snapshot import gold_snapshots_dir, snapshot_name, take_snapshot
    from sparqlab.runs.plan import load_run_questions, resolve_run_kg

    config = run_config(args)
    if not config.dataset:
        raise ValueError("give the questions with --dataset NAME (`sparqlab data list`) or a JSONL path")
    config = config.replace(kg_options={"workers": args.workers, **config.kg_options})
    questions, split = load_run_questions(None, config)
    kg, _ = resolve_run_kg(config, None, questions)
    with kg:
        snapshot = take_snapshot(questions, kg, dataset=config.dataset, split=split, answer_match=config.answer_match,
                                 workers=args.workers)
    default = gold_snapshots_dir() / snapshot_name(config.dataset, split, kg.profile.name)
    path = snapshot.save(args.out or outside_package(default, "--out or SPARQLAB_GOLD_SNAPSHOTS"))
    errors = snapshot.gold_errors()
    print(f"{path}: {len(snapshot.entries)} questions from {snapshot.endpoint} at {snapshot.created} "
          f"(answer_match {snapshot.answer_match}, digest {snapshot.digest}), {len(errors)} gold errors")
    for qid, reason in errors.items():
        print(f"  gold error  {qid}: {reason}")
    return 0
