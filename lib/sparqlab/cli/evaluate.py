"""``sparqlab eval PREDICTIONS.jsonl``: recompute per-question metrics of any predictions file and print macro averages.

Every record needs ``predicted_answers`` (a list, or null when no answer was obtained) and ``gold_answers``;
stored ``f1``/``em``/``empty`` values are ignored and recomputed, so files from older code or other tools are
scored by the current metric code. A record whose ``gold_answers`` is null (a benchmark without gold answers, or
a gold query that failed) is left out of the scores and counted as ``unscored``, as in a run's metrics.json.
Cost fields (``model_calls``, ``tokens``, ``latency_s``) are averaged when every scored record has them.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from sparqlab.cli.kg import add_profile_option
from sparqlab.core.text import text_table
from sparqlab.text2sparql.metric import CONVENTIONS, OFFICIAL_METRIC

MISSING = "(none)"


def register(subparsers) -> None:
    """Add ``sparqlab eval``."""
    parser = subparsers.add_parser(
        "eval",
        help="recompute F1 / EM / empty rate of a predictions file",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("predictions", nargs="?",
                        help="predictions.jsonl, a run folder, a run name as `sparqlab runs list` shows it, or (with "
                             "a TEXT2SPARQL metric) the official client's `ask` output; may be left out with "
                             "--result-set")
    parser.add_argument("--by", metavar="FIELD",
                        help="group by a record field; dotted paths and metadata fields work (e.g. metadata.hops); "
                             "an unknown field is an error listing the known ones")
    parser.add_argument("--format", choices=["table", "json"], default="table", help="output format")
    parser.add_argument("--json", dest="format", action="store_const", const="json", help="same as --format json")
    parser.add_argument("--metric", choices=["default", *CONVENTIONS], default=None,
                        help="default: our set F1/EM of the records' answers; text2sparql: the TEXT2SPARQL "
                             "challenge's metric exactly as its published evaluations compute it; "
                             "text2sparql-strict: the same set measures with empty true sets, ASK and the "
                             "combined mean scored as they read (docs/metrics.md). Default: text2sparql for the "
                             "ck25/db25/ck26/db26 datasets, else default")
    parser.add_argument("-d", "--dataset", help="with a TEXT2SPARQL metric: the questions (ck25, db25, ck26, db26)")
    parser.add_argument("--language", help="with a TEXT2SPARQL metric: score one language's qnames only")
    parser.add_argument("--kg", help="with a TEXT2SPARQL metric and an answers file or run: the KG the queries "
                                     "run on (e.g. ck25, or an endpoint URL with --profile ck25)")
    add_profile_option(parser)
    parser.add_argument("--result-set", metavar="FILE",
                        help="a system result set (the organisers' `*_system_result_set.json` / "
                             "`*_pred_result_set.json`): alone, scored against the dataset's true result set "
                             "without a KG; with an answers file and --kg, compared with our store's results per "
                             "question (the engine report). A copy of the true result set is refused")
    parser.add_argument("--published", metavar="EVAL_FILE",
                        help="an organisers' evaluation file (`*_eval.json` / `*_results.json`): report, per "
                             "qname and average, whether our scores equal it")
    parser.add_argument("--gold-source", choices=["official", "execute"], default="official",
                        help="with an answers file: official = the dataset's true result set; execute = re-run the "
                             "reference queries on --kg, as the client's `query` step does on an endpoint")
    parser.add_argument("--rewrite-casts", action="store_true",
                        help="with an answers file: rewrite xsd:int/long/short/byte casts the engine refuses "
                             "to xsd:integer (recorded per question; docs/ck25.md)")
    parser.add_argument("--gold", metavar="QUERY_OR_FILE",
                        help="with `sparqlab eval structural`: the gold query (text or file)")
    parser.add_argument("--pred", metavar="QUERY_OR_FILE",
                        help="with `sparqlab eval structural`: the predicted query (text or file); prints match or "
                             "no match under DeSQ's structural EM and exits 0 or 1")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.predictions == "structural":
        from sparqlab.cli.desq import eval_structural

        return eval_structural(args.gold, args.pred)
    metric = args.metric or (OFFICIAL_METRIC if args.result_set or _is_text2sparql(args.dataset) else "default")
    if metric in CONVENTIONS:
        return text2sparql_command(args, metric)
    if args.predictions is None:
        raise ValueError("give a predictions file, run folder or run name (or --result-set with -d)")
    path = _predictions_path(args.predictions)
    records = read_predictions(path)
    if not records:
        raise ValueError(f"{path} holds no records")
    table = evaluate_records(records, by=args.by)
    print(json.dumps(table, indent=2) if args.format == "json" else format_table(table, by=args.by))
    return 0


def _is_text2sparql(dataset: str | None) -> bool:
    from sparqlab.text2sparql.editions import EDITIONS

    return dataset in EDITIONS


def text2sparql_command(args: argparse.Namespace, convention: str) -> int:
    """Score a result-set file (no KG), an answers file or a run's final queries with a TEXT2SPARQL metric."""
    from sparqlab.data import registry
    from sparqlab.text2sparql.result_sets import (
        compare_with_published,
        read_published_scores,
        read_result_set,
        score_result_set,
    )

    if not args.dataset:
        raise ValueError(f"--metric {convention} needs -d/--dataset (ck25, db25, ck26 or db26)")
    questions = registry.load(args.dataset, language=args.language)
    if args.predictions is None:
        if not args.result_set:
            raise ValueError("give an answers file or run (with --kg), or --result-set FILE")
        table = score_result_set(args.result_set, questions, convention=convention)
    else:
        from sparqlab.kg import open_kg
        from sparqlab.text2sparql.answers import read_answers, run_answers, score_answers

        if not args.kg:
            raise ValueError("an answers file or run is executed on a KG: give --kg (e.g. ck25); to score the "
                             "organisers' results without a KG, give --result-set FILE alone")
        path = Path(args.predictions)
        if path.suffix == ".json" and path.is_file():
            answers = read_answers(path)
        else:  # a run: its final queries, by question id
            answers = run_answers(read_predictions(_predictions_path(args.predictions)))
        system = read_result_set(args.result_set) if args.result_set else None
        with open_kg(args.kg, profile=args.profile) as kg:
            table = score_answers(answers, questions, kg, gold=args.gold_source, rewrite=args.rewrite_casts,
                                  convention=convention, system=system)
    table["metric"] = convention
    if args.published:
        agreement = compare_with_published(table, read_published_scores(args.published))
        table["published"] = {"file": args.published, "agree": agreement.agree, "differ": agreement.differ,
                              "averages": {k: {"published": p, "ours": o} for k, (p, o) in
                                           agreement.averages.items()}}
    if args.format == "json":
        print(json.dumps(table, indent=2, ensure_ascii=False))
        return 0
    print(format_text2sparql(table))
    return 0


