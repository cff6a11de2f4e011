"""Figures checked by machine: text that overlaps other text, text cut at the canvas edge, empty panels, legends
over another panel or over the data, and more lines on one panel than a reader can tell apart.

:func:`check_figure` lays a matplotlib figure out as it will be saved and compares the rendered bounding boxes of
every piece of text (tick labels, axis labels, titles, legend entries and titles, annotations, figure texts).
:func:`sparqlab.plots.save_figure` runs it on every figure it writes and records the problems in the sidecar, so
a figure can be judged without looking at it; with ``SPARQLAB_FIGURE_CHECK=strict`` (the test suite sets it) a
problem is an error, so every figure the notebooks draw is checked whenever their tests run them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

import matplotlib as mpl
import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from matplotlib.transforms import Bbox

MAX_LINES = 5
"""At most this many data lines on one panel: six similar lines are hard to tell apart (facet them or label each
line at its end instead). A data line is one polyline of three or more points (reference lines, error bars and
markers are not counted)."""

TOLERANCE_PX = 1.0
"""Boxes must overlap (or stick out of the canvas) by more than this, in pixels at the figure's dpi, to count:
rounding in the text layout must not make a touching pair a problem."""

CHECK_ENV = "SPARQLAB_FIGURE_CHECK"
"""``strict``: :func:`sparqlab.plots.save_figure` raises :class:`FigureLayoutError` on a problem (after writing the
files, so they can be looked at); anything else: it warns. The sidecar records the problems either way."""


class FigureLayoutError(ValueError):
    """A figure has overlapping text, text cut at the canvas edge, an empty panel, a legend over another panel or
    the data, or too many lines on one panel."""


@dataclass(frozen=True)
class LayoutProblem:
    """One problem: ``kind`` and a sentence naming the texts or panel involved."""

    kind: Literal["overlap", "cut", "empty", "legend", "crowded"]
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


def strict() -> bool:
    """Whether layout problems are errors (``SPARQLAB_FIGURE_CHECK=strict``)."""
    return os.environ.get(CHECK_ENV, "").strip().lower() == "strict"


def check_figure(fig: Figure) -> list[LayoutProblem]:
    """The layout problems of ``fig`` as it is saved (``savefig.bbox="tight"`` crops the canvas to the drawn
    artists): pairs of texts whose boxes overlap, texts reaching beyond the canvas, and visible panels with
    nothing drawn in them."""
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    boxes = [(name, text.get_window_extent(renderer)) for name, text in _texts(fig)]
    canvas = _canvas(fig, renderer)
    problems = []
    for (name_a, a), (name_b, b) in combinations(boxes, 2):
        if _overlap(a, b) > TOLERANCE_PX:
            problems.append(LayoutProblem("overlap", f"{name_a} overlaps {name_b}"))
    for name, box in boxes:
        outside = max(canvas.x0 - box.x0, canvas.y0 - box.y0, box.x1 - canvas.x1, box.y1 - canvas.y1)
        if outside > TOLERANCE_PX:
            problems.append(LayoutProblem("cut", f"{name} is cut at the canvas edge ({outside:.0f} px outside)"))
    for index, ax in enumerate(fig.axes):
        if ax.get_visible() and not _has_content(ax):
            problems.append(LayoutProblem("empty", f"{_panel(ax, index)} has nothing drawn in it"))
    problems += _legend_problems(fig, renderer)
    for index, ax in enumerate(fig.axes):
        lines = [line for line in ax.lines if _is_data_line(line)]
        if ax.get_visible() and len(lines) > MAX_LINES:
            problems.append(LayoutProblem("crowded", f"{_panel(ax, index)} has {len(lines)} lines (at most "
                                                     f"{MAX_LINES} can be told apart): facet them or label each"))
    return problems


def _legend_problems(fig: Figure, renderer) -> list[LayoutProblem]:
    """Legends drawn over another panel, and a panel's legend covering its own data (line points, markers,
    bars)."""
    panels = [(index, ax) for index, ax in enumerate(fig.axes) if ax.get_visible() and ax.axison]
    legends = [("the figure legend", None, legend) for legend in fig.legends]
    legends += [(f"the legend of {_panel(ax, index)}", ax, ax.get_legend()) for index, ax in panels
                if ax.get_legend() is not None]
    problems = []
    for name, owner, legend in legends:
        if not legend.get_visible():
            continue
        box = legend.get_window_extent(renderer)
        for index, ax in panels:
            if ax is not owner and _overlap(box, ax.get_window_extent(renderer)) > TOLERANCE_PX:
                problems.append(LayoutProblem("legend", f"{name} covers {_panel(ax, index)}"))
        if owner is not None and _covers_data(box, owner, renderer):
            problems.append(LayoutProblem("legend", f"{name} covers its data (place it outside the panel)"))
    return problems


def _covers_data(box: Bbox, ax: Axes, renderer) -> bool:
    """Whether a data point (of a line or a marker collection) lies inside ``box`` or a bar overlaps it."""
    inner = box.padded(-TOLERANCE_PX)
    for line in ax.lines:
        points = np.asarray(line.get_xydata(), dtype=float)
        if line.get_visible() and points.size:
            shown = line.get_transform().transform(points[np.isfinite(points).all(axis=1)])
            if inner.count_contains(shown):
                return True
    for collection in ax.collections:
        if isinstance(collection, PathCollection) and collection.get_visible() and len(collection.get_offsets()):
            shown = collection.get_offset_transform().transform(np.asarray(collection.get_offsets(), dtype=float))
            if inner.count_contains(shown[np.isfinite(shown).all(axis=1)]):
                return True
    for patch in ax.patches:
        if isinstance(patch, Rectangle) and patch.get_visible() and patch.get_width() and patch.get_height():
            extent = patch.get_window_extent(renderer)
            if np.isfinite(extent.get_points()).all() and _overlap(box, extent) > TOLERANCE_PX:
                return True
    return False


def _is_data_line(line) -> bool:
    """A line that shows data (:data:`MAX_LINES`): one polyline of three or more points (a reference line has two,
    error bars with caps are segments split by NaN rows)."""
    points = np.asarray(line.get_xydata(), dtype=float)
    return bool(line.get_visible() and points.ndim == 2 and len(points) >= 3 and np.isfinite(points).all())


def figure_texts(fig: Figure) -> list[str]:
    """Every visible text of ``fig`` (titles, labels, tick labels, legends, annotations), each once in drawing
    order: what a reader sees, recorded in the figure's sidecar so a test can check it without reading pixels."""
    fig.draw_without_rendering()
    return list(dict.fromkeys(text.get_text().strip() for _, text in _texts(fig)))


