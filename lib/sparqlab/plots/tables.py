"""Per-question tables a reader can trust: a compact default column set, rates in percent, one missing-value
marker, the error category on every wrong answer and ``[standin]`` on every stand-in's row.

:func:`question_table` takes the frame of :func:`sparqlab.runs.load_predictions` (or several concatenated) and
returns a pandas ``Styler`` for display; the full frame stays one call away (the frame itself, or
``columns=None``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from sparqlab.eval.metrics import PRIMARY_METRIC, RATE, metric_list
from sparqlab.plots.report import MISSING, error_label, outcome
from sparqlab.runs.results import model_label

COMPACT_COLUMNS = ("model", "dataset", "id", "question", "outcome", PRIMARY_METRIC, "error")
"""What :func:`question_table` shows unless told otherwise (those of them the frame has)."""


def run_columns() -> list[str]:
    """What :func:`run_table` shows unless told otherwise: the run, its model and selection, how far it got, the
    metrics ``sparqlab runs compare`` shows (the registry's ``compare`` view) and its errors."""
    return ["run", "model", "dataset", "selection", "status", "done", *(m.key for m in metric_list("compare")),
            "errors"]


def with_analysis_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` plus ``outcome`` and ``error`` (:func:`sparqlab.plots.report.error_label`: set on every question
    not answered exactly) per row, and ``model`` labelled ``[standin]`` where a stand-in answered."""
    records = frame.to_dict("records")
    added = frame.assign(outcome=[outcome(_clean(r)) for r in records],
                         error=[error_label(_clean(r)) for r in records])
    if "model" in frame.columns and "model_is_standin" in frame.columns:
        added["model"] = [model_label(m, s) for m, s in zip(frame["model"], frame["model_is_standin"], strict=True)]
    return added


def question_table(frame: pd.DataFrame, columns: Sequence[str] | None = COMPACT_COLUMNS, width: int = 80) -> Any:
    """A styled per-question table: ``columns`` (default :data:`COMPACT_COLUMNS`; ``None``: all), rates in percent,
    ``–`` for every missing value, text cells wrapped rather than cut at ``width`` characters."""
    return _styled(with_analysis_columns(frame), columns, width)


def run_table(runs: pd.DataFrame, columns: Sequence[str] | None = None, width: int = 60) -> Any:
    """:func:`sparqlab.runs.load_runs` styled like :func:`question_table`: ``columns`` (default
    :func:`run_columns`; all: ``runs.columns``), rates in percent, ``–`` for missing values; the model column
    already marks stand-ins."""
    return _styled(runs, run_columns() if columns is None else columns, width)


def _styled(table: pd.DataFrame, columns: Sequence[str] | None, width: int) -> Any:
    if columns is not None:
        table = table[[c for c in columns if c in table.columns]]
    rates = {metric.key for metric in metric_list() if metric.unit == RATE}  # em per question: 100.0 or 0.0
    formats = {c: _percent for c in table.columns if c in rates}
    return (table.style.format(formats, na_rep=MISSING).format(_plain, na_rep=MISSING,
                                                               subset=[c for c in table.columns if c not in formats])
            .set_properties(**{"white-space": "pre-wrap", "text-align": "left", "max-width": f"{width}ch"})
            .hide(axis="index"))


def _percent(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return MISSING
    return f"{100 * float(value):.1f}"


def _plain(value: Any) -> str:
    return MISSING if value is None or (isinstance(value, float) and value != value) else str(value)


def _clean(record: dict[str, Any]) -> dict[str, Any]:
    """A frame row with NaN read back as missing (pandas fills absent values with NaN)."""
    return {k: (None if isinstance(v, float) and v != v else v) for k, v in record.items()}


def labelled(table: pd.DataFrame, label: str, decimals: int = 2, percent: Sequence[str] = ()) -> Any:
    """An aggregate table captioned by ``label`` — the model, ``[standin]`` marked
    (:func:`sparqlab.runs.model_label`) — with ``–`` for missing values, ``decimals`` digits, and the ``percent``
    columns (shares in [0, 1]) in percent with one decimal."""
    shown = [c for c in percent if c in table.columns]
    return (table.style.set_caption(label).format(precision=decimals, na_rep=MISSING)
            .format(_percent, subset=shown, na_rep=MISSING))