def format_text2sparql(table: Mapping[str, Any]) -> str:
    """Per-question scores, the means as published (overall and per language), the comparison with a published
    evaluation and the engine report when present."""
    lines = [f"{'qname':<14}{'set_P':>7}{'set_R':>7}{'set_F':>7}{'nDCG':>7}  note"]
    differ = (table.get("published") or {}).get("differ", {})
    for qname, row in table["questions"].items():
        cells = "".join(f"{row[m]:7.3f}" if m in row else f"{'-':>7}" for m in ("set_P", "set_recall", "set_F",
                                                                                   "ndcg"))
        notes = []
        if "answered" in row and not row["answered"]:
            notes.append("not answered")
        elif row.get("error"):
            notes.append(row["error"])
        if row.get("rewritten_query"):
            notes.append("casts rewritten")
        if qname in differ:
            notes.append("differs from the published score " + ", ".join(
                f"{m} {v:.4f}" for m, v in differ[qname]["published"].items()))
        lines.append(f"{qname:<14}{cells}  {'; '.join(notes)}")
    lines.append(f"{table['metric']}: " + summary_line(table["summary"]))
    for language, block in (table["summary"].get("languages") or {}).items():
        lines.append(f"  {language}: " + summary_line(block))
    if table.get("store"):
        store = table["store"]
        lines.append(f"executed on {store.get('engine') or store.get('backend')} ({store.get('identity')})")
    if table.get("unknown_qnames"):
        lines.append(f"not in the dataset (not scored): {', '.join(table['unknown_qnames'])}")
    if table.get("published"):
        published = table["published"]
        total = len(published["agree"]) + len(published["differ"])
        gaps = [abs(v["published"] - v["ours"]) for v in published["averages"].values() if v["ours"] is not None]
        lines.append(f"against {published['file']}: {len(published['agree'])}/{total} qnames equal on every "
                     f"measure; averages: largest difference {max(gaps, default=0.0):.2g}")
    if "engine_report" in table:
        report = table["engine_report"]
        lines.append(f"engine report: {len(report)} qnames where our store's result differs from the organisers'")
        for row in report:
            lines.append(f"  {row['qname']:<14}ours {row['ours']:>4} theirs {row['theirs']:>4}  {row['cause']}: "
                         f"{row['why']}")
    return "\n".join(lines)


def summary_line(summary: Mapping[str, Any]) -> str:
    """``n 50, set_P 0.4128, ...`` in the published order of measures."""
    keys = [k for k in ("set_P", "set_recall", "set_F", "ndcg", "set_F_ndcg") if k in summary]
    return ", ".join([f"n {summary.get('n', 0)}", *(f"{k} {summary[k]:.4f}" for k in keys)])


def _predictions_path(ref: str) -> Path:
    """A predictions file, a run folder holding one, or a run found by name under the runs root."""
    from sparqlab.runs.results import find_run

    path = Path(ref)
    if path.is_file():
        return path
    if not path.is_dir():
        try:
            path = find_run(ref)
        except FileNotFoundError:
            raise FileNotFoundError(f"no predictions file, run folder or run named {ref!r} "
                                    "(see `sparqlab runs list`)") from None
    if not (path / "predictions.jsonl").exists():
        raise FileNotFoundError(f"no predictions file in {path}")
    return path / "predictions.jsonl"


