"""`sparqlab runs list|show|compare|merge`: browse and combine run results."""

from __future__ import annotations

import argparse
import json
import sys


def register(subparsers) -> None:
    """Add ``sparqlab runs ...``."""
    runs = subparsers.add_parser("runs", help="browse, compare and merge run results",
                                 description="Browse results folders runs/<experiment>/<run>/. A RUN is a folder "
                                             "path, experiment/folder, or a unique folder name (prefix).")
    actions = runs.add_subparsers(dest="runs_command", metavar="ACTION")

    def action(name: str, help_text: str, handler) -> argparse.ArgumentParser:
        parser = actions.add_parser(name, help=help_text, description=help_text)
        parser.add_argument("--root", default=None, help="runs root (default: SPARQLAB_RUNS or runs/)")
        parser.set_defaults(handler=handler)
        return parser

    listing = action("list", "list runs: date, status, progress, F1/EM/empty in percent, model ([standin] marks "
                             "stand-ins), question selection (sample / limit) and what changed since the previous "
                             "run of the same method, dataset, model and KG (kg content, questions, a setting); a "
                             "run group (--repeats) is one row, its scores mean ± sd between its runs", _list)
    listing.add_argument("--experiment", "-e", default=None, help="only this experiment")

    show = action("show", "a run's metrics and configuration; of a run group (run --repeats) each metric's mean ± sd "
                          "between runs with its two-level interval, the metrics over repeats and the questions "
                          "that flip", _show)
    show.add_argument("run", metavar="RUN", help="a run, or a run group (folder, experiment/group or group name)")
    show.add_argument("--json", action="store_true", help="print metrics and config as one JSON object")

    compare = action("compare", "runs side by side; for two runs also a paired per-question comparison; for two run "
                                "groups the paired two-level bootstrap over questions and repeats", _compare)
    compare.add_argument("runs", nargs="+", metavar="RUN",
                         help="runs (folder, experiment/folder, name or prefix), or an experiment name for all its runs, "
                              "or two run groups")
    compare.add_argument("--flips", type=int, default=10, metavar="N",
                         help="with two runs: list up to N questions whose exact match flipped (default 10, 0: none)")

    report = action("report", "a static, self-contained HTML page of one run's error analysis (failures first: "
                              "gold and predicted SPARQL with their diff, both answer sets, error categories; "
                              "metrics, config, model and engine) or of two runs (also the flipped questions and "
                              "the paired test), or of a run group (per-question agreement between its repeats, "
                              "the questions that flip)", _report)
    report.add_argument("runs", nargs="+", metavar="RUN",
                        help="one run, two runs of one question set, or one run group")
    report.add_argument("--output", "-o", required=True, help="the HTML file to write")
    report.add_argument("--max-failures", type=int, default=None, metavar="N",
                        help="show at most N failing questions per run in full (default: all)")

    score = action("score", "execute and score the final queries of a run (e.g. a --generate-only run) on a KG; "
                            "the scored copy goes to RUN/scored/<kg>/", _score)
    score.add_argument("run", metavar="RUN", help="a run (name, folder) or a predictions.jsonl")
    score.add_argument("--kg", required=True, help="KG name, endpoint URL, RDF file or store folder")
    score.add_argument("--profile", default=None, help="KG profile for an endpoint URL (e.g. wikidata)")
    score.add_argument("--output", default=None, help="output folder (default RUN/scored/<kg>)")
    score.add_argument("--answer-match", choices=["iri", "label", "either"], default=None,
                       help="how answers are compared (default: the KG profile's rule)")

    merge = action("merge", "merge the shards of a run into the run's folder", _merge)
    merge.add_argument("run", metavar="RUN", help="experiment/run_id (or any of its shard folders)")
    merge.add_argument("--allow-incomplete", action="store_true",
                       help="merge even if shards or questions are missing (the merge reports them)")
    merge.add_argument("--overwrite", action="store_true", help="replace an earlier merge")

    runs.set_defaults(handler=lambda args: (runs.print_help(), 2)[1])


