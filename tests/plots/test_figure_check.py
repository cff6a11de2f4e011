"""Figures checked by machine: overlapping text, text cut at the canvas edge and empty panels are found
on the rendered figure, recorded in the sidecar, and fail under the strict mode the tests run in."""

from __future__ import annotations

import json

import matplotlib
import pytest

from sparqlab import plots
from sparqlab.core.paths import figures_dir
from sparqlab.plots.check import CHECK_ENV, FigureLayoutError, check_figure

OLD_GROUP_LABEL = "dataset  [error bars: 95% bootstrap CI over questions]"
"""metric_bars' group axis label as it once was, on one line: two panels side by side ran into each other."""


def agent_rows():
    return [{"variant": v, "dataset": d, "f1": i % 2, "model_calls_total": 3 + i}
            for v in ("SPINACH", "SAGA") for d in ("metaqa-1hop", "metaqa-2hop") for i in range(3)]


def agents_figure():
    """The figure of notebooks/01_agent_runs.ipynb, drawn the same way."""
    fig, axes = plots.subplots(1, 2, figsize=(8, 3))
    plots.metric_bars(agent_rows(), metric="f1", x="dataset", hue="variant", ax=axes[0])
    plots.metric_bars(agent_rows(), metric="model_calls_total", x="dataset", hue="variant", ax=axes[1])
    axes[0].get_legend().remove()
    axes[1].set_ylabel("model calls per question")
    fig.suptitle("standin-agent [standin]")
    return fig, axes


def test_the_old_agents_figure_has_its_x_labels_run_into_each_other(figures):
    fig, axes = agents_figure()
    assert check_figure(fig) == []  # as the helpers draw it now
    for ax in axes:
        ax.set_xlabel(OLD_GROUP_LABEL)  # as they drew it before
    problems = check_figure(fig)
    assert [p.kind for p in problems] == ["overlap"]
    assert "x label of panel 1" in problems[0].detail and "x label of panel 2" in problems[0].detail


def test_overlapping_tick_labels_legend_and_title_are_found(figures):
    fig, ax = plots.subplots(figsize=(2, 2))
    ax.bar(range(6), [1] * 6)
    ax.set_xticks(range(6), [f"a rather long category name {i}" for i in range(6)])
    kinds = {p.kind for p in check_figure(fig)}
    details = " ".join(p.detail for p in check_figure(fig))
    assert kinds == {"overlap"} and "x tick label of panel 1" in details
    fig, ax = plots.subplots(figsize=(3, 2))
    ax.plot([0, 1], [0, 1], label="a line")
    ax.legend(loc="upper left")
    ax.text(0.0, 0.98, "a note under the legend", transform=ax.transAxes, va="top")
    assert any("legend of panel 1 entry 'a line'" in p.detail for p in check_figure(fig))


def test_text_cut_at_the_canvas_edge_is_found(figures, monkeypatch):
    fig, ax = plots.subplots(figsize=(3, 2))
    monkeypatch.setitem(matplotlib.rcParams, "savefig.bbox", None)  # the canvas is the figure, not the tight box
    ax.plot([0, 1], [0, 1])
    fig.text(0.9, 0.5, "this sentence runs off the right edge")
    problems = check_figure(fig)
    assert [p.kind for p in problems] == ["cut"] and "runs off" in problems[0].detail
    monkeypatch.setitem(matplotlib.rcParams, "savefig.bbox", "tight")
    assert check_figure(fig) == []  # the tight box grows to hold it


def test_empty_panels_are_found_and_drawn_ones_are_not(figures):
    fig, axes = plots.subplots(1, 3, figsize=(6, 2))
    axes[0].plot([0, 1], [1, 0])
    axes[1].bar([0, 1], [float("nan"), 0.0])  # nothing visible: a NaN bar and a zero-height bar
    axes[2].scatter([], [])
    problems = check_figure(fig)
    assert [(p.kind, p.detail) for p in problems] == [("empty", "panel 2 has nothing drawn in it"),
                                                      ("empty", "panel 3 has nothing drawn in it")]
    zero = plots.metric_bars([{"method": "m", "f1": 0.0}] * 2, metric="f1", x="method")
    assert check_figure(zero.figure) == []  # a zero bar is drawn as a line at zero: not empty


