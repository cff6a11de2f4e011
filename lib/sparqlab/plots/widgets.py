"""A trace browser for error analysis in notebooks, and two runs side by side.

Pick a run (the latest opens), filter its questions by outcome and error category, step through a trace, see the
gold and predicted SPARQL with their diff and both answer sets.

The loading, stepping and rendering are plain functions (:func:`sparqlab.runs.results.run_dirs`, :func:`load_run`,
:func:`render_event`, :func:`render_step`, :func:`render_prediction`, ...) that tests and other front ends call
directly; :class:`TraceBrowser` only wires them to ipywidgets. Usage in a notebook::

    from sparqlab.plots.widgets import trace_browser
    trace_browser()                  # the latest run under sparqlab.core.paths.runs_dir(), its failures first
    trace_browser(experiment="quickstart")
    compare_runs("exp/run-a", "exp/run-b")   # flipped questions and the paired test
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparqlab.core.jsonl import read_jsonl
from sparqlab.core.paths import runs_dir
from sparqlab.eval.metrics import METRICS, PRIMARY_METRIC
from sparqlab.platform.trace import TraceEvent
from sparqlab.plots.report import (
    OUTCOMES,
    STYLE,
    RunView,
    comparison_fragment,
    error_label,
    flip_fragment,
    outcome,
    paired_views,
    question_fragment,
    run_fragment,
)
from sparqlab.runs.results import STANDIN_LABEL, find_run, run_dirs
from sparqlab.runs.store import PREDICTIONS, TRACES, RunUnreadable

EVENT_COLOURS = {
    "thought": "#0173b2",
    "action": "#de8f05",
    "observation": "#029e73",
    "model_call": "#cc78bc",
    "query": "#d55e00",
    "final_query": "#ca9161",
    "error": "#c00000",
}
"""Header colour per event type (colour-blind palette). Failures (``*_error``, ``*_failure``, ``timeout``) take
the ``error`` colour; other event types are grey."""

BLOCK_FIELDS = ("text", "thought", "action", "observation", "content", "response", "sparql", "query", "message",
                "result", "error")
"""Fields shown as preformatted blocks, in this order, before the remaining fields."""


@dataclass
class RunTraces:
    """One run folder's predictions and traces, keyed by question id (ids in file order)."""

    path: Path
    predictions: dict[str, dict[str, Any]] = field(default_factory=dict)
    traces: dict[str, list[TraceEvent]] = field(default_factory=dict)

    @property
    def question_ids(self) -> list[str]:
        """Ids with a prediction, then ids that only have a trace."""
        return list(self.predictions) + [i for i in self.traces if i not in self.predictions]

    def events(self, question_id: str) -> list[TraceEvent]:
        """The trace of one question (empty when none was recorded)."""
        return self.traces.get(question_id, [])


def load_run(run_dir: str | Path) -> RunTraces:
    """Read ``predictions.jsonl`` and ``traces.jsonl`` of a run folder (either may be missing)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"no run folder at {run_dir}")
    run = RunTraces(run_dir)
    for record in read_jsonl(run_dir / PREDICTIONS):
        run.predictions[str(record["id"])] = record
    for record in read_jsonl(run_dir / TRACES):
        run.traces[str(record["id"])] = [TraceEvent.from_json(e) for e in record.get("trace") or []]
    return run


OUTCOME_MARKS = {"correct": " ✓", "wrong": " ✗", "no query": " ∅", "unscored": ""}
"""How a question's outcome shows in the question picker: exact, wrong answers, no final query."""


def question_label(run: RunTraces, question_id: str, width: int = 70) -> str:
    """``id ✗ — question text`` shortened to ``width`` characters, marked by outcome (:data:`OUTCOME_MARKS`)."""
    record = run.predictions.get(question_id)
    mark = OUTCOME_MARKS[outcome(record)] if record else ""
    text = f"{question_id}{mark} — {(record or {}).get('question', '(no prediction)')}"
    return text if len(text) <= width else text[: width - 1] + "…"


