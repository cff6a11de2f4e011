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
    parser.add_argument("notebooks", nargs="*", metavar="[status] NOTEBOOK",
                        help="notebook file names or stems (default: all); `status [NOTEBOOK…]` shows pending / "
                             "running / done / failed (+ the failing cell's line) / missing per notebook")
    parser.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                        help="override a notebook parameter, parsed by its declared type, e.g. -p limit 200, "
                             "-p model_url http://gpu:8000/v1, -p model_url None; lists comma-separated: "
                             "-p datasets metaqa-1hop,mcqa-movies")
    parser.add_argument("-f", "--parameters-file", type=Path, default=None,
                        help="YAML file of parameter overrides (name: value); -p wins over it")
    parser.add_argument("--output-dir", type=Path, default=None,
                        help="where executed notebooks go (default: runs/notebooks)")
    parser.add_argument("--no-progress", action="store_true", help="no per-notebook lines and per-cell bar")
    parser.add_argument("--executor", choices=["local", "slurm"], default=None,
                        help="run each notebook as a submitit array task: slurm, or local (submitit's local "
                             "executor, on this machine); default: in this process")
    parser.add_argument("--serve", type=Path, default=None, metavar="FILE.yaml",
                        help="job settings: a `serve:` block (each job starts that model server; the notebooks get "
                             "its model and model_url) and `executor.slurm` resources, as in a grid file (docs/sweeps.md)")
    parser.add_argument("--real", action="store_true",
                        help="run the notebooks against a real model served here by llama.cpp (`sparqlab model "
                             "serve`; needs sparqlab[real]), each with limits that fit ~30 min on 2 cores; outputs "
                             "in runs/notebooks-real/MODEL, runs/real/MODEL and figures/real/MODEL (docs/performance.md)")
    parser.add_argument("--real-model", default=None, metavar="MODEL",
                        help="with --real: the model to serve, smollm2-135m (default) or a FILE.gguf")
    parser.add_argument("--real-threads", type=int, default=None, metavar="N",
                        help="with --real: threads of the served model (default 1: the notebook's kernel shares "
                             "the cores; 2 when nothing else runs)")
    parser.add_argument("--no-wait", action="store_true",
                        help="with --executor: submit and return (check with `sparqlab reproduce status`)")
    parser.set_defaults(handler=_reproduce)

    lab = subparsers.add_parser(
        "lab", help="open the project's notebooks in JupyterLab (local only)",
        description="Start JupyterLab on 127.0.0.1 serving the workspace (the checkout, or a folder made by "
                    "`sparqlab init`: notebooks/ and the executed copies in runs/notebooks/). Open the printed URL "
                    "in a browser; Ctrl-C stops it. Needs the lab extra: pip install 'sparqlab[lab]'.")
    lab.add_argument("--port", type=int, default=8888, help="port to listen on (default 8888)")
    lab.set_defaults(handler=_lab)


def _reproduce(args: argparse.Namespace) -> int:

    from sparqlab.core.paths import runs_dir
    from sparqlab.core.yaml_loader import load_yaml_file
    from sparqlab.notebooks.jobs import JobSettings, collect, load_job_settings, run_notebooks, submit_notebooks
    from sparqlab.notebooks.real import REAL_MODEL, REAL_THREADS, real_output_dir, reproduce_real

    _export_workspace()
    for option, value in (("--real-model", args.real_model), ("--real-threads", args.real_threads)):
        if value is not None and not args.real:
            raise ValueError(f"{option} needs --real")
    if args.real_threads is not None and args.real_threads < 1:
        raise ValueError(f"--real-threads must be at least 1, not {args.real_threads}")
    if args.real and (args.executor or args.serve):
        raise ValueError("--real serves its model here, in this process: not with --executor or --serve")
    real_model = args.real_model or REAL_MODEL
    output_dir = args.output_dir or (real_output_dir(real_model) if args.real else runs_dir() / "notebooks")
    if args.notebooks[:1] == ["status"]:
        return _status(args.notebooks[1:] or None, output_dir)
    parameters = {}
    if args.parameters_file:
        loaded = load_yaml_file(args.parameters_file) or {}
        if not isinstance(loaded, dict):
            raise ValueError(f"{args.parameters_file} must hold a YAML mapping of parameter: value")
        parameters.update(loaded)
    parameters.update(dict(args.parameter))
    settings = load_job_settings(args.serve) if args.serve else JobSettings()
    names = args.notebooks or None
    if args.real:
        report = reproduce_real(names, parameters, real_model, output_dir, progress=not args.no_progress,
                                threads=args.real_threads or REAL_THREADS)
    elif args.executor is None:
        report = run_notebooks(names, parameters, output_dir, settings.serve, progress=not args.no_progress)
    else:
        submitted = submit_notebooks(names, parameters, output_dir, settings, cluster=args.executor)
        for group, job in submitted:
            print(f"job {job.job_id}: {', '.join(nb.name for nb in group)}", file=sys.stderr, flush=True)
        if args.no_wait:
            return 0
        report = collect(submitted, output_dir)
    ok = bool(report.outcomes) and not report.failed  # zero notebooks run is not a reproduction
    print(report.summary(), file=sys.stdout if ok else sys.stderr)
    return 0 if ok else 1


def _status(names: list[str] | None, output_dir: Path) -> int:
    from sparqlab.notebooks import find_notebooks
    from sparqlab.notebooks.execute import notebook_status

    statuses = [notebook_status(notebook, output_dir) for notebook in find_notebooks(names)]
    width = max(len(s.notebook) for s in statuses)
    counts: dict[str, int] = {}
    for status in statuses:
        counts[status.status] = counts.get(status.status, 0) + 1
        seconds = f"{status.seconds:.1f}s" if status.seconds is not None else "-"
        job = f"job {status.job_id}" if status.job_id else ""
        print(f"{status.status:<8} {status.notebook:<{width}}  {seconds:>8}  {job}".rstrip())
        if status.error:
            print(f"{'':<8} {status.error}")
    print(f"{output_dir}: {len(statuses)} notebooks — " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    return 0


def _lab(args: argparse.Namespace) -> int:
    from sparqlab.core.extras import require
    from sparqlab.notebooks import find_notebooks, lab_command

    require("lab", what="sparqlab lab")
    root = _export_workspace()
    quickstart = find_notebooks(["00_quickstart"])[0]
    if not quickstart.resolve().is_relative_to(root):  # a bundled notebook: the lab serves only the workspace
        raise FileNotFoundError(f"no notebooks in the workspace {root}: run `sparqlab init` there first (it copies "
                                "the notebooks in)")
    token = secrets.token_hex(16)
    print(f"JupyterLab: http://127.0.0.1:{args.port}/lab/tree/{quickstart.relative_to(root).as_posix()}"
          f"?token={token}", flush=True)
    return subprocess.call(lab_command(args.port, token, root))


def _export_workspace() -> Path:
    """The workspace, exported as ``SPARQLAB_WORKSPACE`` so notebook kernels started from here write their runs
    and figures to it wherever the notebook file lies."""
    from sparqlab.core.environment import pass_on
    from sparqlab.core.paths import workspace_root

    root = workspace_root()
    pass_on("SPARQLAB_WORKSPACE", str(root))
    return root
