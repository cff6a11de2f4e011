"""Executed notebooks that read as run without a kernel: widget outputs frozen into static HTML, and a signature.

A widget output holds only a reference to a model whose state papermill saves in the notebook's metadata; a reader
without a live widget manager — nbconvert, GitHub, JupyterLab on an untrusted notebook — sees the output's
``text/plain`` instead, the repr from the moment it was displayed: a progress bar at "0% 0/5", a trace browser as
``VBox(children=(Dropdown(…``. :func:`add_static_fallbacks` renders each widget output from its *saved* state
(what the widget showed when the notebook finished) into ``text/html`` and ``text/plain``; an output that brought
its own ``text/html`` (the trace browser's run summary and failing questions) keeps it. :func:`finish_executed`
also signs the executed copy for the user who ran it, as JupyterLab does when it saves a notebook it executed, so
its HTML outputs are trusted there. Re-running a cell in the lab brings the live widget back.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
REFERENCE = "IPY_MODEL_"


def widget_states(notebook: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Model id → saved model (``model_name``, ``state``) from the notebook's widget metadata."""
    return dict(((notebook.get("metadata") or {}).get("widgets") or {}).get(WIDGET_STATE, {}).get("state") or {})


def render_model(model_id: str, states: Mapping[str, Mapping[str, Any]], depth: int = 0) -> str:
    """The static HTML of one widget as its saved state shows it (containers render their children)."""
    model = states.get(model_id)
    if model is None or depth > 20:
        return ""
    name = model.get("model_name", "")
    state = model.get("state") or {}
    description = state.get("description") or ""
    label = f"<b>{html.escape(description)}</b> " if description else ""
    if name in ("HBoxModel", "VBoxModel", "BoxModel", "GridBoxModel", "AccordionModel", "TabModel"):
        direction = "row" if name == "HBoxModel" else "column"
        children = [render_model(str(c).removeprefix(REFERENCE), states, depth + 1) for c in state.get("children", [])]
        return (f'<div style="display:flex;flex-direction:{direction};gap:4px;align-items:center">'
                + "".join(f"<div>{child}</div>" for child in children if child) + "</div>")
    if name in ("HTMLModel", "HTMLMathModel"):
        return label + str(state.get("value") or "")
    if name == "LabelModel":
        return label + html.escape(str(state.get("value") or ""))
    if name in ("FloatProgressModel", "IntProgressModel"):
        low, high, value = state.get("min", 0), state.get("max", 100), state.get("value", 0)
        percent = 100 * (value - low) / (high - low) if high != low else 100.0
        return f'{label}<progress value="{value - low}" max="{high - low}" title="{percent:.0f}%"></progress>'
    if "_options_labels" in state:  # Dropdown, Select, ToggleButtons, RadioButtons ...
        labels, index = state.get("_options_labels") or [], state.get("index")
        chosen = labels[index] if isinstance(index, int) and 0 <= index < len(labels) else "–"
        return f"{label}{html.escape(str(chosen))}"
    if name == "ButtonModel":
        return f"<button disabled>{html.escape(description)}</button>"
    if name == "OutputModel":
        return "".join(output_html(o) for o in state.get("outputs") or [])
    if "value" in state:  # sliders, text, checkboxes
        return f"{label}{html.escape(str(state['value']))}"
    return ""


def output_html(output: Mapping[str, Any]) -> str:
    """An output of an Output widget as HTML (its ``text/html``, else its text escaped)."""
    data = output.get("data") or {}
    if "text/html" in data:
        return _joined(data["text/html"])
    text = _joined(data.get("text/plain", output.get("text", "")))
    return f"<pre>{html.escape(text)}</pre>" if text else ""


def plain_text(fragment: str) -> str:
    """The text of an HTML fragment on a few lines, for ``text/plain`` (tags and styles dropped)."""
    fragment = re.sub(r"<(style|script)\b.*?</\1>", "", fragment, flags=re.S | re.I)
    fragment = re.sub(r'<progress value="([^"]*)" max="([^"]*)"[^>]*>', lambda m: _bar(m[1], m[2]), fragment)
    text = html.unescape(re.sub(r"</?(br|div|li|tr|pre|p|h\d|details|summary)\b[^>]*>", "\n", fragment, flags=re.I))
    text = re.sub(r"<[^>]+>", " ", text)
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return "\n".join(line for line in lines if line)


def add_static_fallbacks(notebook: dict[str, Any]) -> int:
    """Replace every widget output whose model state was saved by a static rendering of that state — ``text/html``
    and ``text/plain`` (an output that brought its own ``text/html``, as the trace browser does, keeps it) — and
    drop the then unused widget state; returns how many outputs changed.

    The kernel that drove the widgets is gone once the notebook is executed, so a restored widget could only show
    its last state, and a reader without a widget manager (nbconvert picks the widget view over any other format,
    GitHub) would see nothing or the repr from display time; the static rendering shows the same to everyone.
    """
    states = widget_states(notebook)
    changed = 0
    remaining = False
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            data = output.get("data") or {}
            view = data.get(WIDGET_VIEW)
            if not view:
                continue
            fallback = _joined(data["text/html"]) if "text/html" in data else (
                render_model(view["model_id"], states) if view.get("model_id") in states else "")
            if not fallback:
                remaining = True
                continue
            output["data"] = {"text/html": fallback, "text/plain": plain_text(fallback)}
            changed += 1
    if changed and not remaining:
        notebook.get("metadata", {}).pop("widgets", None)
    return changed


BANNER_TAG = "sparqlab-made-from"
"""The tag of the executed copy's first cell: what its outputs were made from (:mod:`sparqlab.core.labels`)."""


def finish_executed(path: str | Path, made_from: str | None = None) -> int:
    """Static fallbacks for the executed copy at ``path`` (:func:`add_static_fallbacks`), a first markdown cell
    saying what its outputs were ``made_from`` (the stand-in banner or the model; none without a model), then sign
    it for this user; returns the number of widget outputs given a fallback."""
    import nbformat
    from nbformat.sign import NotebookNotary

    path = Path(path)
    notebook = nbformat.read(path, as_version=4)
    if made_from:
        notebook.cells.insert(0, nbformat.v4.new_markdown_cell(f"**{made_from}**", metadata={"tags": [BANNER_TAG]}))
    changed = add_static_fallbacks(notebook)
    NotebookNotary().sign(notebook)
    nbformat.write(notebook, path)
    return changed


def _bar(value: str, maximum: str) -> str:
    try:
        share = float(value) / float(maximum) if float(maximum) else 1.0
    except ValueError:
        return ""
    return f" {100 * share:.0f}% "


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")
