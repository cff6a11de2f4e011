"""Figures for papers and notebooks: one seaborn style, one way to save, a few generic charts.

Importing the module applies :func:`use_style` (colour-blind-safe palette, paper font sizes, fonts embedded as
TrueType in PDFs); create figures after the import, or with :func:`subplots`, so they pick the style up.
Helpers take per-question records (a DataFrame or a list of dicts, such as ``predictions.jsonl`` lines with a
``method`` column added) and return the matplotlib ``Axes``, so a notebook can adjust it (e.g. a title marking
stand-ins with :func:`sparqlab.runs.model_label`) before :func:`save_figure` writes PNG and PDF to
:func:`sparqlab.core.paths.figures_dir`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from sparqlab.core.paths import figures_dir

PALETTE = "colorblind"
"""seaborn's colour-blind-safe palette (Okabe–Ito-like), used for every categorical colour."""

METRIC_LABELS = {"f1": "F1 (%)", "em": "EM (%)", "empty": "Empty results (%)", "empty_rate": "Empty results (%)",
                 "precision": "Precision (%)", "recall": "Recall (%)"}
"""Axis labels of the rate metrics; these are drawn in percent."""

SINGLE_COLUMN = (3.3, 2.4)
"""Figure size (inches) that fits one column of a two-column paper."""

_RC = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "legend.title_fontsize": 8,
    "figure.figsize": SINGLE_COLUMN,
    "figure.dpi": 120,
    "savefig.dpi": 300,
    "savefig.bbox": "tight",
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def use_style() -> None:
    """Apply the project style globally (idempotent): white grid, paper context, colour-blind palette."""
    sns.set_theme(context="paper", style="whitegrid", palette=PALETTE, rc=_RC)


def subplots(*args: Any, **kwargs: Any) -> tuple[Figure, Any]:
    """``plt.subplots`` with the project style applied first."""
    use_style()
    return plt.subplots(*args, **kwargs)


def save_figure(fig: Figure, name: str, formats: Iterable[str] = ("png", "pdf")) -> list[Path]:
    """Write ``fig`` as ``<figures_dir>/<name>.png`` and ``.pdf``; returns the paths written.

    ``name`` is a file stem (letters, digits, ``-``, ``_``, ``.``), so figures of different notebooks cannot
    overwrite each other by accident through paths.
    """
    if not re.fullmatch(r"[\w][\w.-]*", name) or name.endswith((".png", ".pdf")):
        raise ValueError(f"figure name must be a plain file stem without extension, got {name!r}")
    folder = figures_dir()
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        path = folder / f"{name}.{fmt}"
        fig.savefig(path, format=fmt)
        paths.append(path)
    return paths


def metric_bars(data: Any, metric: str = "f1", x: str = "method", hue: str | None = None,
                ax: Axes | None = None, ci: float = 95, seed: int = 0) -> Axes:
    """Mean of a per-question metric per ``x`` (and ``hue``) with bootstrap confidence intervals.

    The bars are macro averages over questions, as in the paper tables; the error bars are ``ci``% percentile
    bootstrap intervals over questions (seeded, so re-running a notebook draws the same figure).
    """
    frame = _frame(data, [metric, x] + ([hue] if hue else []))
    frame[metric] = frame[metric].astype(float) * (100 if metric in METRIC_LABELS else 1)
    ax = _axes(ax)
    sns.barplot(frame, x=x, y=metric, hue=hue, errorbar=("ci", ci), seed=seed, ax=ax,
                palette=PALETTE if hue else None, color=None if hue else sns.color_palette(PALETTE)[0],
                capsize=0.1, err_kws={"linewidth": 1})
    ax.set_ylabel(METRIC_LABELS.get(metric, metric))
    ax.set_xlabel(x.replace("_", " "))
    _legend_outside(ax)
    if metric in METRIC_LABELS:
        ax.set_ylim(0, 100)
    return ax


def score_distribution(data: Any, metric: str = "f1", hue: str | None = "method", bins: int = 10,
                       ax: Axes | None = None) -> Axes:
    """Share of questions per bin of a per-question score in [0, 1] (one bar group per ``hue`` value).

    Per-question F1 is mostly 0 or 1; this shows how much of a method's average comes from partial answers.
    """
    frame = _frame(data, [metric] + ([hue] if hue else []))
    frame[metric] = frame[metric].astype(float)
    ax = _axes(ax)
    sns.histplot(frame, x=metric, hue=hue, bins=bins, binrange=(0, 1), stat="proportion", common_norm=False,
                 multiple="dodge" if hue else "layer", shrink=0.85, palette=PALETTE if hue else None, ax=ax)
    ax.set_xlabel(f"per-question {metric.upper() if len(metric) <= 2 else metric}")
    ax.set_ylabel("share of questions")
    ax.set_xlim(0, 1)
    _legend_outside(ax)
    return ax


def _axes(ax: Axes | None) -> Axes:
    return ax if ax is not None else subplots()[1]


def _legend_outside(ax: Axes) -> None:
    """Legends go right of the axes, so they never hide bars."""
    if ax.get_legend() is not None:
        sns.move_legend(ax, "upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)


def _frame(data: Any, columns: list[str]) -> pd.DataFrame:
    """A copy of ``data`` as a DataFrame, with a clear error when a needed column is missing."""
    if isinstance(data, pd.DataFrame):
        frame = data.copy()
    elif isinstance(data, Iterable) and not isinstance(data, str | Mapping):
        frame = pd.DataFrame(list(data))
    else:
        raise TypeError(f"expected a DataFrame or a list of records, got {type(data).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"records lack column(s) {missing}; available: {sorted(map(str, frame.columns))}")
    if frame.empty:
        raise ValueError("no records to plot")
    return frame


use_style()
