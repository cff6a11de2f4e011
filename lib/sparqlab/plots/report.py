"""Error analysis as static HTML: one run (failures first) or two runs (the flipped questions and the paired test).

One renderer for three readers: ``sparqlab runs report`` writes :func:`report_page` to a self-contained file (no
server, no script, opens from disk), the trace browser (:mod:`sparqlab.plots.widgets`) shows the same question
views live and carries :func:`run_fragment` as the static fallback an executed notebook keeps for nbconvert and
GitHub, and :func:`sparqlab.plots.widgets.compare_runs` shows :func:`comparison_fragment`.

A question's view puts the gold and the predicted SPARQL side by side with a line diff, both answer sets sorted
with the gold answers the prediction misses and the predicted answers the gold lacks marked, the error category
(:func:`error_label`) and the model reply that produced the final query (:func:`deciding_reply`).
"""

from __future__ import annotations

import difflib
import functools
import html
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sparqlab.core.files import atomic_write
from sparqlab.core.labels import merged, provenance_line
from sparqlab.core.names import short_name
from sparqlab.eval.metrics import ANSWER_METRICS, EM_KEY, F1_KEY, RATE, find_metric, metric_list
from sparqlab.platform.trace import TraceEvent
from sparqlab.runs.results import (
    STANDIN_LABEL,
    load_traces,
    model_label,
    run_records,
    run_summary,
)
from sparqlab.runs.store import CONFIG, ENVIRONMENT, TRACES, read_document

MISSING = "–"
"""The one marker of a missing value, in tables, reports and the trace browser."""

OUTCOMES = ("correct", "wrong", "no query", "unscored")
"""A question's outcome (:func:`outcome`): exact match, a query with wrong answers, no final query, not judged."""

STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;max-width:1400px;color:#222}
h1{font-size:1.4em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.5em}
table.metrics{border-collapse:collapse}table.metrics td,table.metrics th{border:1px solid #ccc;padding:2px 8px;
text-align:left}
.sq-question{border:1px solid #ddd;border-left:5px solid #999;padding:6px 10px;margin:10px 0}
.sq-wrong{border-left-color:#c00000}.sq-noquery{border-left-color:#de8f05}.sq-correct{border-left-color:#029e73}
.sq-side{display:flex;gap:10px}.sq-side>div{flex:1;min-width:0}
.sq-report pre,.sq-question pre{white-space:pre-wrap;word-break:break-word;background:#f7f7f7;padding:4px;margin:2px 0}
.sq-del{background:#ffd7d5}.sq-add{background:#d4f8d4}.sq-missing{background:#ffd7d5}.sq-extra{background:#fff0b3}
.sq-tag{font-size:85%;padding:0 4px;border-radius:3px;background:#eee}
.sq-standin{color:#a00;font-weight:bold}
"""
"""Inline CSS of every fragment (the class names are ``sq-*`` so a notebook's own styles are not touched)."""


def outcome(record: Mapping[str, Any]) -> str:
    """``correct``, ``wrong``, ``no query`` or ``unscored`` (no score: no gold, or the gold failed)."""
    if not _text(record.get("predicted_sparql")):
        return "no query"
    if record.get(EM_KEY) is None and record.get(F1_KEY) is None:
        return "unscored"
    return "correct" if record.get(EM_KEY) else "wrong"


def error_label(record: Mapping[str, Any]) -> str:
    """Why a question is not answered exactly: the method's own category (a timeout, a model error ...) or else
    the shared categorisation (``error_type``: no_query, empty_result, semantic:<subtype> ...); ``""`` when
    correct. Every wrong answer gets one (``wrong answer`` when a record predates both fields)."""
    if outcome(record) == "correct":
        return ""
    return str(record.get("error_category") or record.get("error_type") or
               ("no query" if outcome(record) == "no query" else "wrong answer"))


def deciding_reply(events: Sequence[TraceEvent]) -> str | None:
    """The last model reply in a trace: the one the final query (or the failure) came from."""
    for event in reversed(events):
        if event.kind == "model_call":
            reply = event.data.get("response", event.data.get("content"))
            if reply is not None:
                return reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False, default=str)
    return None


def query_diff(gold: str | None, predicted: str | None) -> str:
    """Gold and predicted query side by side (whole, wrapped) and their line diff, as HTML."""
    gold_text, predicted_text = _text(gold), _text(predicted)
    side = _side_by_side(("gold SPARQL", _pre(gold_text or "(no gold query)")),
                         ("predicted SPARQL", _pre(predicted_text or "(no query)")))
    if not gold_text or not predicted_text:
        return side
    return side + "<div><b>diff</b> (gold → predicted)</div>" + _diff_pre(gold_text, predicted_text)


def answer_sets(gold: Iterable[Any] | None, predicted: Iterable[Any] | None, has_query: bool = True,
                max_answers: int = 50) -> str:
    """Both answer sets sorted, gold answers the prediction misses marked *missing*, predicted answers the gold
    lacks marked *extra*; a question with no query says so instead of showing an empty set."""
    gold_set = None if gold is None else sorted({str(v) for v in gold})
    predicted_set = None if predicted is None else sorted({str(v) for v in predicted})

    def listing(values: list[str] | None, other: list[str] | None, mark: str, absent: str) -> str:
        if values is None:
            return f"<i>{absent}</i>"
        if not values:
            return "<i>empty</i>"
        others = set(other or [])
        items = [f'<li class="sq-{mark}" title="{mark}">{html.escape(v)} <span class="sq-tag">{mark}</span></li>'
                 if v not in others else f"<li>{html.escape(v)}</li>" for v in values[:max_answers]]
        more = f"<li>… {len(values) - max_answers} more ({len(values)} in all)</li>" if len(values) > max_answers else ""
        return f"<ul>{''.join(items)}{more}</ul>"

    def count(values: list[str] | None) -> str:
        return "" if values is None else f" ({len(values)})"

    return _side_by_side(
        (f"gold answers{count(gold_set)}", listing(gold_set, predicted_set, "missing", "none (gold not executed)")),
        (f"predicted answers{count(predicted_set)}",
         listing(predicted_set, gold_set, "extra", "none: the query failed" if has_query else "none: no query")))


def question_fragment(record: Mapping[str, Any], events: Sequence[TraceEvent] = (), standin: bool = False) -> str:
    """One question: outcome, scores, error category, the reply that caused it, both queries and both answer sets."""
    result = outcome(record)
    css = {"correct": "sq-correct", "no query": "sq-noquery"}.get(result, "sq-wrong")
    error = error_label(record)
    scores = " · ".join(f"<b>{k}</b> {_score(record.get(k), k)}" for k in ANSWER_METRICS if k in record)
    tag = f' <span class="sq-standin">{STANDIN_LABEL}</span>' if standin else ""
    parts = [f'<div class="sq-question {css}">',
             f"<div><b>{html.escape(str(record.get('id', '')))}</b>{tag}: "
             f"{html.escape(str(record.get('question', '')))}</div>",
             f"<div><b>outcome</b> {html.escape(result)} · {scores}"
             + (f" · <b>error</b> {html.escape(error)}" if error else "") + "</div>",
             query_diff(record.get("gold_sparql"), record.get("predicted_sparql")),
             answer_sets(record.get("gold_answers"), record.get("predicted_answers"),
                         has_query=result != "no query")]
    reply = deciding_reply(events) if error else None
    if reply is not None:
        parts.append(f"<details><summary><b>the reply that led to it</b> (last model call)</summary>"
                     f"{_pre(reply)}</details>")
    parts.append("</div>")
    return "\n".join(parts)


class RunView:
    """A run's records, traces and identity, read once for rendering (``name`` is ``experiment/folder``; the
    traces, the largest file, only when a question is rendered)."""

    def __init__(self, run_dir: str | Path):
        self.path = Path(run_dir)
        self.summary = run_summary(self.path)
        self.records = run_records(self.path)
        self.name = f"{self.summary.get('experiment')}/{self.path.name}"
        self.standin = bool(self.summary.get("model_is_standin"))

    @functools.cached_property
    def traces(self) -> dict[str, list[TraceEvent]]:
        """Question id (as text) → its trace events."""
        if not (self.path / TRACES).exists():
            return {}
        return {str(qid): events for qid, events in load_traces(self.path).items()}

    @property
    def model(self) -> str:
        return model_label(self.summary.get("model"), self.summary.get("model_is_standin"))

    def failures(self) -> list[Mapping[str, Any]]:
        """Questions not answered exactly (no query and wrong answers), in file order; unscored ones left out."""
        return [r for r in self.records if outcome(r) in ("wrong", "no query")]

    def question(self, record: Mapping[str, Any]) -> str:
        return question_fragment(record, self.traces.get(str(record.get("id")), ()), self.standin)


def summary_fragment(view: RunView) -> str:
    """Run name, model (``[standin]`` marked), method, data, KG and engine, metrics in percent, and the config."""
    summary = view.summary
    environment = read_document(view.path / ENVIRONMENT) if (view.path / ENVIRONMENT).exists() else {}
    engine = summary.get("engine") or environment.get("kg_engine")
    model = model_html(view.model)
    rows = [("model", model + (" — a stand-in model, not an LLM result" if view.standin else "")),
            ("method", html.escape(str(summary.get("method") or MISSING))),
            ("data", html.escape(f"{short_name(summary.get('dataset'))} {summary.get('split') or ''} · "
                                 f"{summary.get('selection')}")),
            ("KG", html.escape(str(short_name(summary.get("kg")) or MISSING))),
            ("engine", html.escape(_as_text(engine) if engine else MISSING)),
            ("status", html.escape(f"{summary.get('status')} · {summary.get('n_done')}/{summary.get('n_questions')} "
                                   f"done · {summary.get('date')}"))]
    metrics = [(m.key, _score(summary.get(m.key), m.key)) for m in metric_list("report") if m.key in summary]
    failures = view.failures()
    categories: dict[str, int] = {}
    for record in failures:
        categories[error_label(record)] = categories.get(error_label(record), 0) + 1
    config = read_document(view.path / CONFIG) if (view.path / CONFIG).exists() else {}
    return "\n".join([
        f"<h2>{html.escape(view.name)}</h2>",
        '<table class="metrics">' + "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows) + "</table>",
        '<p><table class="metrics"><tr>' + "".join(f"<th>{html.escape(k)}</th>" for k, _ in metrics) + "</tr><tr>"
        + "".join(f"<td>{v}</td>" for _, v in metrics) + "</tr></table></p>",
        f"<p><b>{len(failures)} of {len(view.records)} questions not answered exactly</b>"
        + (": " + ", ".join(f"{html.escape(k)} {n}" for k, n in sorted(categories.items(), key=lambda kv: -kv[1]))
           if categories else "") + "</p>",
        f"<details><summary>config</summary>{_pre(json.dumps(without_paths(config), indent=2, default=str))}"
        "</details>",
    ])


def model_html(label: str) -> str:
    """A model label (:func:`~sparqlab.runs.results.model_label`) as HTML, its ``[standin]`` marked."""
    return html.escape(label).replace(html.escape(STANDIN_LABEL), f'<span class="sq-standin">{STANDIN_LABEL}</span>')


def without_paths(value: Any) -> Any:
    """``value`` (a config document) with every absolute file path shown by its short name
    (:func:`~sparqlab.core.names.short_name`): a page or notebook that is shared names no folder of one machine; the
    run folder's ``config.json`` keeps the paths."""
    if isinstance(value, Mapping):
        return {key: without_paths(item) for key, item in value.items()}
    if isinstance(value, list):
        return [without_paths(item) for item in value]
    if isinstance(value, str) and "://" not in value and Path(value).is_absolute():
        return short_name(value)
    return value


def run_fragment(run_dir: str | Path | RunView, max_failures: int | None = None) -> str:
    """A run's summary, then every failing question in full, then the questions answered exactly (a list)."""
    view = run_dir if isinstance(run_dir, RunView) else RunView(run_dir)
    failures = view.failures()
    shown = failures if max_failures is None else failures[:max_failures]
    correct = [r for r in view.records if outcome(r) == "correct"]
    parts = [f'<style>{STYLE}</style><div class="sq-report">', summary_fragment(view), "<h3>Failing questions</h3>"]
    parts += [view.question(r) for r in shown] or ["<p><i>none</i></p>"]
    if len(shown) < len(failures):
        parts.append(f"<p><i>… {len(failures) - len(shown)} more failing questions: "
                     f"<code>sparqlab runs report {html.escape(view.name)}</code> lists all</i></p>")
    parts.append(f"<details><summary>{len(correct)} questions answered exactly</summary><ul>"
                 + "".join(f"<li>{html.escape(str(r.get('id')))}: {html.escape(str(r.get('question', '')))}</li>"
                           for r in correct) + "</ul></details></div>")
    return "\n".join(parts)


def paired_views(first: str | Path | RunView, second: str | Path | RunView) -> tuple[RunView, RunView]:
    """Two runs to compare, named apart (two folders of the same name in different places by their paths)."""
    a, b = (v if isinstance(v, RunView) else RunView(v) for v in (first, second))
    if a.name == b.name:
        a.name, b.name = str(a.path), str(b.path)
    return a, b


def comparison_fragment(first: str | Path | RunView, second: str | Path | RunView, max_flips: int | None = None,
                        paired: Any = None) -> str:
    """Two runs of one question set: both summaries' key numbers, the paired test named by the runs (``paired``:
    one already computed on these views), and every question that flipped (exact in one run only) with both
    queries diffed against each other and both answer sets."""
    from sparqlab.eval.paired import paired_comparison

    a, b = paired_views(first, second)
    result = paired if paired is not None else paired_comparison(a.records, b.records, a.name, b.name)
    by_id = [{str(r["id"]): r for r in view.records} for view in (a, b)]
    compared = metric_list("compare")
    parts = [f'<style>{STYLE}</style><div class="sq-report">',
             f"<h2>{html.escape(a.name)} vs {html.escape(b.name)}</h2>",
             '<table class="metrics"><tr><th>run</th><th>model</th>'
             + "".join(f"<th>{html.escape(m.label)}</th>" for m in compared) + "</tr>"
             + "".join(f"<tr><td>{html.escape(v.name)}</td><td>{html.escape(v.model)}</td>"
                       + "".join(f"<td>{_score(v.summary.get(m.key), m.key)}</td>" for m in compared) + "</tr>"
                       for v in (a, b))
             + "</table>",
             "<h3>Paired test</h3>", _pre(result.summary())]
    for winner, ids in ((a, result.a_only), (b, result.b_only)):
        shown = ids if max_flips is None else ids[:max_flips]
        parts.append(f"<h3>Exact only in {html.escape(winner.name)} ({len(ids)})</h3>")
        if not ids:
            parts.append("<p><i>none</i></p>")
        for qid in shown:
            left, right = by_id[0][qid], by_id[1][qid]
            parts.append(flip_fragment(left, right, a, b))
        if len(shown) < len(ids):
            parts.append(f"<p><i>… {len(ids) - len(shown)} more</i></p>")
    return "\n".join([*parts, "</div>"])


def flip_fragment(left: Mapping[str, Any], right: Mapping[str, Any], a: RunView, b: RunView) -> str:
    """One flipped question: both runs' queries side by side with their diff, the gold query, both answer sets."""
    left_query, right_query = _text(left.get("predicted_sparql")), _text(right.get("predicted_sparql"))
    diff = _diff_pre(left_query, right_query) if left_query and right_query else ""
    return "\n".join([
        '<div class="sq-question">',
        f"<div><b>{html.escape(str(left.get('id')))}</b>: {html.escape(str(left.get('question', '')))}</div>",
        f"<div>{html.escape(a.name)}: {html.escape(outcome(left))} {html.escape(error_label(left))} · "
        f"{html.escape(b.name)}: {html.escape(outcome(right))} {html.escape(error_label(right))}</div>",
        _side_by_side((f"{a.name} SPARQL", _pre(left_query or "(no query)")),
                      (f"{b.name} SPARQL", _pre(right_query or "(no query)"))),
        (f"<div><b>diff</b> ({html.escape(a.name)} → {html.escape(b.name)})</div>" + diff) if diff else "",
        f"<details><summary>gold SPARQL</summary>{_pre(_text(left.get('gold_sparql')) or '(none)')}</details>",
        _side_by_side((f"{a.name} answers", _answer_list(left)), (f"{b.name} answers", _answer_list(right))),
        f"<div><b>gold answers</b>: {html.escape(', '.join(sorted(map(str, left.get('gold_answers') or []))))}</div>",
        "</div>"])


def group_fragment(group_dir: str | Path) -> str:
    """A run group (``run --repeats``): its model (``[standin]`` marked), each metric's mean ± sd between runs with
    its two-level interval and per-run values, the metrics over repeats, the agreement of every question (the
    share of repeats returning the majority answer set, each repeat's outcome), then each question that flips
    between repeats with every repeat's query and answers."""
    from sparqlab.runs.groups import group_metrics, group_records, interval_text, over_repeats, spread

    group_dir = Path(group_dir)
    metrics, runs = group_metrics(group_dir), group_records(group_dir)
    by_id = [{str(r["id"]): r for r in run} for run in runs]
    model = model_html(model_label(metrics.get("model"), metrics.get("model_is_standin")))
    scores = "".join(
        f"<tr><th>{html.escape(m.label)}</th><td>{spread(m, metrics['scores'][m.key])}</td>"
        f"<td>{interval_text(m, metrics['scores'][m.key])}</td>"
        f"<td>{' '.join(m.format(v) for v in metrics['scores'][m.key]['runs'])}</td></tr>"
        for m in metric_list("report") if m.key in metrics["scores"])
    scores += "".join(f"<tr><th>{html.escape(key)}</th><td>{m.format(value['value'])}</td>"
                      f"<td>{interval_text(m, value)}</td><td></td></tr>" for m, key, value in over_repeats(metrics))
    stability = metrics["stability_by_question"]
    agreement = "".join(
        f"<tr><td>{html.escape(qid)}</td><td>{html.escape(str(by_id[0][qid].get('question', '')))}</td>"
        f"<td>{share:.2f}</td><td>{' '.join(html.escape(outcome(run[qid])) for run in by_id)}</td></tr>"
        for qid, share in sorted(stability.items(), key=lambda item: item[1]))
    flips = []
    for qid in metrics["flipping"]:
        columns = [(f"seed {seed}", _pre(_text(run[qid].get("predicted_sparql")) or "(no query)") + _answer_list(run[qid]))
                   for seed, run in zip(metrics["seeds"], by_id, strict=True)]
        flips.append(f'<div class="sq-question"><div><b>{html.escape(qid)}</b>: '
                     f"{html.escape(str(by_id[0][qid].get('question', '')))} · agreement {stability[qid]:.2f}</div>"
                     + _side_by_side(*columns) + "</div>")
    return "\n".join([
        f'<style>{STYLE}</style><div class="sq-report">',
        f"<h2>run group {html.escape(metrics['group'])}</h2>",
        f"<p>model {model}" + (" — a stand-in model: its spread is a seeded draw, not a model's variance" if metrics.get("model_is_standin")
           else "") + f" · {metrics['n_repeats']} repeats, seeds {', '.join(map(str, metrics['seeds']))} · "
        f"{metrics['n_paired']} questions judged in every repeat</p>",
        f'<table class="metrics"><tr><th>metric</th><th>mean ± sd between runs</th><th>{metrics["ci"]:g}% '
        f"interval ({html.escape(metrics['interval_method'])})</th><th>per run</th></tr>{scores}</table>",
        f"<h3>Agreement per question (share of repeats returning the majority answer set; mean "
        f"{metrics['stability']:.3f})</h3>",
        f'<table class="metrics"><tr><th>id</th><th>question</th><th>agreement</th><th>outcome per repeat</th></tr>'
        f"{agreement}</table>",
        f"<h3>Questions that flip between repeats ({len(flips)})</h3>", *(flips or ["<p><i>none</i></p>"]), "</div>"])


def report_page(runs: Sequence[str | Path], max_failures: int | None = None) -> str:
    """A self-contained HTML page: one run's analysis, or for two runs their comparison then each run's analysis,
    or a run group's agreement (:func:`group_fragment`)."""
    from sparqlab.runs.groups import GROUP

    if len(runs) == 1 and (Path(runs[0]) / GROUP).exists():
        metrics = read_document(Path(runs[0]) / "metrics.json")
        return "\n".join([
            "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
            f"<title>sparqlab report: {html.escape(Path(runs[0]).name)}</title></head><body>",
            f"<h1>sparqlab report: {html.escape(Path(runs[0]).name)}</h1>",
            f'<p class="sq-standin">{STANDIN_LABEL}: answered by a deterministic stand-in model, not an LLM.</p>'
            if metrics.get("model_is_standin") else "", group_fragment(runs[0]), "</body></html>"])
    views = [RunView(r) for r in runs]
    if not 1 <= len(views) <= 2:
        raise ValueError(f"a report covers one or two runs, got {len(views)}")
    title = " vs ".join(v.name for v in views)
    body = [comparison_fragment(*views)] if len(views) == 2 else []
    body += [run_fragment(v, max_failures) for v in views]
    made_from = provenance_line(merged((v.summary.get("model"), v.standin) for v in views))
    style = "sq-standin" if any(v.standin for v in views) else "sq-model"
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>sparqlab report: {html.escape(title)}</title></head><body>",
        f"<h1>sparqlab report: {html.escape(title)}</h1>",
        f'<p class="{style}">{html.escape(made_from)}</p>' if made_from else "", *body, "</body></html>"])


def write_report(runs: Sequence[str | Path], output: str | Path, max_failures: int | None = None) -> Path:
    """:func:`report_page` written to ``output`` (its folder is created) atomically: a full disk leaves no
    truncated page and names the file."""
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write(output, report_page(runs, max_failures))


def _answer_list(record: Mapping[str, Any]) -> str:
    values = record.get("predicted_answers")
    if values is None:
        return "<i>none: no query</i>" if outcome(record) == "no query" else "<i>none: the query failed</i>"
    return _pre("\n".join(sorted(map(str, values))) or "(empty)")


def _side_by_side(*columns: tuple[str, str]) -> str:
    return '<div class="sq-side">' + "".join(f"<div><b>{html.escape(title)}</b>{body}</div>"
                                             for title, body in columns) + "</div>"


def _diff_pre(before: str, after: str) -> str:
    """A unified line diff, deleted lines red and added lines green (``(identical)`` when there is no change)."""
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=2))[2:]
    if not lines:
        return _pre("(identical)")
    styled = [f'<span class="{"sq-del" if line.startswith("-") else "sq-add"}">{html.escape(line)}</span>'
              if line[:1] in "+-" else html.escape(line) for line in lines]
    return "<pre>" + "\n".join(styled) + "</pre>"


def _pre(text: str) -> str:
    return f"<pre>{html.escape(text)}</pre>"


def _text(value: Any) -> str:
    """A query as text, ``""`` for none (a missing value read through pandas is NaN, not a string)."""
    return value.strip() if isinstance(value, str) else ""


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _score(value: Any, key: str) -> str:
    """A score as the papers print it: rates in percent with one decimal, booleans yes/no, missing as ``–``."""
    if value is None or (isinstance(value, float) and value != value):
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if (metric := find_metric(key)) is not None and metric.unit == RATE and isinstance(value, int | float):
        return f"{100 * value:.1f}%"
    return html.escape(str(value))
