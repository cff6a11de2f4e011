"""Figures for papers and notebooks: one seaborn style, one way to save, a few generic charts.

Importing the module applies :func:`use_style` (colour-blind-safe palette, paper font sizes, fonts embedded as
TrueType in PDFs); create figures after the import, or with :func:`subplots`, so they pick the style up.
Helpers take per-question records (a DataFrame or a list of dicts, such as ``predictions.jsonl`` lines with a
``method`` column added) and return the matplotlib ``Axes``, so a notebook can adjust it (e.g. a title marking
stand-ins with :func:`sparqlab.runs.model_label`) before :func:`save_figure` writes PNG and PDF to
:func:`sparqlab.core.paths.figures_dir`.
"""

from __future__ import annotations

import io
import json
import re
import textwrap
import warnings
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties

from sparqlab.core.environment import notebook_overrides
from sparqlab.core.files import atomic_write
from sparqlab.core.hashing import stable_hash
from sparqlab.core.labels import merged, noted_models, provenance_line
from sparqlab.core.paths import figures_dir
from sparqlab.eval.metrics import ANSWER_METRICS, PRIMARY_METRIC, RATE, find_metric, judged_frame
from sparqlab.plots.check import FigureLayoutError, check_figure, figure_texts, strict
from sparqlab.runs.results import find_run
from sparqlab.runs.store import MANIFEST, RunUnreadable, read_document

PALETTE = "colorblind"
"""seaborn's colour-blind-safe palette (Okabe–Ito-like), used for every categorical colour."""



def metric_label(metric: str) -> str:
    """A figure's axis label of a column: the registered metric's (:data:`sparqlab.eval.metrics.METRICS`; a
    per-question field such as ``empty`` names its metric), with `` (%)`` for a rate; else the column's name."""
    found = find_metric(metric)
    return found.axis_label if found is not None else metric


def in_percent(metric: str) -> bool:
    """Whether a column is a registered rate, drawn in percent on a 0–100 axis."""
    found = find_metric(metric)
    return found is not None and found.unit == RATE


def _scale(metric: str) -> int:
    return 100 if in_percent(metric) else 1


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


def figure_stem(name: str, params: Mapping[str, Any] | None = None) -> str:
    """``name`` followed by ``--key-value`` for each parameter, e.g. ``f1_by_dataset--limit-10--sample-40``.

    Put the parameters a sweep varies here, so the figures of a smoke test (``-p limit 10``) and of the full run
    get different files. ``None`` values are left out; a value that is shortened or changed to file-name
    characters gets a short digest of itself (``org/model-a`` and ``org_model-a`` stay apart). Notebook
    parameters overridden by ``sparqlab reproduce`` that ``params`` does not name add ``--p-<digest>``, so the
    name of a figure drawn with the defaults is never reused by a run with other parameters.
    """
    params = {key: value for key, value in (params or {}).items() if value is not None}
    parts = [name] + [f"{key}-{_slug(value)}" for key, value in params.items()]
    overrides = {key: value for key, value in notebook_overrides().items() if key not in params}
    if overrides:
        parts.append(f"p-{stable_hash(overrides, 8)}")
    return "--".join(parts)


