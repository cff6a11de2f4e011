"""`sparqlab reproduce`: execute the notebooks headless with papermill; `sparqlab lab`: open them in JupyterLab."""

from __future__ import annotations

import argparse
import secrets
import subprocess
import sys
from pathlib import Path


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "reproduce", help="execute every notebook (or the named ones) headless with papermill",
        description="Execute notebooks/*.ipynb with their default parameters (no GPU, no network needed) and "
                    "report any notebook that failed. Exit code 1 if one did. Overrides are checked against each "
                    "notebook's typed parameters cell before anything runs (`papermill --help-notebook NB` lists "
                    "them).",
    )
    parser.add_argument("notebooks", nargs="*", help="notebook file names or stems (default: all)")
    parser.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                        help="override a notebook parameter, parsed by its declared type, e.g. -p limit 200, "
                             "-p model_url http://gpu:8000/v1, -p model_url None; lists comma-separated: "
                             "-p datasets metaqa-1hop,mcqa-movies")
    parser.add_argument("-f", "--parameters-file", type=Path, default=None,
                        help="YAML file of parameter overrides (name: value); -p wins over it")
    parser.add_argument("--output-dir", type=Path, default=None,
                        help="where executed notebooks go (default: runs/notebooks)")
    parser.add_argument("--no-progress", action="store_true", help="no per-notebook lines and per-cell bar")
    parser.set_defaults(handler=_reproduce)

    lab = subparsers.add_parser(
        "lab", help="open the project's notebooks in JupyterLab (local only)",
        description="Start JupyterLab on 127.0.0.1 serving the checkout (notebooks/ and the executed copies in "
                    "runs/notebooks/). Open the printed URL in a browser; Ctrl-C stops it.")
    lab.add_argument("--port", type=int, default=8888, help="port to listen on (default 8888)")
    lab.set_defaults(handler=_lab)


def _reproduce(args: argparse.Namespace) -> int:
    import yaml

    from sparqlab.notebooks import reproduce

    parameters = {}
    if args.parameters_file:
        loaded = yaml.safe_load(args.parameters_file.read_text(encoding="utf-8")) or {}
        if not isinstance(loaded, dict):
            raise ValueError(f"{args.parameters_file} must hold a YAML mapping of parameter: value")
        parameters.update(loaded)
    parameters.update(dict(args.parameter))
    report = reproduce(args.notebooks or None, parameters, args.output_dir, progress=not args.no_progress)
    print(report.summary(), file=sys.stdout if not report.failed else sys.stderr)
    return 1 if report.failed else 0


def _lab(args: argparse.Namespace) -> int:
    from sparqlab.notebooks import lab_command

    token = secrets.token_hex(16)
    print(f"JupyterLab: http://127.0.0.1:{args.port}/lab/tree/notebooks/00_quickstart.ipynb?token={token}",
          flush=True)
    return subprocess.call(lab_command(args.port, token))
