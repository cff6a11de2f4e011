"""Shared fixture of the plot tests: figures go to a per-test folder, and every figure is closed afterwards."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture
def figures(tmp_path, monkeypatch):
    folder = tmp_path / "figs"
    monkeypatch.setenv("SPARQLAB_FIGURES", str(folder))
    yield folder
    plt.close("all")