def save_figure(fig: Figure, name: str, formats: Iterable[str] = ("png", "pdf"), *, experiment: str | None = None,
                params: Mapping[str, Any] | None = None, runs: Iterable[Any] = ()) -> list[Path]:
    """Write ``fig`` as PNG and PDF plus a sidecar ``.json``; returns the figure paths written.

    The files go to ``<figures_dir>/<experiment>/`` (or ``<figures_dir>/`` without an experiment) under
    :func:`figure_stem` ``(name, params)``. The sidecar names the runs the figure was drawn from (``runs``: run
    results, run folders or run ids) with the experiment and parameters, so a figure can be traced back to its
    data. ``name`` is a file stem (letters, digits, ``-``, ``_``, ``.``).

    Every figure says what it was made from, under its panels and in the files' metadata (PNG ``Description``, PDF
    ``Subject``) and the sidecar's ``made_from``: the models of ``runs`` (or, without runs, those the notebook's
    kernel made: :func:`sparqlab.core.labels.noted_models`), as :func:`sparqlab.core.labels.provenance_line`
    words it — the stand-in banner, or the model's name.

    Every figure is checked by :func:`sparqlab.plots.check.check_figure` (overlapping text, text cut at the canvas
    edge, empty panels) and the sidecar's ``layout_problems`` lists what it found (its ``texts``: every text the
    figure shows, :func:`~sparqlab.plots.check.figure_texts`); a problem warns, or raises
    :class:`FigureLayoutError` after the files are written under ``SPARQLAB_FIGURE_CHECK=strict`` (the tests).
    """
    if not re.fullmatch(r"[\w][\w.-]*", name) or name.endswith((".png", ".pdf")):
        raise ValueError(f"figure name must be a plain file stem without extension, got {name!r}")
    if experiment is not None and not re.fullmatch(r"[\w][\w.-]*", experiment):
        raise ValueError(f"experiment must be a plain folder name, got {experiment!r}")
    folder = figures_dir() / experiment if experiment else figures_dir()
    folder.mkdir(parents=True, exist_ok=True)
    stem = figure_stem(name, params)
    runs = list(runs)
    made_from = provenance_line(_run_models(runs) if runs else noted_models())
    if made_from:
        _footnote(fig, made_from)
    problems = [str(problem) for problem in check_figure(fig)]
    paths = []
    for fmt in formats:
        rendered = io.BytesIO()
        fig.savefig(rendered, format=fmt, metadata=_file_metadata(fmt, made_from))
        paths.append(atomic_write(folder / f"{stem}.{fmt}", rendered.getvalue()))
    sidecar = {"figure": name, "experiment": experiment, "params": dict(params or {}), "made_from": made_from,
               "runs": [_run_reference(r) for r in runs], "files": [p.name for p in paths],
               "layout_problems": problems, "texts": figure_texts(fig),
               "created": datetime.now(UTC).isoformat(timespec="seconds")}
    atomic_write(folder / f"{stem}.json", json.dumps(sidecar, indent=2, default=str) + "\n")
    if problems:
        message = f"figure {folder / stem} has layout problems: " + "; ".join(problems)
        if strict():
            raise FigureLayoutError(message)
        warnings.warn(message, stacklevel=2)
    return paths


def _run_models(runs: list[Any]) -> dict[str, bool]:
    """The models of the runs a figure was drawn from (run results, folders or ids), stand-ins marked; a reference
    to no run folder here (e.g. a run on another machine) adds none."""
    headers = []
    for run in runs:
        metrics = getattr(run, "metrics", None)
        if metrics is None:
            try:
                metrics = read_document(find_run(_run_reference(run)) / MANIFEST)
            except (FileNotFoundError, RunUnreadable):
                continue
        headers.append(metrics)
    return merged((header.get("model"), header.get("model_is_standin")) for header in headers)


def _footnote(fig: Figure, line: str) -> None:
    """``line`` in small italics under everything the figure shows, from its left edge."""
    fig.draw_without_rendering()
    drawn = fig.get_tightbbox(fig.canvas.get_renderer())  # inches
    fig.text(drawn.x0 / fig.get_figwidth(), drawn.y0 / fig.get_figheight(), line, ha="left", va="top",
             fontsize="x-small", style="italic")


def _file_metadata(fmt: str, made_from: str | None) -> dict[str, str] | None:
    """What the saved file says it was made from, in the metadata field its format has for a description."""
    key = {"png": "Description", "pdf": "Subject", "svg": "Description"}.get(fmt)
    return {key: made_from} if key and made_from else None


def _run_reference(run: Any) -> str:
    """A run result (anything with ``run_dir``), a run folder or a run id, as a string."""
    return str(getattr(run, "run_dir", run))


def _slug(value: Any) -> str:
    """``value`` in file-name characters, at most 40 (plus a digest of the value when that changed it)."""
    text = str(value)
    slug = re.sub(r"[^\w.-]+", "_", text).strip("_-")[:40].rstrip("_-") or "none"
    return slug if slug == text else f"{slug}-{stable_hash(text, 6)}"


