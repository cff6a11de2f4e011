"""A trace browser for notebooks: pick a run and a question, step through its trace, see the final query and answers.

The loading, stepping and rendering are plain functions (:func:`sparqlab.runs.results.run_dirs`, :func:`load_run`,
:func:`render_event`, :func:`render_step`, :func:`render_prediction`, ...) that tests and other front ends call
directly; :class:`TraceBrowser` only wires them to ipywidgets. Usage in a notebook::

    from sparqlab.plots.widgets import trace_browser
    trace_browser()            # runs under sparqlab.core.paths.runs_dir()
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparqlab.core.jsonl import read_jsonl
from sparqlab.core.paths import runs_dir
from sparqlab.platform.trace import TraceEvent
from sparqlab.runs.results import run_dirs
from sparqlab.runs.store import PREDICTIONS, TRACES

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


def question_label(run: RunTraces, question_id: str, width: int = 70) -> str:
    """``id — question text`` shortened to ``width`` characters, with a ✓ for an exact match."""
    record = run.predictions.get(question_id, {})
    mark = " ✓" if record.get("em") else ""
    text = f"{question_id}{mark} — {record.get('question', '(no prediction)')}"
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
                 start_time: float | None = None) -> str:
    """An event as an HTML fragment: coloured header, short fields as a line, long fields as ``<pre>`` blocks."""
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
        parts.append(f'<div style="font-size:90%;margin-top:4px"><b>{html.escape(key)}</b></div>'
                     f'<pre style="white-space:pre-wrap;margin:2px 0">{html.escape(value)}</pre>')
    parts.append("</div>")
    return "\n".join(parts)


def render_timeline(events: list[TraceEvent | dict[str, Any]], current: int) -> str:
    """One small chip per event, the current one filled, so the position in a long trace stays visible."""
    chips = []
    for index, event in enumerate(events):
        kind = as_event(event).kind
        colour = event_colour(kind)
        fill = f"background:{colour};color:white" if index == current else f"color:{colour}"
        chips.append(f'<span title="{index + 1}: {html.escape(kind)}" style="border:1px solid {colour};'
                     f'{fill};padding:0 3px;margin:1px;font-size:75%">{html.escape(kind[:1].upper())}</span>')
    return '<div style="line-height:1.8">' + "".join(chips) + "</div>"


def render_step(events: list[TraceEvent | dict[str, Any]], step: int) -> str:
    """The timeline plus the event at ``step`` (clamped), or a note when the trace is empty."""
    if not events:
        return "<i>No trace recorded for this question.</i>"
    events = [as_event(e) for e in events]
    step = clamp_step(step, events)
    times = [e.t for e in events if isinstance(e.t, int | float)]
    return render_timeline(events, step) + render_event(events[step], step, len(events),
                                                        start_time=min(times) if times else None)


def render_prediction(record: dict[str, Any] | None, max_answers: int = 20) -> str:
    """The question, final query, predicted and gold answers and scores of one prediction record, as HTML."""
    if not record:
        return "<i>No prediction recorded for this question.</i>"

    def answers(values: Any) -> str:
        if values is None:
            return "<i>none (no query, or it failed)</i>"
        values = list(values)
        shown = ", ".join(html.escape(str(v)) for v in values[:max_answers])
        more = f" … ({len(values)} in all)" if len(values) > max_answers else ""
        return (shown or "<i>empty</i>") + more

    scores = " · ".join(f"<b>{k}</b>: {_score(record[k])}" for k in ("f1", "em", "empty") if k in record)
    error = record.get("error_category")
    return "\n".join([
        f"<div><b>{html.escape(str(record.get('id', '')))}</b>: {html.escape(str(record.get('question', '')))}</div>",
        f"<div>{scores}{' · <b>error</b>: ' + html.escape(str(error)) if error else ''}</div>",
        "<div><b>final query</b></div>",
        f'<pre style="white-space:pre-wrap">{html.escape(record.get("predicted_sparql") or "(none)")}</pre>',
        f"<div><b>predicted answers</b>: {answers(record.get('predicted_answers'))}</div>",
        f"<div><b>gold answers</b>: {answers(record.get('gold_answers'))}</div>",
    ])


def run_choice_label(run_dir: Path, root: Path) -> str:
    """``experiment / run name · date · selection · F1``: runs sort by experiment, then by their readable name."""
    from sparqlab.runs.results import run_summary

    name = str(run_dir.relative_to(root)).replace("/", " / ", 1)
    try:
        summary = run_summary(run_dir)
    except (KeyError, ValueError, OSError):  # a folder without a readable manifest yet: its name only
        return name
    f1 = summary.get("f1")
    parts = [name, summary.get("date") or "",
             summary.get("selection") or "", f"F1 {100 * f1:.1f}" if f1 is not None else "unscored"]
    return " · ".join(part for part in parts if part)


class TraceBrowser:
    """ipywidgets wiring over the functions above; display ``.widget`` (or the object itself) in a notebook."""

    def __init__(self, root: str | Path | None = None):
        import ipywidgets as w

        self.root = Path(root) if root is not None else runs_dir()
        self.run: RunTraces | None = None
        self.events: list[TraceEvent] = []
        runs = run_dirs(self.root)
        self.run_picker = w.Dropdown(description="run", options=[(run_choice_label(p, self.root), p) for p in runs],
                                     value=None, layout=w.Layout(width="80%"))
        self.question_picker = w.Dropdown(description="question", options=[], layout=w.Layout(width="90%"))
        self.step_slider = w.IntSlider(description="step", min=0, max=0, continuous_update=False)
        self.previous_button = w.Button(description="◀ previous")
        self.next_button = w.Button(description="next ▶")
        self.event_view = w.HTML()
        self.prediction_view = w.HTML(
            value="<i>Pick a run.</i>" if runs else f"<i>No runs under {html.escape(str(self.root))}.</i>")
        self.run_picker.observe(lambda change: self.select_run(change["new"]), names="value")
        self.question_picker.observe(lambda change: self.select_question(change["new"]), names="value")
        self.step_slider.observe(lambda change: self.show_step(change["new"]), names="value")
        self.previous_button.on_click(lambda _: self.move(-1))
        self.next_button.on_click(lambda _: self.move(1))
        self.widget = w.VBox([
            self.run_picker, self.question_picker,
            w.HBox([self.previous_button, self.step_slider, self.next_button]),
            self.event_view, w.HTML("<hr>"), self.prediction_view,
        ])

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    def select_run(self, path: Path | None) -> None:
        self.run = load_run(path) if path is not None else None
        ids = self.run.question_ids if self.run else []
        self.question_picker.options = [(question_label(self.run, i), i) for i in ids] if self.run else []
        self.question_picker.value = ids[0] if ids else None
        if not ids:
            self.select_question(None)

    def select_question(self, question_id: str | None) -> None:
        self.events = self.run.events(question_id) if self.run and question_id is not None else []
        record = self.run.predictions.get(question_id) if self.run and question_id is not None else None
        self.prediction_view.value = render_prediction(record)
        self.step_slider.max = max(len(self.events) - 1, 0)
        if self.step_slider.value == 0:
            self.show_step(0)
        else:
            self.step_slider.value = 0

    def show_step(self, step: int) -> None:
        self.event_view.value = render_step(self.events, step)

    def move(self, delta: int) -> None:
        self.step_slider.value = clamp_step(self.step_slider.value + delta, self.events)


def trace_browser(root: str | Path | None = None) -> TraceBrowser:
    """A :class:`TraceBrowser` over the runs under ``root`` (default: the project's runs folder)."""
    return TraceBrowser(root)


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _score(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return f"{100 * value:.1f}%" if isinstance(value, float) else html.escape(str(value))  # papers' unit
