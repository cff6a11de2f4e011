"""Figures a reader can trust: n per group, captioned error bars, visible zero bars, many groups, sidecars."""

from __future__ import annotations

import json

import pytest

from sparqlab import plots
from sparqlab.core.hashing import stable_hash


def records(groups: int, per_group: int = 3, field: str = "qtype"):
    return [{field: f"type_{g:02d}", "f1": (g % 4) / 4, "method": "m"} for g in range(groups)
            for _ in range(per_group)]


def test_group_labels_carry_n_and_the_axis_says_what_error_bars_are(figures):
    data = [{"method": "a", "f1": 1.0}] * 2 + [{"method": "b", "f1": 0.5}] * 5
    ax = plots.metric_bars(data, metric="f1", x="method", ci=90)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a (n=2)", "b (n=5)"]
    assert "90% bootstrap CI over questions" in " ".join(ax.get_xlabel().split())


def test_zero_bar_is_drawn_as_a_visible_line_at_zero(figures):
    data = [{"method": "zero", "f1": 0.0}] * 3 + [{"method": "one", "f1": 1.0}] * 3
    ax = plots.metric_bars(data, metric="f1", x="method")
    zero_lines = [line for line in ax.lines if list(line.get_ydata()) == [0, 0] and line.get_linewidth() >= 3]
    assert len(zero_lines) == 1
    # without the marker the zero group would have nothing drawn at all
    assert [p.get_height() for p in ax.patches] == [0.0, 100.0]


def test_many_groups_switch_to_horizontal_bars(figures):
    ax = plots.metric_bars(records(plots.HORIZONTAL_AFTER + 1), metric="f1", x="qtype")
    assert ax.get_xlabel() == "F1 (%)"
    assert ax.get_yticklabels()[0].get_text() == "type_00 (n=3)"
    assert plots.metric_bars(records(3), metric="f1", x="qtype").get_ylabel() == "F1 (%)"


def test_metric_by_field_sorts_many_groups_and_drops_small_ones(figures):
    data = records(55) + [{"qtype": "rare", "f1": 1.0, "method": "m"}]
    ax = plots.metric_by_field(data, "qtype", metric="f1", min_n=2)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 55 and not any(label.startswith("rare") for label in labels)
    assert labels[-1].endswith("(n=3)") and labels[-1].startswith("type_03")  # best group on top (f1 0.75)
    assert "1 group(s) with n<2 omitted" in " ".join(ax.get_xlabel().split())
    assert ax.figure.get_size_inches()[1] > 8  # grows with the number of groups
    means = ax.lines[0].get_xdata()
    assert list(means) == sorted(means)


def test_save_figure_under_experiment_with_params_and_sidecar(figures, tmp_path):
    ax = plots.metric_bars(records(2), metric="f1", x="qtype")
    run_dir = tmp_path / "runs" / "exp" / "direct-x-abc"
    paths = plots.save_figure(ax.figure, "f1_by_qtype", experiment="exp", params={"limit": 10, "model": "a/b"},
                              runs=[run_dir, "other-run"])
    stem = f"f1_by_qtype--limit-10--model-a_b-{stable_hash('a/b', 6)}"  # a mapped value keeps a digest of itself
    assert paths == [figures / "exp" / f"{stem}.png", figures / "exp" / f"{stem}.pdf"]
    sidecar = json.loads((figures / "exp" / f"{stem}.json").read_text())
    assert sidecar["runs"] == [str(run_dir), "other-run"]
    assert sidecar["params"] == {"limit": 10, "model": "a/b"} and sidecar["experiment"] == "exp"
    # a smoke test with another limit does not overwrite the figure
    other = plots.save_figure(ax.figure, "f1_by_qtype", experiment="exp", params={"limit": 2, "model": "a/b"})
    assert other[0] != paths[0] and paths[0].exists()
    with pytest.raises(ValueError, match="experiment"):
        plots.save_figure(ax.figure, "x", experiment="../up")