HORIZONTAL_AFTER = 6
""":func:`metric_bars` draws horizontal bars when there are more groups than this (their labels stay readable)."""



def metric_bars(data: Any, metric: str = PRIMARY_METRIC, x: str = "method", hue: str | None = None,
                ax: Axes | None = None, ci: float = 95, seed: int = 0, horizontal: bool | None = None) -> Axes:
    """Mean of a per-question metric per ``x`` (and ``hue``) with bootstrap confidence intervals.

    The bars are macro averages over questions, as in the paper tables; the error bars are ``ci``% percentile
    bootstrap intervals over questions (seeded, so re-running a notebook draws the same figure), and the group
    axis label says so. Each group label carries its number of questions (``n=``); a bar of height zero is drawn
    as a thick line at zero, so "scored 0" differs visibly from "not run". With more than
    :data:`HORIZONTAL_AFTER` groups, or group labels too long to stand side by side under the bars even wrapped
    (fewer than :data:`MIN_LABEL_CHARS` characters of width per group), or ``horizontal=True``, the bars are
    horizontal; vertical bars get their group labels wrapped to the width of a group.
    """
    frame = _frame(data, [metric, x] + ([hue] if hue else []))
    frame[metric] = frame[metric].astype(float) * _scale(metric)
    frame[x] = frame[x].astype(str)
    order = list(dict.fromkeys(frame[x]))
    if "id" in frame.columns:  # the bootstrap resamples rows: fix their order, which concurrent runs do not
        frame = frame.sort_values([x, *([hue] if hue else []), "id"], kind="stable", key=lambda s: s.astype(str))
    counts = _group_counts(frame, x, hue)
    labels = [f"{group} (n={counts[group]})" for group in order]
    axes_width = _axes_inches(ax)[0] if ax is not None else SINGLE_COLUMN[0] * _SUBPLOT_WIDTH
    per_group = _chars_across(axes_width, "xtick.labelsize") // len(order)
    if horizontal is None:
        horizontal = len(order) > HORIZONTAL_AFTER or (per_group < MIN_LABEL_CHARS
                                                        and max(map(len, labels)) > per_group)
    if ax is None:
        size = (SINGLE_COLUMN[0], max(SINGLE_COLUMN[1], 0.25 * len(order) + 0.8)) if horizontal else None
        ax = subplots(figsize=size)[1]
    sns.barplot(frame, x=metric if horizontal else x, y=x if horizontal else metric, hue=hue, order=order,
                orient="h" if horizontal else "v", errorbar=("ci", ci), seed=seed, ax=ax,
                palette=PALETTE if hue else None, color=None if hue else sns.color_palette(PALETTE)[0],
                capsize=0.1, err_kws={"linewidth": 1})
    value_label = metric_label(metric)
    group_label = f"{x.replace('_', ' ')}\n[error bars: {ci:g}% bootstrap CI over questions]"
    if horizontal:
        ax.set_yticks(range(len(order)), labels)
        ax.set_xlabel(value_label)
        ax.set_ylabel(_fit_label(ax, group_label, vertical=True))
    else:
        ax.set_xticks(range(len(order)), [_wrap(label, per_group) for label in labels])
        ax.set_ylabel(value_label)
        ax.set_xlabel(_fit_label(ax, group_label))
    _mark_zero_bars(ax, horizontal)
    _legend_outside(ax)
    if in_percent(metric):
        (ax.set_xlim if horizontal else ax.set_ylim)(0, 100)
    return ax


