"""``sparqlab ggc``: sweep the gate threshold (Generator–Gate–Corrector). Training a gate and building corrector
data moved to ``sparqlab train gate`` and ``sparqlab train data --builder ggc-corrector``, where every model and
training file of the project is made; ``ggc train-gate`` / ``ggc build-data`` still run them, with a note."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers) -> None:
    """Add ``sparqlab ggc sweep`` and the old spellings ``ggc train-gate`` / ``ggc build-data``, which moved to
    ``sparqlab train gate`` / ``sparqlab train data --builder ggc-corrector``."""
    from sparqlab.cli.run_options import add_ggc_run_options
    from sparqlab.cli.train import add_data_arguments, add_gate_arguments

    parser = subparsers.add_parser("ggc", help="Generator-Gate-Corrector: threshold sweeps (gates and corrector "
                                   "data: `sparqlab train gate|data`)", description=__doc__)
    commands = parser.add_subparsers(dest="ggc_command", metavar="SUBCOMMAND")
    parser.set_defaults(handler=lambda args: parser.print_help() or 2)

    train = commands.add_parser("train-gate", help=f"moved: {MOVED['train-gate']}",
                                description=f"Moved to {MOVED['train-gate']} (same options); this spelling runs it.")
    add_gate_arguments(train)
    train.set_defaults(handler=_moved("train-gate", "sparqlab.cli.train", "handle_gate"))

    build = commands.add_parser("build-data", help=f"moved: {MOVED['build-data']}",
                                description=f"Moved to {MOVED['build-data']} (same options); this spelling runs it.")
    add_data_arguments(build, builder="ggc-corrector")
    build.set_defaults(handler=_moved("build-data", "sparqlab.cli.train", "handle_data"))

    sweep = commands.add_parser(
        "sweep", help="pipeline and gate metrics for several thresholds from one gated run",
        description="One gated run at the smallest threshold (generator outputs and gate probabilities computed "
                    "once, the corrector called once per question any threshold triggers), then every "
                    "threshold's metrics from its records.")
    add_ggc_run_options(sweep, split="test", limit=None)
    sweep.add_argument("--gate-path", type=Path, required=True, help="trained gate folder")
    sweep.add_argument("--thresholds", default="0.1,0.25,0.5,0.75,0.9",
                       help="comma-separated values of the run's gate threshold τ (GGC's threshold field)")
    sweep.add_argument("--out", type=Path, help="also write the table as CSV here")
    sweep.set_defaults(handler=handle_sweep)


MOVED = {"train-gate": "`sparqlab train gate`", "build-data": "`sparqlab train data --builder ggc-corrector`"}
"""The old ``ggc`` subcommands and the one command each moved to."""


def _moved(old: str, module: str, handler: str):
    """A handler that says where ``sparqlab ggc OLD`` moved, then runs the command it moved to."""

    def run(args: argparse.Namespace) -> int:
        import importlib

        print(f"note: `sparqlab ggc {old}` moved to {MOVED[old]}; running it", file=sys.stderr)
        return getattr(importlib.import_module(module), handler)(args)

    return run


def handle_sweep(args: argparse.Namespace) -> int:
    import pandas as pd

    from sparqlab.cli.run_options import ggc_options, ggc_run_config
    from sparqlab.experiments.ggc import threshold_sweep
    from sparqlab.kg import open_kg

    thresholds = [float(t) for t in args.thresholds.split(",") if t.strip()]
    config = ggc_run_config(args)
    options = ggc_options(args, ("mode", "gate_path", "threshold"))
    with open_kg(config.kg) as kg:
        result, table = threshold_sweep(config, args.gate_path, thresholds, kg=kg, **options)
    columns = ["threshold", "gate_trigger_rate", "gate_precision", "gate_recall", "gate_f1", "gate_fpr", "accuracy",
               "item_f1", "corrector_calls", "time_s", "cached_calls"]
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(table[columns].round(4).to_string(index=False))
    print(f"run: {result.run_dir}")
    if args.out:
        table.to_csv(args.out, index=False)
    return 0
