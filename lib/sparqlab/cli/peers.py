"""`sparqlab import FORMAT FILE...`: peers' published output files as run folders (docs/peers.md)."""

from __future__ import annotations

import argparse

from sparqlab.data.peers import CONVERTERS


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
    from sparqlab.methods.external import ImportedOutput
    from sparqlab.runs import run

    config = run_config(args)
    if not config.dataset:
        raise ValueError("name the dataset the files answer with --dataset (e.g. -d ck25 --kg ck25)")
    for path in args.files:
        method = ImportedOutput(file=path, output_format=args.format, language=config.language or "en",
                                id_map=args.id_map)
        result = run(method, config=config)
        metrics = result.metrics
        print(f"{path} -> {result.run_dir}  ({metrics['n_done']}/{metrics['n_questions']} questions; "
              f"{peer_cost_line(result.predictions())})")
    return 0


def peer_cost_line(predictions) -> str:
    """The peer's cost per question as its file recorded it (the run's model calls are the replay's: none)."""
    parts = []
    for column, label, unit in (("extra.peer_elapsed_s", "peer seconds", " s"),
                                ("extra.peer_model_calls", "model calls", ""),
                                ("extra.peer_tool_calls", "tool calls", "")):
        values = predictions[column].dropna() if column in predictions else []
        if len(values):
            parts.append(f"{label} per question: mean {values.mean():.1f}{unit}, median {values.median():.1f}{unit}")
    return "; ".join(parts) or "the file records no times or calls"