def as_event(event: TraceEvent | dict[str, Any]) -> TraceEvent:
    """A typed event (a ``traces.jsonl`` dict, typed or from an older run, is converted)."""
    return event if isinstance(event, TraceEvent) else TraceEvent.from_json(event)


def clamp_step(step: int, events: list[TraceEvent]) -> int:
    """A valid index into ``events`` (0 when there are none)."""
    return max(0, min(step, len(events) - 1))


def event_fields(event: TraceEvent | dict[str, Any]) -> tuple[str, list[tuple[str, str]], list[tuple[str, str]]]:
    """Split an event into its kind, block fields (long text, in :data:`BLOCK_FIELDS` order) and short fields
    (step and role first).

    Values that are not strings are shown as indented JSON; chat ``messages`` become one block per message (a
    model call that continues an earlier conversation shows only its new messages and says which it continues).
    """
    event = as_event(event)
    kind = event.kind
    data = event.data
    rest = {k: v for k, v in data.items() if k not in ("messages", "continues", "prefix")}
    head = {k: v for k, v in (("step", event.step), ("role", event.role)) if v is not None}
    if "continues" in data:
        head["continues"] = f"event {data['continues'] + 1} (first {data.get('prefix')} messages not repeated)"
    rest = {**head, **rest}
    blocks = [(k, _as_text(rest.pop(k))) for k in BLOCK_FIELDS if k in rest]
    first = data.get("prefix", 0) + 1
    for number, message in enumerate(data.get("messages") or [], start=first):
        role = message.get("role", "?") if isinstance(message, dict) else "?"
        content = message.get("content", "") if isinstance(message, dict) else message
        blocks.append((f"message {number} ({role})", _as_text(content)))
    short = [(k, _as_text(v)) for k, v in rest.items()]
    blocks += [(k, v) for k, v in short if "\n" in v or len(v) > 120]
    short = [(k, v) for k, v in short if "\n" not in v and len(v) <= 120]
    return kind, blocks, short


def event_text(event: TraceEvent | dict[str, Any], index: int | None = None, total: int | None = None) -> str:
    """An event as plain text (for terminals and logs)."""
    kind, blocks, short = event_fields(event)
    header = f"[{index + 1}/{total}] {kind}" if index is not None and total else kind
    lines = [header] + [f"  {k}: {v}" for k, v in short]
    for key, value in blocks:
        lines.append(f"  {key}:")
        lines += [f"    {line}" for line in value.splitlines() or [""]]
    return "\n".join(lines)


def event_colour(kind: str) -> str:
    """The header colour of an event type (see :data:`EVENT_COLOURS`), so failures stand out in a long trace."""
    if kind in EVENT_COLOURS:
        return EVENT_COLOURS[kind]
    if kind.endswith(("timeout", "_error", "_failure")):
        return EVENT_COLOURS["error"]
    return "#666666"


def render_event(event: TraceEvent | dict[str, Any], index: int | None = None, total: int | None = None,
                 start_time: float | None = None, collapse_system: bool = False) -> str:
    """An event as an HTML fragment: coloured header, short fields as a line, long fields as ``<pre>`` blocks
    (``collapse_system``: system messages folded into a ``<details>``, for prompts shown before)."""
    event = as_event(event)
    kind, blocks, short = event_fields(event)
    colour = event_colour(kind)
    position = f"step {index + 1} of {total} · " if index is not None and total else ""
    elapsed = ""
    if start_time is not None and isinstance(event.t, int | float):
        elapsed = f" · +{event.t - start_time:.2f} s"
    parts = [
        f'<div style="border-left:4px solid {colour};padding:4px 8px;margin:4px 0">',
        f'<div style="color:{colour};font-weight:bold">{html.escape(position)}{html.escape(kind)}'
        f'<span style="color:#888;font-weight:normal">{html.escape(elapsed)}</span></div>',
    ]
    if short:
        cells = " · ".join(f"<b>{html.escape(k)}</b>: {html.escape(v)}" for k, v in short)
        parts.append(f'<div style="font-size:90%">{cells}</div>')
    for key, value in blocks:
        block = f'<pre style="white-space:pre-wrap;margin:2px 0">{html.escape(value)}</pre>'
        if collapse_system and key.endswith("(system)"):
            parts.append(f"<details><summary><b>{html.escape(key)}</b> (the system prompt again, "
                         f"{len(value.splitlines())} lines)</summary>{block}</details>")
        else:
            parts.append(f'<div style="font-size:90%;margin-top:4px"><b>{html.escape(key)}</b></div>{block}')
    parts.append("</div>")
    return "\n".join(parts)


