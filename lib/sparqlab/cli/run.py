"""`sparqlab run`: run a method over a dataset from the command line (scripts, Slurm array jobs, shards)."""

from __future__ import annotations

import argparse
import sys

from sparqlab.kg.errors import EndpointUnavailable
from sparqlab.llm.errors import (
    ExternalUnavailable,
    ModelAccessRefused,
    ModelOverloaded,
    ModelReplyInvalid,
    ModelUnavailable,
    ReplayMiss,
    UnknownModel,
)


def register(subparsers) -> None:
    from sparqlab.cli.run_options import add_method_options, add_run_options

    parser = subparsers.add_parser(
        "run", help="run a method over a dataset; a rerun of the same settings resumes",
        description="Run METHOD over a dataset and write runs/<experiment>/<run_id>/. The same settings resume "
                    "the same folder; `--from RUN` reruns a run folder's saved configuration (the flags and -o "
                    "given with it change it; the output root and cache path are this command's, never the "
                    "folder's). For a Slurm array job give each task --shard-index "
                    "$SLURM_ARRAY_TASK_ID --num-shards N, then `sparqlab runs merge`. Every run flag is a "
                    "RunConfig setting (docs/runs.md).",
    )
    parser.add_argument("method", nargs="?", help="method name (`sparqlab methods list`; with --from: the saved one)")
    parser.add_argument("--from", dest="from_run", default=None, metavar="RUN",
                        help="rerun this run folder's config.json (a folder, experiment/folder or folder name)")
    parser.add_argument("--redo", default=None, metavar="CATEGORY[,...]",
                        help="answer again the recorded questions of these error categories (e.g. endpoint_error "
                             "after an outage, model_request_error); `sparqlab runs show RUN` lists a run's "
                             "categories")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the run's plan (model and roles, KG, questions, gold) and check that the method "
                             "can answer them, without calling a model or querying the KG; nothing is written")
    add_method_options(parser)
    add_run_options(parser)
    parser.set_defaults(handler=_run)


CLI_HINTS = (
    (ModelAccessRefused, "the server at --model-url refuses this client: check the API key (SPARQLAB_API_KEY) and that "
                         "the URL is the server's /v1 URL; then run the same command: it resumes"),
    (ModelReplyInvalid, "the server at --model-url answers, but not with completions (its words are quoted above): "
                        "check its log, restart it, then run the same command: it resumes"),
    (ExternalUnavailable, "check that the TEXT2SPARQL system runs at -o endpoint=URL; a system that fails on some "
                          "questions can be recorded instead with -o on_http_error=record (docs/peers.md); the same "
                          "call resumes"),
    (ModelOverloaded, "the endpoint answers but is overloaded: lower --concurrency, or let the client retry for "
                      "longer with --model-options max_retries=8 (default 4; each retry waits 0.5 s doubling up to 8 s, "
                      "or the server's Retry-After) and --model-options timeout_s=SECONDS for slow answers; the same "
                      "call resumes"),
    (ModelUnavailable, "check that the server runs and give its /v1 URL with --model-url http://HOST:PORT/v1 "
                       "(or SPARQLAB_MODEL_URL); -m names the model it serves"),
    (UnknownModel, "pass one of the served names with -m NAME (the list above), or point --model-url at the server "
                   "that serves your model"),
    (ReplayMiss, "--cache replay only serves cached responses: run once with --cache read_write (the default) "
                 "against a live endpoint (-m NAME --model-url URL), then replay"),
    (EndpointUnavailable, "check that the SPARQL endpoint (--kg-url) is up; if it throttles, wait and run the same "
                          "command again (it resumes), with a lower --concurrency"),
)
"""What to do about a run stopped by a model error, in this command's flags (the library's messages speak of
``RunConfig`` fields and environment variables); the first entry the error is an instance of applies."""


OUTPUT_LOCATIONS = ("output_root", "cache_path")
"""Where a run writes: with ``--from`` they come from this command line (or the defaults), never from the saved
folder, which may come from someone else and point anywhere."""


