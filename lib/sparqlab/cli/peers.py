"""`sparqlab import FORMAT FILE...`: peers' published output files as run folders (docs/peers.md)."""

from __future__ import annotations

import argparse

from sparqlab.text2sparql.peers import CONVERTERS


def register(subparsers) -> None:
    """Add ``sparqlab import``."""
    from sparqlab.cli.run_options import add_run_options

    parser = subparsers.add_parser(
        "import", help="a peer's published outputs (GRASP's JSONL, an answers file) as a run folder",
        description="One run folder per FILE (method `imported`): the peer's final queries executed on the run's "
                    "KG and scored like every method's, its conversation, times and calls in the traces. "
                    "The run is an ordinary row of `sparqlab table`, `runs` and `leaderboard --run`. --language: the "
                    "language of the questions the files answer (default en). Any dataset: a TEXT2SPARQL "
                    "edition's files are keyed by its qnames, another dataset's by its question ids or through "
                    "--id-map.")
    parser.add_argument("format", choices=sorted(CONVERTERS), help="the files' format")
    parser.add_argument("files", nargs="+", metavar="FILE", help="the peer's output files")
    parser.add_argument("--id-map", metavar="FILE",
                        help="a JSON object mapping the files' question keys (qnames, GRASP ids) to the dataset's "
                             "question ids, for a dataset whose ids the files do not use")
    add_run_options(parser, skip=("models", "repeats"),
                    defaults={"experiment": "peers"})
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from sparqlab.cli.run_options import run_config
    from sparqlab.text2sparql.answers import import_peer_outputs, peer_cost_line

    for path, result in import_peer_outputs(args.files, args.format, run_config(args), args.id_map):
        metrics = result.metrics
        print(f"{path} -> {result.run_dir}  ({metrics['n_done']}/{metrics['n_questions']} questions; "
              f"{peer_cost_line(result.predictions())})")
    return 0