STEP_LABELS = {"thought": "thought", "action": "action", "observation": "observation", "model_call": "model",
               "query": "query", "final_query": "final query", "tool": "tool"}
"""Short names of event kinds on the step buttons and timeline chips (distinct: "thought" and "tool" differ)."""


def step_label(index: int, event: TraceEvent | dict[str, Any]) -> str:
    """``3 model`` — the step number and its kind, the label of a clickable step."""
    kind = as_event(event).kind
    return f"{index + 1} {STEP_LABELS.get(kind, kind.replace('_', ' '))}"


def render_timeline(events: list[TraceEvent | dict[str, Any]], current: int) -> str:
    """One small chip per event (number and kind), the current one filled, so the position in a long trace stays
    visible in static output."""
    chips = []
    for index, event in enumerate(events):
        kind = as_event(event).kind
        colour = event_colour(kind)
        fill = f"background:{colour};color:white" if index == current else f"color:{colour}"
        chips.append(f'<span title="{index + 1}: {html.escape(kind)}" style="border:1px solid {colour};'
                     f'{fill};padding:0 3px;margin:1px;font-size:75%">{html.escape(step_label(index, event))}</span>')
    return '<div style="line-height:1.8">' + "".join(chips) + "</div>"


def first_system_prompt(events: list[TraceEvent]) -> int | None:
    """Index of the first event that shows a system prompt; later ones are collapsed (they repeat it)."""
    return next((i for i, e in enumerate(events)
                 if any(isinstance(m, dict) and m.get("role") == "system" for m in e.data.get("messages") or [])),
                None)


def render_step(events: list[TraceEvent | dict[str, Any]], step: int, timeline: bool = True) -> str:
    """The timeline (``timeline``; the browser's step buttons replace it) plus the event at ``step`` (clamped), or
    a note when the trace is empty; a system prompt after the trace's first is collapsed, so the reply stays
    above the fold."""
    if not events:
        return "<i>No trace recorded for this question.</i>"
    events = [as_event(e) for e in events]
    step = clamp_step(step, events)
    times = [e.t for e in events if isinstance(e.t, int | float)]
    first = first_system_prompt(events)
    return (render_timeline(events, step) if timeline else "") + render_event(events[step], step, len(events),
                                                        start_time=min(times) if times else None,
                                                        collapse_system=first is not None and step > first)


def render_trace(events: list[TraceEvent | dict[str, Any]]) -> str:
    """A whole trace as HTML, one event after another, system prompts after the first collapsed (a notebook cell's
    static view of a question; the browser steps through the same events)."""
    if not events:
        return "<i>No trace recorded for this question.</i>"
    events = [as_event(e) for e in events]
    first = first_system_prompt(events)
    times = [e.t for e in events if isinstance(e.t, int | float)]
    return "".join(render_event(e, i, len(events), start_time=min(times) if times else None,
                                collapse_system=first is not None and i > first) for i, e in enumerate(events))


def render_prediction(record: dict[str, Any] | None, standin: bool = False,
                      events: list[TraceEvent] | None = None) -> str:
    """One prediction: outcome, scores, error category, gold and predicted SPARQL side by side with a diff, both
    answer sets with missing / extra marked, and (given its trace ``events``) the reply that led to a failure
    (:func:`sparqlab.plots.report.question_fragment`)."""
    if not record:
        return "<i>No prediction recorded for this question.</i>"
    return f"<style>{STYLE}</style>" + question_fragment(record, events or (), standin=standin)