def read_predictions(path: Path) -> list[dict[str, Any]]:
    """The records of a predictions file, each checked where it is read, errors naming the file and line:
    a JSON object with ``predicted_answers`` and ``gold_answers`` that are answer lists
    (:func:`sparqlab.eval.check_answers`). A cut-off last line (a run still writing, or killed) is left out and
    said so on stderr; an invalid complete line is an error."""
    import sys

    from sparqlab.data.files import read_records
    from sparqlab.eval import check_answers

    records = []
    try:
        for number, record in read_records(path):
            where = f"{path}, line {number} (id {record.get('id')!r})"
            if "gold_answers" not in record or "predicted_answers" not in record:
                raise ValueError(f"{where} needs predicted_answers and gold_answers")
            for name in ("predicted_answers", "gold_answers"):
                check_answers(record[name], f"{where}: {name}")
            records.append(record)
    except ValueError as error:
        if "the line is cut off" not in str(error):
            raise
        print(f"warning: {str(error).split(': not valid JSON')[0]}: the last line is incomplete (a run still "
              "writing, or killed mid-write); it is left out", file=sys.stderr)
    return records


def known_fields(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """The ``--by`` fields the records have: top-level keys, dotted paths into nested objects, metadata keys."""
    found: set[str] = set()

    def walk(value: Mapping[str, Any], prefix: str) -> None:
        for key, inner in value.items():
            found.add(prefix + key)
            if isinstance(inner, Mapping) and not prefix:
                walk(inner, f"{key}.")

    for record in records:
        walk(record, "")
        found.update(str(k) for k in (record.get("metadata") or {}))
    return sorted(found)


def evaluate_records(records: Iterable[Mapping[str, Any]], by: str | None = None) -> dict[str, dict[str, Any]]:
    """Rescore every record and summarise, overall (key ``"all"``) and per value of ``by`` when given.

    Records without gold answers are not scored; a group that has some reports their number as ``unscored``.
    """
    from sparqlab.eval import score_prediction, summarise

    rescored = []
    for number, record in enumerate(records, start=1):
        if "gold_answers" not in record or "predicted_answers" not in record:
            raise ValueError(f"record {number} (id {record.get('id')!r}) needs predicted_answers and gold_answers")
        if record["gold_answers"] is None:
            rescored.append(record)
            continue
        try:
            scores = score_prediction(record["predicted_answers"], record["gold_answers"])
        except (TypeError, ValueError) as error:
            raise ValueError(f"record {number} (id {record.get('id')!r}): {error}") from None
        rescored.append({**record, **scores})

    def summary(group: list[Mapping[str, Any]]) -> dict[str, Any]:
        result = summarise([r for r in group if r["gold_answers"] is not None])
        unscored = sum(1 for r in group if r["gold_answers"] is None)
        return {**result, "unscored": unscored} if unscored else result

    table = {}
    if by and all(_field(record, by) == MISSING for record in rescored):
        raise ValueError(f"no record has field {by!r}; known fields: {', '.join(known_fields(rescored))}")
    if by:
        groups: dict[str, list[Mapping[str, Any]]] = {}
        for record in rescored:
            groups.setdefault(_field(record, by), []).append(record)
        table = {key: summary(groups[key]) for key in sorted(groups)}
    table["all"] = summary(rescored)
    return table


def format_table(table: Mapping[str, Mapping[str, Any]], by: str | None = None) -> str:
    """A plain-text table, one row per group: the metrics of the ``eval`` view (:data:`sparqlab.eval.metrics.METRICS`)
    as each prints itself (rates in percent with one decimal, as papers print them), costs as means per scored
    question."""
    from sparqlab.eval.metrics import COST_FIELDS, metric_list

    shown = {metric.key: metric for metric in metric_list("eval")}
    columns = ["n", "unscored", *shown, *COST_FIELDS]
    columns = [c for c in columns if any(c in row for row in table.values())]
    header = [by or "group", *columns]

    def cell(column: str, value: Any) -> str:
        if column in shown:
            return shown[column].format(value)
        if value is None:
            return "-"
        return str(value) if column in ("n", "unscored") else f"{value:.2f}"

    rows = [[str(key), *(cell(c, row.get(c, 0 if c == "unscored" else None)) for c in columns)]
            for key, row in table.items()]
    return text_table(header, rows, right=range(1, len(header)))


def _field(record: Mapping[str, Any], path: str) -> str:
    """``record[path]``, following dots; a name not at the top level is also looked up in ``metadata``."""
    for root in (record, record.get("metadata") or {}):
        value: Any = root
        for part in path.split("."):
            if not isinstance(value, Mapping) or part not in value:
                break
            value = value[part]
        else:
            return MISSING if value is None else str(value)
    return MISSING
