"""Figures for papers and notebooks: one seaborn style, one way to save, a few generic charts
(:mod:`sparqlab.plots.figures`; importing the package applies the style). Beside them: the layout check every
saved figure passes (:mod:`~sparqlab.plots.check`), the HTML run report (:mod:`~sparqlab.plots.report`), styled
tables (:mod:`~sparqlab.plots.tables`) and the notebook widgets (:mod:`~sparqlab.plots.widgets`)."""

from sparqlab.plots.check import FigureLayoutError, LayoutProblem
from sparqlab.plots.figures import (
    CHAR_WIDTH_EM,
    HORIZONTAL_AFTER,
    LINE_STYLES,
    MIN_LABEL_CHARS,
    PALETTE,
    SINGLE_COLUMN,
    category_shares,
    cost_quality,
    dependency_graph,
    figure_stem,
    in_percent,
    leakage_pairs,
    loss_curves,
    metric_bars,
    metric_by_field,
    metric_label,
    metric_lines,
    paired_flips,
    pareto_front,
    repeat_bars,
    save_figure,
    score_distribution,
    subplots,
    sweep_lines,
    use_style,
)

__all__ = [
    "CHAR_WIDTH_EM", "HORIZONTAL_AFTER", "LINE_STYLES", "MIN_LABEL_CHARS", "PALETTE", "SINGLE_COLUMN",
    "FigureLayoutError", "LayoutProblem", "category_shares", "cost_quality", "dependency_graph", "figure_stem",
    "in_percent", "leakage_pairs", "loss_curves", "metric_bars", "metric_by_field", "metric_label", "metric_lines",
    "paired_flips", "pareto_front", "repeat_bars", "save_figure", "score_distribution", "subplots", "sweep_lines", "use_style",
]