def repeat_bars(groups: Mapping[str, Mapping[str, Any]], metric: str = PRIMARY_METRIC,
                ax: Axes | None = None) -> Axes:
    """The mean over repeats of ``metric`` per run group (``{label: the group's metrics.json}``,
    :func:`sparqlab.runs.groups.group_metrics`) with error bars from the two-level bootstrap interval over questions
    and repeats (:mod:`sparqlab.eval.repeats`), which the group axis label names; each label carries the questions
    and repeats (``n=40×5``) and ``[standin]`` for a stand-in's group, whose spread is a seeded draw."""
    labels, means, lows, highs = [], [], [], []
    for label, group in groups.items():
        score = group["scores"][metric]
        standin = " [standin]" if group.get("model_is_standin") and "[standin]" not in label else ""
        labels.append(f"{label}{standin} (n={group['n_paired']}×{group['n_repeats']})")
        means.append(score["mean"] * _scale(metric))
        low, high = score["interval"]
        lows.append(score["mean"] * _scale(metric) - low * _scale(metric))
        highs.append(high * _scale(metric) - score["mean"] * _scale(metric))
    ax = _axes(ax)
    per_group = _chars_across(_axes_inches(ax)[0], "xtick.labelsize") // max(1, len(labels))
    ax.bar(range(len(labels)), means, color=sns.color_palette(PALETTE)[0], yerr=[lows, highs], capsize=4,
           error_kw={"linewidth": 1})
    ax.set_xticks(range(len(labels)), [_wrap(label, per_group) for label in labels])
    ax.set_ylabel(metric_label(metric))
    ci = next(iter(groups.values()))["ci"]
    ax.set_xlabel(_fit_label(ax, f"run group\n[error bars: {ci:g}% two-level bootstrap CI over questions and repeats]"))
    _mark_zero_bars(ax, horizontal=False)
    if in_percent(metric):
        ax.set_ylim(0, 100)
    return ax


def metric_by_field(data: Any, field: str, metric: str = PRIMARY_METRIC, min_n: int = 1, ci: float = 95, seed: int = 0,
                    ax: Axes | None = None) -> Axes:
    """Mean metric per value of ``field`` as a sorted dot plot with bootstrap intervals, readable with 50+ groups.

    One row per group (question type, relation, answer type ...), best first, labelled ``value (n=...)``; the
    figure grows with the number of groups. Groups with fewer than ``min_n`` questions are left out (the x label
    says how many). Intervals are ``ci``% percentile bootstrap intervals over the group's questions (seeded).
    """
    frame = _frame(data, [metric, field])
    scale = _scale(metric)
    stats = []
    rng = np.random.default_rng(seed)
    for group, values in frame.groupby(frame[field].astype(str), sort=False)[metric]:
        scores = values.astype(float).to_numpy() * scale
        if len(scores) < min_n:
            continue
        means = rng.choice(scores, size=(1000, len(scores))).mean(axis=1)
        low, high = np.percentile(means, [(100 - ci) / 2, 100 - (100 - ci) / 2])
        stats.append((group, scores.mean(), low, high, len(scores)))
    if not stats:
        raise ValueError(f"no group of {field!r} has at least {min_n} questions")
    stats.sort(key=lambda s: (-s[1], s[0]))
    stats.reverse()  # rows are drawn bottom-up: best (then alphabetically first) at the top
    dropped = frame[field].astype(str).nunique() - len(stats)
    if ax is None:
        ax = subplots(figsize=(SINGLE_COLUMN[0] + 1, max(SINGLE_COLUMN[1], 0.16 * len(stats) + 0.9)))[1]
    rows = np.arange(len(stats))
    means = np.array([s[1] for s in stats])
    errors = np.array([[s[1] - s[2] for s in stats], [s[3] - s[1] for s in stats]])
    ax.errorbar(means, rows, xerr=errors, fmt="o", markersize=3, color=sns.color_palette(PALETTE)[0],
                ecolor="0.6", elinewidth=0.8, capsize=0)
    ax.set_yticks(rows, [f"{s[0]} (n={s[4]})" for s in stats], fontsize=6 if len(stats) > 30 else None)
    ax.set_ylim(-0.7, len(stats) - 0.3)
    ax.set_ylabel(field.replace("_", " "))
    omitted = f"; {dropped} group(s) with n<{min_n} omitted" if dropped else ""
    ax.set_xlabel(_fit_label(ax, f"{metric_label(metric)}  [{ci:g}% bootstrap CI{omitted}]"))
    if scale == 100:
        ax.set_xlim(-2, 102)
    return ax