def _list(args: argparse.Namespace) -> int:
    from sparqlab.eval.metrics import metric_list
    from sparqlab.runs.groups import listing
    from sparqlab.runs.results import format_table

    columns = ["experiment", "run", "date", "status", "done", *(metric.key for metric in metric_list("list")), "model",
               "method", "dataset", "split", "selection", "engine", "changed", "errors"]
    print(format_table(listing(args.root, args.experiment), columns))
    return 0


def _show(args: argparse.Namespace) -> int:
    from sparqlab.core.labels import STANDIN_BANNER
    from sparqlab.eval.metrics import metric_list
    from sparqlab.runs.groups import find_group, group_metrics
    from sparqlab.runs.results import find_run, format_table, load_config, model_label, run_summary

    group = find_group(args.run, args.root)
    if group is not None:
        metrics = group_metrics(group)
        print(json.dumps(metrics, indent=2) if args.json else group_text(metrics))
        return 0
    run_dir = find_run(args.run, args.root)
    summary, config = run_summary(run_dir), load_config(run_dir)
    if args.json:
        print(json.dumps({"metrics": summary, "config": config}, indent=2, default=str))
        return 0
    model = model_label(summary.get("model"), summary.get("model_is_standin"))
    print(f"run {summary['experiment']}/{summary['folder']}  ({summary['status']})")
    print(f"model   {model}")
    if summary.get("model_is_standin"):
        print(f"        {STANDIN_BANNER}")
    print(f"method  {json.dumps(config.get('method'))}")
    print(f"data    {summary.get('dataset')} {summary.get('split') or ''} on KG {summary.get('kg')}  "
          f"({summary['n_done']}/{summary['n_questions']} done, {summary['n_scored']} scored)")
    print(f"engine  {summary.get('engine') or 'not recorded'}")
    scores = [{**{metric.key: summary.get(metric.key) for metric in metric_list("show")},
               "wall_time_s": summary.get("wall_time_s")}]
    print(format_table(scores))
    usage = summary.get("usage") or {}
    print(f"model calls {json.dumps(usage.get('model_calls'))}  uncached {summary.get('model_calls_uncached')}")
    print(f"tokens      {json.dumps(usage.get('tokens'))}")
    reuse = summary.get("prefix_cache") or {}
    print(f"prompt cache  reported by the server: {_reused(reuse.get('reported'), 'not reported')}; "
          f"simulated (vLLM block model): {_reused(reuse.get('simulated'), 'not recorded')}")
    print(f"errors      {json.dumps(summary.get('error_categories'))}")
    print("config  " + json.dumps(config.get("run"), default=str))
    return 0


def group_text(metrics: dict) -> str:
    """``runs show GROUP``: the group, its model (stand-ins labelled), its members, each metric's mean ± sd with
    its two-level interval and per-run values, the metrics over repeats, and the questions that flip."""
    from sparqlab.eval.metrics import metric_list
    from sparqlab.runs.groups import interval_text, over_repeats, spread
    from sparqlab.runs.results import model_label

    lines = [f"run group {metrics['experiment']}/{metrics['group']}  ({'complete' if metrics['complete'] else 'incomplete'}, "
             f"{metrics['n_repeats']} repeats, seeds {', '.join(map(str, metrics['seeds']))})",
             f"model   {model_label(metrics.get('model'), metrics.get('model_is_standin'))}"]
    if metrics.get("model_is_standin"):
        lines.append("        a stand-in model: not an LLM result; its spread is a seeded draw, not a model's variance")
    lines.append(f"data    {metrics.get('dataset')} {metrics.get('split') or ''} on KG {metrics.get('kg')}  "
                 f"({metrics['n_paired']} questions judged in every repeat)")
    lines += [f"member  {name}  ({status})" for name, status in zip(metrics["members"], metrics["member_status"],
                                                                     strict=True)]
    lines.append(f"mean ± sd between runs  [{metrics['ci']:g}% {metrics['interval_method']}]  per run")
    for metric in metric_list("show"):
        score = metrics["scores"].get(metric.key)
        if score is not None:
            runs = " ".join(metric.format(value) for value in score["runs"])
            lines.append(f"  {metric.key:<12} {spread(metric, score)}  {interval_text(metric, score)}  {runs}")
    for metric, key, value in over_repeats(metrics):
        lines.append(f"  {key:<12} {metric.format(value['value'])}  {interval_text(metric, value)}  "
                     f"({metric.description})")
    flipping = metrics["flipping"]
    lines.append(f"stability {metrics['stability']:.3f} (mean share of repeats returning the majority answer set); "
                 f"{len(flipping)} questions flip between repeats" + (f": {', '.join(flipping[:20])}" if flipping else ""))
    return "\n".join(lines)