def run_choice_label(run_dir: Path, root: Path) -> str:
    """``experiment / run name · date · selection · F1``: runs sort by experiment, then by their readable name."""
    from sparqlab.runs.results import run_summary

    name = str(run_dir.relative_to(root)).replace("/", " / ", 1)
    try:
        summary = run_summary(run_dir)
    except (KeyError, ValueError, OSError):  # a folder without a readable manifest yet: its name only
        return name
    primary, score = METRICS[PRIMARY_METRIC], summary.get(PRIMARY_METRIC)
    parts = [name, summary.get("date") or "", summary.get("selection") or "",
             f"{primary.label} {primary.format(score)}" if score is not None else "unscored"]
    return " · ".join(part for part in parts if part)


def latest_run(runs: list[Path]) -> Path | None:
    """The run whose predictions changed last (a notebook's newest run), or ``None``."""
    def changed(run: Path) -> float:
        found = [f.stat().st_mtime for f in (run / PREDICTIONS, run / "manifest.json") if f.exists()]
        return max(found, default=0.0)

    return max(runs, key=changed) if runs else None


ANY_CATEGORY = "any"
"""The error filter's first choice: every category (a widget shows no label for a ``None`` value)."""

OUTCOME_FILTERS = ("failures", "all", *OUTCOMES)
"""The outcome filter's choices: ``failures`` is ``wrong`` and ``no query`` together."""


def matches(record: dict[str, Any] | None, outcome_filter: str, category: str | None) -> bool:
    """Whether a question passes the browser's filters (outcome, then error category; ``None``: any)."""
    if record is None:
        return outcome_filter == "all" and category is None
    found = outcome(record)
    if outcome_filter == "failures" and found not in ("wrong", "no query"):
        return False
    if outcome_filter not in ("failures", "all") and found != outcome_filter:
        return False
    return category is None or error_label(record) == category