def _method_and_config(args: argparse.Namespace):
    """The method and run configuration: from the flags, or from a saved run folder with the flags over it."""
    from sparqlab.cli.run_options import method_from_options, parse_pairs, run_config

    if args.from_run is None:
        if not args.method:
            raise ValueError("give METHOD (`sparqlab methods list`), or --from RUN to rerun a saved run")
        config = run_config(args)
        if not config.dataset:
            raise ValueError("give the questions with --dataset NAME (`sparqlab data list`) or a JSONL path")
        return method_from_options(args.method, args.option), config
    from sparqlab.platform.registry import method_from_config
    from sparqlab.runs.config import RunConfig
    from sparqlab.runs.results import find_run
    from sparqlab.runs.store import CONFIG, read_json

    path = find_run(args.from_run) / CONFIG
    saved = read_json(path)
    saved_config = RunConfig.from_saved(saved, str(path)).replace(**dict.fromkeys(OUTPUT_LOCATIONS))
    config = run_config(args, base=saved_config)
    method = method_from_config(saved["method"])
    if args.method and args.method != method.name:
        raise ValueError(f"{path} is a run of method {method.name!r}, not {args.method!r}")
    if args.option:
        method = type(method)(method.config.with_options(parse_pairs(args.option, "method options")))
    return method, config


def _run(args: argparse.Namespace) -> int:
    from sparqlab.eval.metrics import metric_list
    from sparqlab.runs import RunAborted, model_label, run
    from sparqlab.runs.groups import run_repeats

    method, config = _method_and_config(args)
    redo = redo_categories(args.redo)
    if args.dry_run:
        print(dry_run(method, config))
        return 0
    try:
        if config.repeats > 1:
            group = run_repeats(lambda repeat: run(method, config=repeat, redo_errors=redo), config)
            print(group_lines(group))
            return 0
        result = run(method, config=config, redo_errors=redo)
    except RunAborted as error:  # say what to do in terms of this command's flags
        hint = next((text for kind, text in CLI_HINTS if isinstance(error.__cause__, kind)), None)
        if hint is None:
            raise
        raise RunAborted(f"{error}\nwhat to do: {hint}") from error.__cause__
    metrics = result.metrics
    scores = ("  ".join(f"{m.label} {_percent(metrics.get(m.key))}" for m in metric_list("compare"))
              if metrics.get("n_scored") != 0 else "unscored (no question has gold answers or a gold query)")
    print(f"{result.run_dir}\n{model_label(metrics.get('model'), metrics.get('model_is_standin'))}: {scores}  "
          f"({metrics['n_done']}/{metrics['n_questions']} done, {result.answered} answered now)")
    note = (metrics.get("model_cache_last_session") or {}).get("endpoint_note")
    if note:
        print(note, file=sys.stderr)
    return 0


def dry_run(method, config) -> str:
    """What ``run --dry-run`` prints: the plan (:class:`sparqlab.runs.plan.RunPlan`), checked."""
    from sparqlab.runs.plan import build_plan

    plan = build_plan(method, None, config, dry_run=True)
    try:
        plan.check()
    finally:
        plan.close()
    repeats = f"\nrepeats    {config.repeats}, one run per sampling seed" if config.repeats > 1 else ""
    return f"{plan.describe()}{repeats}\nchecked    the method can answer these questions; nothing was run or written"


def group_lines(group) -> str:
    """What ``run --repeats`` prints: each repeat's folder and answers, the group folder, and its scores as
    mean ± sd with the two-level interval, then the metrics over repeats."""
    from sparqlab.eval.metrics import metric_list
    from sparqlab.runs import model_label
    from sparqlab.runs.groups import interval_text, over_repeats, spread

    metrics = group.metrics
    lines = [f"{result.run_dir}  (seed {result.config.seed}, {result.answered} answered now)" for result in group.runs]
    scores = "  ".join(f"{m.label} {spread(m, metrics['scores'].get(m.key))} {interval_text(m, metrics['scores'].get(m.key))}"
                       for m in metric_list("compare") if metrics["scores"].get(m.key, {}).get("interval"))
    over = "  ".join(f"{key} {_percent(value['value'])}" for _, key, value in over_repeats(metrics))
    model = model_label(metrics.get("model"), metrics.get("model_is_standin"))
    lines += [f"group {group.group_dir}", f"{model}: {scores} (mean ± sd between runs [{metrics['ci']:g}% two-level "
              f"interval], {metrics['n_repeats']} repeats)", f"  {over}"]
    if metrics.get("model_is_standin"):
        lines.append("  the spread of a stand-in's seeded draws, not a model's variance")
    return "\n".join(lines)


def redo_categories(text: str | None) -> list[str]:
    """The error categories of ``--redo a,b``; an empty name is refused."""
    if text is None:
        return []
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise ValueError(f"--redo {text!r}: give error categories separated by commas, e.g. "
                         "--redo endpoint_error,model_request_error")
    return names


def _percent(value: float | None) -> str:
    """Rates as the papers print them: percent with one decimal."""
    return "-" if value is None else f"{100 * value:.1f}%"