def paired_flips(comparison: Any, ax: Axes | None = None) -> Axes:
    """The outcome of a :func:`sparqlab.eval.paired.paired_comparison` as four horizontal bars.

    Questions exact in both runs, only in the one run, only in the other (named by the runs), in neither (counts written at the bars); the title holds
    McNemar's p and the paired-bootstrap interval of the F1 difference, so the figure states its test.
    """
    ax = _axes(ax)
    labels = ["exact in both", f"only in {comparison.a}", f"only in {comparison.b}", "in neither"]
    counts = [comparison.both, len(comparison.a_only), len(comparison.b_only), comparison.neither]
    colours = sns.color_palette(PALETTE)
    ax.barh(range(4), counts, color=[colours[2], colours[0], colours[1], "0.7"])
    for row, count in enumerate(counts):
        ax.annotate(str(count), (count, row), xytext=(3, 0), textcoords="offset points", va="center", fontsize=7)
    ax.set_yticks(range(4), labels)
    ax.invert_yaxis()
    ax.set_xlabel(f"questions (n={comparison.n} paired)")
    low, high = comparison.f1_diff_ci
    ax.set_title(f"McNemar p={comparison.mcnemar_p:.3g}; ΔF1 {100 * comparison.f1_diff:+.1f} pts "
                 f"[{100 * low:+.1f}, {100 * high:+.1f}]", fontsize=8)
    return ax


def _group_counts(frame: pd.DataFrame, x: str, hue: str | None) -> dict[str, str]:
    """Questions per ``x`` group; ``a–b`` when the ``hue`` levels of a group have different counts."""
    counts = {}
    for group, part in frame.groupby(x, sort=False):
        sizes = part.groupby(hue).size() if hue else pd.Series([len(part)])
        low, high = int(sizes.min()), int(sizes.max())
        counts[group] = str(low) if low == high else f"{low}–{high}"
    return counts


def _mark_zero_bars(ax: Axes, horizontal: bool) -> None:
    """Draw each zero-height bar as a thick line at zero in its colour, so it does not look like a missing bar."""
    for patch in ax.patches:
        length = patch.get_width() if horizontal else patch.get_height()
        if length != 0 or np.isnan(length):
            continue
        if horizontal:
            y0, y1 = patch.get_y(), patch.get_y() + patch.get_height()
            ax.plot([0, 0], [y0, y1], color=patch.get_facecolor(), linewidth=3, solid_capstyle="butt", zorder=3)
        else:
            x0, x1 = patch.get_x(), patch.get_x() + patch.get_width()
            ax.plot([x0, x1], [0, 0], color=patch.get_facecolor(), linewidth=3, solid_capstyle="butt", zorder=3)


def metric_lines(data: Any, x: str, metric: str = PRIMARY_METRIC, hue: str | None = None, units: str | None = None,
                 ax: Axes | None = None) -> Axes:
    """Mean of a per-question metric against a numeric ``x`` (a sweep), one line per ``hue``; with ``units``
    (e.g. seeds) the band is the standard deviation of the per-unit means, i.e. the spread across seeds."""
    frame = _frame(data, [x, metric] + [c for c in (hue, units) if c])
    means = frame.groupby([x] + [c for c in (hue, units) if c])[metric].mean().reset_index()
    means[metric] = means[metric].astype(float) * _scale(metric)
    ax = _axes(ax)
    sns.lineplot(means, x=x, y=metric, hue=hue, errorbar="sd" if units else None, marker="o", ax=ax,
                 palette=PALETTE if hue else None)
    ax.set_ylabel(metric_label(metric))
    ax.set_xlabel(x.replace("_", " "))
    if in_percent(metric):
        ax.set_ylim(0, 100)
    _legend_outside(ax)
    return ax


LINE_STYLES = (("o", "-", 9), ("s", "--", 7.5), ("^", "-.", 6), ("D", ":", 5), ("v", (0, (5, 1)), 4),
               ("P", (0, (1, 1)), 3))
"""Marker, dash and marker size per line of :func:`sweep_lines`: lines that coincide stay distinguishable (the
later, smaller markers sit inside the earlier ones, the dashes interleave)."""