def _reused(figures: dict | None, missing: str) -> str:
    """One of ``metrics.json``'s ``prefix_cache`` figures as a phrase (the share of prompt tokens reused), else
    ``missing``."""
    share = (figures or {}).get("reused_share")
    if share is None:
        return missing
    return f"{share:.0%} of {figures['prompt_tokens']:,} prompt tokens reused"


def _compare(args: argparse.Namespace) -> int:
    from sparqlab.runs.groups import find_group
    from sparqlab.runs.results import compare_rows, format_table
    from sparqlab.runs.store import RunUnreadable

    groups = [find_group(ref, args.root) for ref in args.runs]
    if len(groups) == 2 and all(groups):
        print(_paired_groups(groups))
        return 0
    if any(groups):
        print("sparqlab runs compare: a run group is compared with another run group (GROUP_A GROUP_B)",
              file=sys.stderr)
        return 2
    run_dirs = _expand_runs(args.runs, args.root)
    print(format_table(compare_rows(run_dirs, args.root)))
    if len(run_dirs) == 2:
        print()
        try:
            print(_paired(run_dirs, args.flips))
        except RunUnreadable as error:
            print(f"no paired comparison: {error}")
    return 0


def _paired_groups(groups: list) -> str:
    """Two run groups side by side (each listed metric as mean ± sd) and their paired two-level comparison."""
    from sparqlab.eval.metrics import metric_list
    from sparqlab.eval.repeats import paired_repeats
    from sparqlab.runs.groups import group_metrics, group_records, group_row
    from sparqlab.runs.results import format_table

    names = [f"{group.parent.name}/{group.name}" for group in groups]
    rows = [group_row(group, group_metrics(group)) for group in groups]
    fields = ["model", "method", "dataset", "selection", "status", "done", *(m.key for m in metric_list("compare"))]
    table = format_table([{"field": field, **{name: row.get(field) for name, row in zip(names, rows, strict=True)}}
                          for field in fields])
    compared = paired_repeats(group_records(groups[0]), group_records(groups[1]), names[0], names[1])
    return f"{table}\n\n{compared.summary()}"


def _report(args: argparse.Namespace) -> int:
    from sparqlab.plots.report import write_report
    from sparqlab.runs.groups import find_group
    from sparqlab.runs.results import find_run

    if len(args.runs) > 2:
        print(f"sparqlab runs report: one or two runs, got {len(args.runs)}", file=sys.stderr)
        return 2
    path = write_report([find_group(ref, args.root) or find_run(ref, args.root) for ref in args.runs], args.output,
                        args.max_failures)
    print(f"report: {path}")
    return 0


def _expand_runs(refs: list[str], root: str | None) -> list:
    """Run folders for the references; a name that is an experiment folder stands for all of its runs."""
    from pathlib import Path

    from sparqlab.core.paths import runs_dir
    from sparqlab.runs.results import find_run, run_dirs

    found = []
    for ref in refs:
        experiment = Path(root) if root else runs_dir()
        in_experiment = run_dirs(experiment, ref) if "/" not in ref and (experiment / ref).is_dir() else []
        found += in_experiment or [find_run(ref, root)]
    return found