class TraceBrowser:
    """ipywidgets wiring over the functions above; display the object itself in a notebook.

    It opens on the latest run (of ``experiment`` when given) showing its failures; the run, outcome and error
    category pickers filter the questions, "next failure" jumps to the next failing one, the step buttons open
    one trace event each. Displayed, it also carries a static HTML fallback — the run's summary and its failing
    questions (:func:`sparqlab.plots.report.run_fragment`) — that an executed notebook keeps for readers without
    a kernel (nbconvert, GitHub).
    """

    def __init__(self, root: str | Path | None = None, experiment: str | None = None, run: str | Path | None = None):
        import ipywidgets as w

        self.root = Path(root) if root is not None else runs_dir()
        self.run: RunTraces | None = None
        self.view: RunView | None = None
        self.events: list[TraceEvent] = []
        runs = run_dirs(self.root, experiment)
        start = find_run(run, self.root) if run is not None else latest_run(runs)
        wide = w.Layout(width="90%")
        self.run_picker = w.Dropdown(description="run", options=[(run_choice_label(p, self.root), p) for p in runs],
                                     value=None, layout=wide)
        self.outcome_picker = w.Dropdown(description="outcome", options=OUTCOME_FILTERS, value="failures")
        self.category_picker = w.Dropdown(description="error", options=[ANY_CATEGORY], value=ANY_CATEGORY)
        self.next_failure_button = w.Button(description="next failure ▶▶")
        self.question_picker = w.Dropdown(description="question", options=[], layout=wide)
        self.step_picker = w.ToggleButtons(description="step", options=[], value=None,
                                           style={"button_width": "auto"})
        self.previous_button = w.Button(description="◀ previous")
        self.next_button = w.Button(description="next ▶")
        self.header_view = w.HTML()
        self.event_view = w.HTML()
        self.prediction_view = w.HTML(
            value="<i>Pick a run.</i>" if runs else f"<i>No runs under {html.escape(str(self.root))}.</i>")
        self.run_picker.observe(lambda change: self.select_run(change["new"]), names="value")
        self.outcome_picker.observe(lambda _: self.refilter(), names="value")
        self.category_picker.observe(lambda _: self.refilter(), names="value")
        self.question_picker.observe(lambda change: self.select_question(change["new"]), names="value")
        self.step_picker.observe(lambda change: self.show_step(change["new"]), names="value")
        self.previous_button.on_click(lambda _: self.move(-1))
        self.next_button.on_click(lambda _: self.move(1))
        self.next_failure_button.on_click(lambda _: self.next_failure())
        self.widget = w.VBox([
            self.run_picker, self.header_view,
            w.HBox([self.outcome_picker, self.category_picker, self.next_failure_button]),
            self.question_picker, self.prediction_view, w.HTML("<hr><b>trace</b>"),
            w.HBox([self.previous_button, self.next_button]), self.step_picker, self.event_view,
        ])
        if start in runs:
            self.run_picker.value = start
        elif start is not None:  # a run outside the listed ones (another root or experiment)
            self.select_run(start)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """The widget, plus the static fallback (the run's summary and failing questions) as ``text/html``."""
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/html"] = self.static_html()
        bundle["text/plain"] = f"trace browser: {self.view.name if self.view else 'no run'}"
        return bundle

    def static_html(self, max_failures: int = 20) -> str:
        """What the browser shows without a kernel: the selected run's summary and failing questions."""
        if self.view is None:
            return self.prediction_view.value
        return run_fragment(self.view, max_failures=max_failures)

    def select_run(self, path: Path | None) -> None:
        self.run = load_run(path) if path is not None else None
        try:
            self.view = RunView(path) if path is not None else None
            if self.view is not None:
                self.view.traces = self.run.traces  # read once: load_run has them, keyed by the id as text
        except RunUnreadable as error:  # a damaged line: its traces can still be read, the summary cannot
            self.view = None
            self.header_view.value = f"<b>cannot summarise this run</b>: {html.escape(str(error))}"
        if self.view is not None or path is None:
            self.header_view.value = "" if self.view is None else (
                f"<style>{STYLE}</style><b>{html.escape(self.view.name)}</b> · model {self._model_html()} · "
                f"{len(self.view.failures())} of {len(self.view.records)} questions not answered exactly")
        categories = sorted({error_label(r) for r in self.run.predictions.values()} - {""}) if self.run else []
        self.category_picker.options = [ANY_CATEGORY, *categories]
        self.category_picker.value = ANY_CATEGORY
        if self.run and not any(matches(r, "failures", None) for r in self.run.predictions.values()):
            self.outcome_picker.value = "all"
        self.refilter()

    def _model_html(self) -> str:
        label = html.escape(self.view.model) if self.view else ""
        return label.replace(STANDIN_LABEL, f'<span class="sq-standin">{STANDIN_LABEL}</span>')

    @property
    def category(self) -> str | None:
        """The chosen error category, ``None`` for any."""
        return None if self.category_picker.value == ANY_CATEGORY else self.category_picker.value

    def filtered_ids(self) -> list[str]:
        if self.run is None:
            return []
        return [i for i in self.run.question_ids
                if matches(self.run.predictions.get(i), self.outcome_picker.value, self.category)]

    def refilter(self) -> None:
        ids = self.filtered_ids()
        self.question_picker.options = [(question_label(self.run, i), i) for i in ids] if self.run else []
        self.question_picker.value = ids[0] if ids else None
        if not ids:
            self.select_question(None)

    def select_question(self, question_id: str | None) -> None:
        self.events = self.run.events(question_id) if self.run and question_id is not None else []
        record = self.run.predictions.get(question_id) if self.run and question_id is not None else None
        if record is None and self.run is not None and question_id is None:
            self.prediction_view.value = "<i>No question matches the filters.</i>"
        else:
            self.prediction_view.value = (render_prediction(record, self.view.standin if self.view else False,
                                                            self.events)
                                          if record is not None or question_id is not None else "<i>Pick a run.</i>")
        self.step_picker.options = [(step_label(i, e), i) for i, e in enumerate(self.events)]
        self.step_picker.value = 0 if self.events else None
        if not self.events:
            self.show_step(0)

    def show_step(self, step: int | None) -> None:
        self.event_view.value = render_step(self.events, step or 0, timeline=False)

    def move(self, delta: int) -> None:
        if self.events:
            self.step_picker.value = clamp_step((self.step_picker.value or 0) + delta, self.events)

    def next_failure(self) -> None:
        """The next failing question after the current one (wrapping), in the run's order; filters that hide
        it are widened to show failures."""
        if self.run is None:
            return
        ids = self.run.question_ids
        current = ids.index(self.question_picker.value) if self.question_picker.value in ids else -1
        order = ids[current + 1:] + ids[:current + 1]
        target = next((i for i in order if matches(self.run.predictions.get(i), "failures", None)), None)
        if target is None:
            return
        if target not in self.filtered_ids():
            self.category_picker.value = ANY_CATEGORY
            self.outcome_picker.value = "failures"
        self.question_picker.value = target