def sweep_lines(data: Any, x: str, y: str, hue: str, ax: Axes | None = None) -> Axes:
    """One line per ``hue`` of ``y`` against ``x`` (a sweep), each with its own marker, dash and marker size so
    coinciding lines stay visible; a NaN ``y`` (an undefined value) is a gap, not a 0, and the axes say so."""
    frame = _frame(data, [x, y, hue])
    ax = _axes(ax)
    colours = sns.color_palette(PALETTE, frame[hue].nunique())
    for index, (name, group) in enumerate(frame.groupby(hue, sort=False)):
        marker, dash, size = LINE_STYLES[index % len(LINE_STYLES)]
        group = group.sort_values(x)
        ax.plot(group[x], group[y].astype(float), marker=marker, linestyle=dash, markersize=size,
                markerfacecolor="none" if index % 2 == 0 else colours[index], color=colours[index], label=name)
    undefined = frame[frame[y].isna()]
    if not undefined.empty:
        names = ", ".join(sorted(undefined[hue].astype(str).unique()))
        ax.text(0.0, -0.32, f"undefined (0/0), not drawn: {names} at some τ", transform=ax.transAxes,
                fontsize="x-small", va="top")
    ax.set_xlabel(x.replace("_", " "))
    ax.set_ylabel(y)
    ax.legend(title=hue)
    _legend_outside(ax)
    return ax