def _paired(run_dirs: list, flips: int) -> str:
    """The paired comparison of two runs, with the flipped questions and where to see their traces."""
    from sparqlab.eval.paired import paired_comparison
    from sparqlab.runs.gold_check import gold_agreement, run_identity
    from sparqlab.runs.results import run_records

    names = [f"{d.parent.name}/{d.name}" for d in run_dirs]
    if names[0] == names[1]:
        names = [str(d) for d in run_dirs]
    records = [run_records(d) for d in run_dirs]
    identities = (run_identity(run_dirs[0]), run_identity(run_dirs[1]))
    lines = [f"KG of {name}: {identity['kg']}" for name, identity in zip(names, identities, strict=True)]
    agreement = gold_agreement(records[0], records[1], identities)
    if agreement.differ:
        lines.append("WARNING: " + agreement.warning())
        if not agreement.same:
            return "\n".join(lines + ["no paired comparison: no paired question has the same gold in both runs"])
        records = [agreement.comparable(run) for run in records]
    result = paired_comparison(records[0], records[1], names[0], names[1])
    lines.append(result.summary())
    by_id = [{str(r["id"]): r for r in run_records} for run_records in records]
    for name, ids in ((names[0], result.a_only), (names[1], result.b_only)):
        if flips and ids:
            lines.append(f"exact only in {name} ({len(ids)}; first {min(flips, len(ids))}):")
            for qid in ids[:flips]:
                lines.append(f"  {qid}  {by_id[0][qid].get('question', '')}")
                lines += query_lines(names, [run[qid].get("predicted_sparql") for run in by_id])
    if flips and (result.a_only or result.b_only):
        lines.append("traces: open each run in the trace browser (sparqlab.plots.widgets.trace_browser) or "
                     "sparqlab.runs.load_traces(RUN)[QUESTION_ID]")
    return "\n".join(lines)


def _score(args: argparse.Namespace) -> int:
    from pathlib import Path

    from sparqlab.eval.metrics import metric_list
    from sparqlab.kg import open_kg
    from sparqlab.runs.results import find_run, format_table
    from sparqlab.runs.scoring import score_generated

    source = Path(args.run) if Path(args.run).is_file() else find_run(args.run, args.root)
    with open_kg(args.kg, profile=args.profile) as kg:
        folder, metrics = score_generated(source, kg, args.output, progress=sys.stderr.isatty(),
                                          answer_match=args.answer_match)
    print(format_table([{key: metrics.get(key) for key in ("n_done", "n_scored", *(m.key for m in metric_list("list")))}]))
    print(f"scored copy: {folder}")
    return 0


def query_lines(names: list[str], queries: list[str | None]) -> list[str]:
    """Both runs' final queries in full, one line each when they fit in 100 characters, else as a line diff of
    the first against the second (``(no query)`` when a run gave none: empty, missing, or NaN from a frame)."""
    import difflib

    texts = [q.strip() if isinstance(q, str) and q.strip() else "" for q in queries]
    flat = [" ".join(text.split()) or "(no query)" for text in texts]
    if all(len(line) <= 100 for line in flat):
        return [f"      {name}: {line}" for name, line in zip(names, flat, strict=True)]
    if not all(texts):  # one run gave no query: the other's in full
        lines = []
        for name, text in zip(names, texts, strict=True):
            lines.append(f"      {name}:" + ("" if text else " (no query)"))
            lines += [f"        {part}" for part in text.splitlines()]
        return lines
    diff = difflib.unified_diff(texts[0].splitlines(), texts[1].splitlines(), fromfile=names[0], tofile=names[1],
                                lineterm="", n=1000)
    return [f"      {line}" for line in diff]


def _merge(args: argparse.Namespace) -> int:
    from sparqlab.runs.merge import MergeError, merge_shards, resolve_merge_target

    try:
        report = merge_shards(resolve_merge_target(args.run, args.root), allow_incomplete=args.allow_incomplete,
                              overwrite=args.overwrite)
    except MergeError as error:
        print(f"sparqlab runs merge: {error}", file=sys.stderr)
        return 1
    print(report.summary())
    return 0 if report.complete else 1