def _overlap(a: Bbox, b: Bbox) -> float:
    """The smaller side of the intersection of two boxes (0 when they do not intersect)."""
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return max(0.0, min(width, height))


def _canvas(fig: Figure, renderer) -> Bbox:
    """The saved area in display pixels: the tight box plus its padding, or the whole figure."""
    if mpl.rcParams["savefig.bbox"] != "tight":
        return fig.bbox
    pad = mpl.rcParams["savefig.pad_inches"] * fig.dpi
    return fig.get_tightbbox(renderer).transformed(fig.dpi_scale_trans).padded(pad)


def _texts(fig: Figure) -> list[tuple[str, Text]]:
    """Every visible, non-empty text of the figure, each with a name saying where it is."""
    found: list[tuple[str, Text]] = [("figure text", t) for t in fig.texts]
    for legend in fig.legends:
        found += _legend_texts(legend, "figure legend")
    for index, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        panel = _panel(ax, index)
        found += [(f"title of {panel}", t) for t in (ax.title, ax._left_title, ax._right_title)]
        if ax.axison:
            for letter, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
                if not axis.get_visible():
                    continue
                found += [(f"{letter} label of {panel}", axis.label), (f"{letter} offset of {panel}", axis.offsetText)]
                low, high = sorted(axis.get_view_interval())
                for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                    if tick.get_visible() and low - 1e-9 * (high - low) <= tick.get_loc() <= high + 1e-9 * (high - low):
                        found += [(f"{letter} tick label of {panel}", label) for label in (tick.label1, tick.label2)]
        found += [(f"text of {panel}", t) for t in ax.texts]
        if ax.get_legend() is not None:
            found += _legend_texts(ax.get_legend(), f"legend of {panel}")
    return [(f"{name} {text.get_text().strip()!r}", text) for name, text in found
            if text.get_visible() and text.get_text().strip()]


def _legend_texts(legend, name: str) -> list[tuple[str, Text]]:
    if not legend.get_visible():
        return []
    return [(f"{name} title", legend.get_title())] + [(f"{name} entry", t) for t in legend.get_texts()]


def _panel(ax: Axes, index: int) -> str:
    title = ax.get_title() or ax.get_title("left") or ax.get_title("right")
    return f"panel {index + 1}" + (f" ({title!r})" if title else "")


def _has_content(ax: Axes) -> bool:
    """Whether anything is drawn in the panel: a line with a finite point, a bar of non-zero size, a non-empty
    collection (markers, bands, error bars), an image, a table, a patch or a text."""
    for line in ax.lines:
        points = np.asarray(line.get_xydata(), dtype=float)
        if line.get_visible() and points.size and np.isfinite(points).all(axis=1).any():
            return True
    for patch in ax.patches:
        if not patch.get_visible():
            continue
        if not isinstance(patch, Rectangle):
            return True
        width, height = patch.get_width(), patch.get_height()
        if np.isfinite([width, height]).all() and (width != 0 and height != 0):
            return True
    for collection in ax.collections:
        # markers (a PathCollection) are drawn at offsets: its marker path alone draws nothing
        drawn = collection.get_offsets() if isinstance(collection, PathCollection) else collection.get_paths()
        if collection.get_visible() and len(drawn):
            return True
    return bool(ax.images or ax.tables or [t for t in ax.texts if t.get_text().strip()] or ax.artists)