def trace_browser(root: str | Path | None = None, experiment: str | None = None,
                  run: str | Path | None = None) -> TraceBrowser:
    """A :class:`TraceBrowser` over the runs under ``root`` (default: the project's runs folder), opened on
    ``run`` or the latest run (of ``experiment`` when given)."""
    return TraceBrowser(root, experiment, run)


class RunComparison:
    """Two runs side by side (:func:`compare_runs`): the paired test and each flipped question, with both
    queries diffed and both answer sets. Displayed, it is a widget (a picker over the flipped questions, named by
    the run that answers each exactly) carrying the whole comparison as its static fallback."""

    def __init__(self, first: str | Path, second: str | Path, root: str | Path | None = None):
        from sparqlab.eval.paired import paired_comparison

        self.first, self.second = paired_views(find_run(first, root), find_run(second, root))
        self.paired = paired_comparison(self.first.records, self.second.records, self.first.name, self.second.name)

    def flipped(self) -> list[dict[str, Any]]:
        """One row per flipped question: id, question, which run is exact, both queries."""
        by_id = [{str(r["id"]): r for r in view.records} for view in (self.first, self.second)]
        rows = []
        for winner, ids in ((self.first.name, self.paired.a_only), (self.second.name, self.paired.b_only)):
            for qid in ids:
                rows.append({"id": qid, "question": by_id[0][qid].get("question"), "exact in": winner,
                             self.first.name: by_id[0][qid].get("predicted_sparql"),
                             self.second.name: by_id[1][qid].get("predicted_sparql")})
        return rows

    def html(self, max_flips: int | None = None) -> str:
        return comparison_fragment(self.first, self.second, max_flips, self.paired)

    def _repr_html_(self) -> str:
        return self.html(max_flips=20)

    def flip_view(self, question_id: str | None) -> str:
        """One flipped question (both runs' queries diffed, gold, both answer sets), or a note when none flipped."""
        if question_id is None:
            return "<i>No question flipped.</i>"
        left = next(r for r in self.first.records if str(r["id"]) == question_id)
        right = next(r for r in self.second.records if str(r["id"]) == question_id)
        return f"<style>{STYLE}</style>" + flip_fragment(left, right, self.first, self.second)

    @property
    def widget(self) -> Any:
        """The paired test above a picker of the flipped questions and the picked one's view."""
        import ipywidgets as w

        rows = self.flipped()
        picker = w.Dropdown(description="flipped", layout=w.Layout(width="90%"),
                            options=[(f"{r['id']} — exact only in {r['exact in']} — {r['question']}", r["id"])
                                     for r in rows])
        view = w.HTML(self.flip_view(picker.value))
        picker.observe(lambda change: setattr(view, "value", self.flip_view(change["new"])), names="value")
        return w.VBox([w.HTML(f"<pre>{html.escape(self.paired.summary())}</pre>"), picker, view])

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/html"] = self.html(max_flips=20)
        bundle["text/plain"] = self.paired.summary()
        return bundle

    def __repr__(self) -> str:
        return self.paired.summary()


def compare_runs(first: str | Path, second: str | Path, root: str | Path | None = None) -> RunComparison:
    """Compare two runs of one question set in a notebook: the paired test named by the runs and the questions
    that flipped (``.flipped()`` as rows, ``.paired`` the numbers); a run is a folder, experiment/folder or a
    unique folder name."""
    return RunComparison(first, second, root)


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False, default=str)

