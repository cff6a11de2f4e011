"""The plotting module: style, charts drawn from per-question records, PNG + PDF files in the figures folder."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from sparqlab import plots  # noqa: E402

RECORDS = [
    {"method": "direct", "f1": 1.0, "em": True},
    {"method": "direct", "f1": 0.0, "em": False},
    {"method": "direct", "f1": 0.5, "em": False},
    {"method": "agent", "f1": 1.0, "em": True},
    {"method": "agent", "f1": 1.0, "em": True},
    {"method": "agent", "f1": 0.4, "em": False},
]


def test_save_figure_writes_valid_png_and_pdf(figures):
    ax = plots.metric_bars(RECORDS, metric="f1", x="method")
    paths = plots.save_figure(ax.figure, "f1_by_method")
    assert paths == [figures / "f1_by_method.png", figures / "f1_by_method.pdf"]
    png, pdf = (p.read_bytes() for p in paths)
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and png[12:16] == b"IHDR"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert width > 300 and height > 200
    assert pdf.startswith(b"%PDF-") and pdf.rstrip().endswith(b"%%EOF")


def test_save_figure_rejects_paths_and_extensions(figures):
    fig, _ = plt.subplots()
    for name in ("../escape", "sub/name", "figure.png", ""):
        with pytest.raises(ValueError, match="file stem"):
            plots.save_figure(fig, name)
    assert not figures.exists()


def test_metric_bars_are_macro_averages_in_percent(figures):
    ax = plots.metric_bars(RECORDS, metric="f1", x="method")
    labels = [t.get_text() for t in ax.get_xticklabels()]
    heights = dict(zip(labels, (bar.get_height() for bar in ax.patches), strict=True))
    assert heights == pytest.approx({"direct (n=3)": 50.0, "agent (n=3)": 80.0})
    assert ax.get_ylabel() == "F1 (%)"
    assert len(ax.lines) >= 2  # one confidence interval per bar


def test_metric_bars_with_hue_and_missing_columns(figures):
    records = [{**r, "dataset": d} for r in RECORDS for d in ("qald7", "qald10")]
    ax = plots.metric_bars(records, metric="em", x="dataset", hue="method")
    assert len([p for p in ax.patches if p.get_height() > 0]) == 4
    with pytest.raises(ValueError, match="lack column"):
        plots.metric_bars(RECORDS, metric="f1", x="benchmark")


def test_score_distribution_shares_sum_to_one_per_method(figures):
    ax = plots.score_distribution(RECORDS, metric="f1", hue="method", bins=5)
    heights = [p.get_height() for p in ax.patches if p.get_width() > 0]
    assert sum(heights) == pytest.approx(2.0)  # two methods, each a distribution over bins
    assert ax.get_xlim() == (0, 1)


def test_style_uses_colour_blind_palette_and_embeds_fonts():
    plots.use_style()
    import seaborn as sns

    assert matplotlib.rcParams["pdf.fonttype"] == 42
    cycle = [c for c in matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]]
    assert [matplotlib.colors.to_hex(c) for c in cycle[:3]] == sns.color_palette("colorblind").as_hex()[:3]
