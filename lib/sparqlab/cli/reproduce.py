"""`sparqlab reproduce`: execute the notebooks headless with papermill."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "reproduce", help="execute every notebook (or the named ones) headless with papermill",
        description="Execute notebooks/*.ipynb with their default parameters (no GPU, no network needed) and "
                    "report any notebook that failed. Exit code 1 if one did.",
    )
    parser.add_argument("notebooks", nargs="*", help="notebook file names or stems (default: all)")
    parser.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                        help="override a notebook parameter, e.g. -p model_url http://gpu:8000/v1 -p limit 200")
    parser.add_argument("--output-dir", type=Path, default=None,
                        help="where executed notebooks go (default: runs/notebooks)")
    parser.set_defaults(handler=_reproduce)


def _reproduce(args: argparse.Namespace) -> int:
    from sparqlab.notebooks import parse_parameter, reproduce

    parameters = {name: parse_parameter(value) for name, value in args.parameter}
    report = reproduce(args.notebooks or None, parameters, args.output_dir)
    print(report.summary(), file=sys.stdout if not report.failed else sys.stderr)
    return 1 if report.failed else 0