def category_shares(counts: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Shares of categories per run as horizontal stacked bars (100 % each), counts in the legend order.

    ``counts`` has one row per category and one column of counts per run (e.g. the ``n`` columns of
    :func:`sparqlab.eval.error_table`); each bar is labelled with its run's total.
    """
    if counts.empty:
        raise ValueError("no categories to plot")
    totals = counts.sum(axis=0)
    shares = 100 * counts.div(totals.where(totals > 0, 1), axis=1)
    if ax is None:
        ax = subplots(figsize=(SINGLE_COLUMN[0] + 1.5, max(SINGLE_COLUMN[1], 0.35 * len(counts.columns) + 1)))[1]
    left = np.zeros(len(counts.columns))
    colours = sns.color_palette(PALETTE, len(counts.index))
    for colour, (category, row) in zip(colours, shares.iterrows(), strict=True):
        ax.barh(range(len(row)), row.to_numpy(), left=left, color=colour, label=str(category))
        left += row.to_numpy()
    ax.set_yticks(range(len(counts.columns)), [f"{run} (n={int(totals[run])})" for run in counts.columns])
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of predictions (%)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return ax


def score_distribution(data: Any, metric: str = PRIMARY_METRIC, hue: str | None = "method", bins: int = 10,
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


def dependency_graph(nodes: list[str], edges: Iterable[Mapping[str, Any]], groups: Iterable[Iterable[str]] = (),
                     ax: Axes | None = None) -> Axes:
    """A small directed graph with signed edges (GenOp dependency graphs): ``nodes`` on a circle, each edge
    ``{"from", "to", "sign": "+"|"-", "vars": [...]}`` an arrow labelled with its variables (negative edges dashed
    and in the palette's second colour), and each of ``groups`` (e.g. SCCs with more than one member) shaded."""
    ax = _axes(ax)
    colours = sns.color_palette(PALETTE)
    angle = np.linspace(0, 2 * np.pi, len(nodes), endpoint=False) + np.pi / 2
    pos = {n: (np.cos(a), np.sin(a)) if len(nodes) > 1 else (0.0, 0.0) for n, a in zip(nodes, angle, strict=True)}
    for group in groups:
        members = [pos[n] for n in group]
        centre = np.mean(members, axis=0)
        radius = max(float(np.hypot(*(np.array(m) - centre))) for m in members) + 0.35
        ax.add_patch(plt.Circle(centre, radius, color=colours[2], alpha=0.15, zorder=0))
    for edge in edges:
        (x1, y1), (x2, y2) = pos[edge["from"]], pos[edge["to"]]
        negative = edge.get("sign") == "-"
        ax.annotate("", xy=(x2, y2), xytext=(x1, y1), zorder=1,
                    arrowprops={"arrowstyle": "-|>", "shrinkA": 14, "shrinkB": 14, "connectionstyle": "arc3,rad=0.2",
                                "color": colours[1] if negative else colours[0],
                                "linestyle": "--" if negative else "-"})
        label = f"{edge.get('sign', '+')} " + ", ".join("?" + v for v in edge.get("vars", []))
        ax.text((x1 + x2) / 2 + 0.3 * (y2 - y1), (y1 + y2) / 2 - 0.3 * (x2 - x1), label, ha="center",
                va="center", fontsize=8)
    for name, (x, y) in pos.items():
        ax.text(x, y, name, ha="center", va="center", zorder=2,
                bbox={"boxstyle": "circle", "facecolor": "white", "edgecolor": colours[0]})
    ax.set_xlim(-1.7, 1.7)
    ax.set_ylim(-1.7, 1.7)
    ax.set_aspect("equal")
    ax.axis("off")
    return ax


def loss_curves(history: Iterable[Mapping[str, Any]], hue: str | None = None, ax: Axes | None = None) -> Axes:
    """Training loss (``loss``) and held-out loss (``eval_loss``) against ``step``, from a transformers
    ``Trainer`` log history (``training.json``'s ``history``); with ``hue`` (a key added to every entry, e.g. the
    data composition) one colour per value, solid for training and dashed for held-out loss."""
    rows = [{"step": e["step"], "loss": float(e[key]), "split": split, "group": e.get(hue, "") if hue else ""}
            for e in history for key, split in (("loss", "train"), ("eval_loss", "held-out")) if key in e]
    frame = _frame(rows, ["step", "loss"])
    ax = _axes(ax)
    sns.lineplot(frame, x="step", y="loss", hue="group" if hue else None, style="split", marker="o",
                 markersize=3, ax=ax, palette=PALETTE if hue else None)
    ax.set_xlabel("optimiser step")
    ax.set_ylabel("loss (response tokens)")
    _legend_outside(ax)
    return ax


CHAR_WIDTH_EM = 0.6
"""A generous average character width, in ems of the font, for fitting labels to the space they have."""

MIN_LABEL_CHARS = 10
""":func:`metric_bars` turns bars horizontal when a vertical bar's group label would get fewer characters per line
than this (and does not fit as it is)."""

_SUBPLOT_WIDTH = 0.775
"""The share of the figure's width a single ``plt.subplots`` axes takes (matplotlib's default margins)."""


def _axes_inches(ax: Axes) -> tuple[float, float]:
    box = ax.get_position()
    return box.width * ax.figure.get_figwidth(), box.height * ax.figure.get_figheight()


def _chars_across(inches: float, font: str) -> int:
    """How many characters of the rc font ``font`` (e.g. ``"axes.labelsize"``) fit in ``inches``."""
    points = FontProperties(size=mpl.rcParams[font]).get_size_in_points()
    return int(inches * 72 / (CHAR_WIDTH_EM * points))


def _wrap(text: str, width: int) -> str:
    """``text`` broken at spaces (and hyphens) into lines of at most ``width`` characters, each of its own lines
    wrapped on its own."""
    return "\n".join(wrapped for line in text.split("\n") for wrapped in textwrap.wrap(line, max(1, width)) or [""])


def _fit_label(ax: Axes, text: str, vertical: bool = False) -> str:
    """``text`` wrapped to the width of the axes (its height, for a ``vertical`` label), so the axis labels of
    panels side by side never run into each other."""
    width, height = _axes_inches(ax)
    return _wrap(text, max(12, _chars_across(height if vertical else width, "axes.labelsize")))


def pareto_front(costs: Iterable[float], scores: Iterable[float]) -> list[bool]:
    """Which points are on the cost-quality Pareto front: no other point costs at most as much and scores at
    least as well with one of the two strictly better. Points with a missing value are never on it."""
    points = [(float(c), float(s)) for c, s in zip(costs, scores, strict=True)]

    def dominated(c: float, s: float) -> bool:
        return any(oc <= c and os_ >= s and (oc < c or os_ > s) for oc, os_ in points if oc == oc and os_ == os_)

    return [c == c and s == s and not dominated(c, s) for c, s in points]


def cost_quality(points: Any, cost: str = "model_calls", metric: str = PRIMARY_METRIC, hue: str = "row",
                 group: str = "dataset", ax: Axes | None = None) -> Axes:
    """Quality against cost, one marker per method configuration (``hue``) and dataset (marker style), with
    each dataset's Pareto front (:func:`pareto_front`) as a dashed step line through its points.

    ``points`` has one record per cell (e.g. :meth:`sparqlab.experiments.table.ComparisonTable.points`): the
    metric (a rate, drawn in percent) and a cost per question (``model_calls``, ``tokens`` ...).
    """
    frame = _frame(points, [cost, metric, hue, group]).dropna(subset=[cost, metric])
    if frame.empty:
        raise ValueError(f"no point has both {cost!r} and {metric!r}")
    scale = _scale(metric)
    frame["_y"] = frame[metric].astype(float) * scale
    ax = _axes(ax)
    sns.scatterplot(frame, x=cost, y="_y", hue=hue, style=group, s=40, palette=PALETTE, ax=ax, zorder=3)
    for _, members in frame.groupby(group, sort=False):
        front = members[pareto_front(members[cost], members["_y"])].sort_values(cost)
        ax.step(front[cost], front["_y"], where="post", linestyle="--", linewidth=0.8, color="0.35", zorder=2)
        ax.scatter(front[cost], front["_y"], s=110, facecolors="none", edgecolors="0.2", linewidths=0.8, zorder=4)
    ax.set_xlabel(f"{cost.replace('_', ' ')} per question  [circled: Pareto front per {group}]")
    ax.set_ylabel(metric_label(metric))
    _legend_outside(ax)
    return ax


def leakage_pairs(pairs: Any, text_threshold: float, query_threshold: float, hue: str | None = None,
                  ax: Axes | None = None) -> Axes:
    """Each scored question's best pool match: text similarity (MiniLM cosine, :mod:`sparqlab.runs.leakage`)
    against gold-query similarity, the two thresholds as dashed lines; the near-duplicates are the points beyond
    either. A question with no lexical candidate (text similarity ``None``) is drawn at 0."""
    frame = _frame(pairs, ["text_similarity", "query_similarity"] + ([hue] if hue else []))
    frame["text_similarity"] = frame["text_similarity"].astype(float).fillna(0.0)
    ax = _axes(ax)
    sns.scatterplot(frame, x="text_similarity", y="query_similarity", hue=hue, s=30, alpha=0.7,
                    palette=PALETTE if hue else None, ax=ax, zorder=3)
    ax.axvline(text_threshold, linestyle="--", linewidth=0.8, color="0.35")
    ax.axhline(query_threshold, linestyle="--", linewidth=0.8, color="0.35")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.05)
    ax.set_xlabel("question similarity (MiniLM cosine)")
    ax.set_ylabel("gold-query similarity")
    _legend_outside(ax)
    return ax


def _axes(ax: Axes | None) -> Axes:
    return ax if ax is not None else subplots()[1]


def _legend_outside(ax: Axes) -> None:
    """Legends go right of the axes, so they never hide bars."""
    if ax.get_legend() is not None:
        sns.move_legend(ax, "upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)


def _frame(data: Any, columns: list[str]) -> pd.DataFrame:
    """A copy of ``data`` as a DataFrame, with a clear error when a needed column is missing; a figure of F1 or
    EM gets the judged questions only (:func:`sparqlab.eval.judged_frame`: the values every table averages)."""
    if isinstance(data, pd.DataFrame):
        frame = data.copy()
    elif isinstance(data, Iterable) and not isinstance(data, str | Mapping):
        frame = pd.DataFrame(list(data))
    else:
        raise TypeError(f"expected a DataFrame or a list of records, got {type(data).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"records lack column(s) {missing}; available: {sorted(map(str, frame.columns))}")
    if set(ANSWER_METRICS) & set(columns):
        frame = judged_frame(frame)
    if frame.empty:
        raise ValueError("no records to plot")
    return frame


use_style()