def test_save_figure_records_the_check_in_the_sidecar_and_strict_mode_raises(figures, monkeypatch):
    fig, _ = agents_figure()
    plots.save_figure(fig, "clean")
    assert json.loads((figures / "clean.json").read_text())["layout_problems"] == []
    fig.axes[0].set_xlabel(OLD_GROUP_LABEL)
    fig.axes[1].set_xlabel(OLD_GROUP_LABEL)
    with pytest.raises(FigureLayoutError, match="overlap: x label of panel 1"):
        plots.save_figure(fig, "overlapping")  # the suite runs with SPARQLAB_FIGURE_CHECK=strict
    sidecar = json.loads((figures / "overlapping.json").read_text())
    assert len(sidecar["layout_problems"]) == 1 and (figures / "overlapping.png").exists()
    monkeypatch.setenv(CHECK_ENV, "warn")
    with pytest.warns(UserWarning, match="layout problems"):
        plots.save_figure(fig, "overlapping")


def test_every_figure_in_the_figures_folder_passed_the_check():
    """The figures `make reproduce` wrote (none on a fresh clone): each sidecar records a check that found
    nothing. (The notebooks' own tests draw the same figures under the strict check.)"""
    for sidecar in sorted(figures_dir().rglob("*.json")):
        record = json.loads(sidecar.read_text(encoding="utf-8"))
        assert "layout_problems" in record, f"{sidecar} was saved before figures were checked: re-run the notebook"
        assert record["layout_problems"] == [], f"{sidecar}: {record['layout_problems']}"


def test_long_group_labels_turn_bars_horizontal_instead_of_overlapping(figures):
    """The ablation figure (notebooks/03_ablations.ipynb): five variants with long names ran into each other
    under vertical bars in one column."""
    variants = ["Full SAGA", "- type-constrained filtering", "- persistent type state", "- answer-type prior",
                "SPINACH"]
    rows = [{"variant": v, "dataset": "metaqa-1hop", "f1": i % 2} for v in variants for i in range(4)]
    ax = plots.metric_bars(rows, metric="f1", x="variant", hue="dataset")
    assert ax.get_xlabel() == "F1 (%)" and check_figure(ax.figure) == []
    forced = plots.metric_bars(rows, metric="f1", x="variant", hue="dataset", horizontal=False)
    assert check_figure(forced.figure) == []  # vertical on request: labels wrapped to a group's width
    forced.set_xticks(range(5), [f"{v} (n=4)" for v in variants])  # what it drew before
    assert {p.kind for p in check_figure(forced.figure)} == {"overlap"}
    short = plots.metric_bars([{"method": m, "f1": 1.0} for m in ("metaqa-1hop", "metaqa-2hop", "mcqa-movies")],
                              metric="f1", x="method")
    assert [t.get_text() for t in short.get_xticklabels()][0] == "metaqa-1hop\n(n=1)"  # wrapped to a group's width
    assert check_figure(short.figure) == []


def test_a_legend_over_the_next_panel_or_over_its_data_is_found(figures):
    fig, axes = plots.subplots(1, 2, figsize=(6, 2.5))
    for ax in axes:
        ax.plot([0, 1, 2], [0, 1, 2], label="rising")
        ax.plot([0, 1, 2], [2, 1, 0], label="falling")
        ax.set_ylim(0, 6)
    axes[1].set_yticks([])
    axes[0].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))  # sticks out over the right panel
    problems = check_figure(fig)
    assert [(p.kind, p.detail) for p in problems] == [("legend", "the legend of panel 1 covers panel 2")]
    axes[0].get_legend().remove()
    axes[1].legend(loc="lower center")  # where both lines cross
    assert [(p.kind, p.detail) for p in check_figure(fig)] == [
        ("legend", "the legend of panel 2 covers its data (place it outside the panel)")]
    axes[1].get_legend().remove()
    fig.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))  # beside the panels
    assert check_figure(fig) == []


def test_more_lines_than_a_reader_can_tell_apart_are_found(figures):
    from sparqlab.plots.check import MAX_LINES

    fig, ax = plots.subplots(figsize=(4, 3))
    for slope in range(MAX_LINES):
        ax.plot([0, 1, 2], [0, slope + 1, 2 * slope + 2])
    ax.axhline(1.0)  # a reference line is not data
    ax.errorbar([0.5], [1.0], yerr=0.2)  # nor are error bars
    assert check_figure(fig) == []
    ax.plot([0, 1, 2], [3, 1, 2])
    problems = check_figure(fig)
    assert [p.kind for p in problems] == ["crowded"]
    assert problems[0].detail.startswith(f"panel 1 has {MAX_LINES + 1} lines")


def test_bars_with_capped_error_bars_are_not_lines(figures):
    rows = [{"strategy": s, "measure": m, "value": v} for s in "abcdefg" for m in ("x", "y") for v in (0.0, 1.0)]
    ax = plots.metric_bars(rows, metric="value", x="strategy", hue="measure")
    assert len(ax.lines) > 5 and check_figure(ax.figure) == []
