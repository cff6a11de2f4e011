"""`sparqlab sweep GRID.yaml` (run a grid of methods × datasets), `sparqlab sweep status GRID.yaml`, and
`sparqlab table GRID.yaml` (the comparison table of its cells)."""

from __future__ import annotations

import argparse
import sys


def register(subparsers) -> None:
    sweep = subparsers.add_parser(
        "sweep", help="run every cell of a grid file (methods × datasets × axes) locally or on Slurm; resumable",
        description="Expand GRID.yaml (docs/sweeps.md) into ordinary runs under runs/<experiment>/ and run those "
                    "not done yet. `sparqlab sweep status GRID.yaml` shows each cell's state. A rerun resumes: "
                    "done cells are skipped, interrupted ones continue where their run folder stopped.")
    sweep.add_argument("grid", nargs="+", metavar="[status] GRID.yaml",
                       help="the grid file; `status GRID.yaml` shows done/running/failed/missing per cell")
    sweep.add_argument("--dry-run", action="store_true", help="list the cells and their state; run nothing")
    sweep.add_argument("--executor", choices=["local", "slurm"], default="local",
                       help="local: worker processes on this machine (default); slurm: one submitit job per cell, "
                            "as an array job with the grid's executor.slurm resources")
    sweep.add_argument("--workers", type=int, default=None,
                       help="local executor: cells run at once (default: the grid's executor.local.workers, else "
                            "one per core; 0 = one after the other in this process)")
    sweep.add_argument("--no-wait", action="store_true", help="slurm: submit and return (check with `sweep status`)")
    _selection_arguments(sweep)
    sweep.set_defaults(handler=_sweep)

    table = subparsers.add_parser(
        "table", help="the comparison table of a grid's cells: scores with 95%% CIs, costs, paired significance",
        description="One row per method configuration, a column group per dataset, numbers recomputed from each "
                    "cell's predictions.jsonl as `sparqlab runs list` shows them (a damaged run folder is named "
                    "and left out).")
    table.add_argument("grid", metavar="GRID.yaml")
    table.add_argument("--format", choices=["text", "csv", "md", "latex"], default="text")
    table.add_argument("--baseline", default=None, metavar="ROW",
                       help="row the others are tested against (McNemar on EM, paired bootstrap on F1)")
    table.add_argument("--columns", default=None,
                       help="comma-separated measures to show (default: all; e.g. f1,em,model_calls)")
    table.add_argument("--output", "-o", default=None, help="write to this file instead of standard output")
    _selection_arguments(table)
    table.set_defaults(handler=_table)


def _selection_arguments(parser: argparse.ArgumentParser) -> None:
    """Which cells, and run settings given to every cell (over the grid's: e.g. one served model for all)."""
    from sparqlab.cli.run_options import add_run_options
    from sparqlab.experiments.grid import SWEEP_OWNED

    parser.add_argument("--rows", default=None, help="only these rows (comma-separated labels)")
    parser.add_argument("--datasets", default=None, help="only these datasets (comma-separated labels)")
    add_run_options(parser, skip=tuple(SWEEP_OWNED))


def _load(args: argparse.Namespace, path: str):
    from sparqlab.cli.run_options import given_run_settings
    from sparqlab.experiments.grid import load_grid

    grid = load_grid(path, given_run_settings(args))
    return grid, grid.select(_labels(args.rows), _labels(args.datasets))


def _labels(text: str | None) -> list[str] | None:
    return [x.strip() for x in text.split(",") if x.strip()] if text else None


def _status_lines(grid, cells) -> list[str]:
    from sparqlab.experiments.sweep import grid_status

    statuses = grid_status(grid, cells)
    width = max(len(s.cell.key) for s in statuses)
    lines = []
    for status in statuses:
        progress = f"{status.n_done}/{status.n_questions}" if status.n_questions is not None else "-"
        where = status.run_dir.name if status.run_dir else ""
        if status.shards_done is not None:
            where = f"{status.shards_done}/{status.cell.shards} shards done  {where}".rstrip()
        line = f"{status.status:<11} {status.cell.key:<{width}}  {progress:>7}  {where}"
        lines.append(line + (f"\n{'':<11} {status.reason}" if status.reason else ""))
    counts = {}
    for status in statuses:
        counts[status.status] = counts.get(status.status, 0) + 1
    lines.append(f"{grid.name}: {len(statuses)} cells — " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    return lines


def _sweep(args: argparse.Namespace) -> int:
    import time

    from sparqlab.experiments.executors import run_grid

    words = list(args.grid)
    status_only = len(words) == 2 and words[0] == "status"
    if len(words) != 1 and not status_only:
        raise ValueError("usage: sparqlab sweep GRID.yaml [--dry-run] | sparqlab sweep status GRID.yaml")
    grid, cells = _load(args, words[-1])
    if status_only or args.dry_run:
        print("\n".join(_status_lines(grid, cells)))
        return 0
    started = time.perf_counter()

    def report(outcome) -> None:
        detail = outcome.detail or {}
        text = {"ran": f"{detail.get('n_done')} done, {detail.get('answered')} answered now  "
                       f"{detail.get('run_id', '')}",
                "failed": outcome.reason, "submitted": f"job {detail.get('job_id')}",
                "skipped": f"({outcome.reason})"}[outcome.outcome]
        print(f"[{time.perf_counter() - started:7.1f}s] {outcome.outcome:<9} {outcome.cell.key}  {text}", flush=True)

    outcomes = run_grid(grid, cells, args.executor, args.workers, wait=not args.no_wait, report=report)
    skipped = [o for o in outcomes if o.outcome == "skipped"]
    outcomes = [o for o in outcomes if o.outcome != "skipped"]
    failed = [o for o in outcomes if o.outcome == "failed"]
    print(f"{grid.name}: {len(outcomes) - len(failed)} cells ran, {len(skipped)} skipped, {len(failed)} failed "
          f"in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 1 if failed else 0


def _table(args: argparse.Namespace) -> int:
    from sparqlab.experiments.table import build_table, emit

    grid, cells = _load(args, args.grid)
    columns = [c.strip() for c in args.columns.split(",")] if args.columns else None
    emit(build_table(grid, cells, baseline=args.baseline), args.format, columns, args.output)
    return 0
