"""A figure's bootstrap intervals do not depend on the order of predictions.jsonl (concurrent runs write lines in
finishing order, so the same run can list its questions differently on each execution)."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from sparqlab import plots  # noqa: E402


def _whiskers(frame):
    ax = plots.metric_bars(frame, metric="f1", x="variant", hue="dataset")
    return sorted(np.nan_to_num(np.round(line.get_ydata(), 9), nan=-1.0).tolist() for line in ax.lines)


def test_error_bars_are_the_same_whatever_the_row_order():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame([{"id": f"q{i}", "variant": v, "dataset": d, "f1": float(rng.random())}
                          for v in ("A", "B") for d in ("d1", "d2") for i in range(30)])
    shuffled = frame.sample(frac=1.0, random_state=3).reset_index(drop=True)
    assert _whiskers(frame) == _whiskers(shuffled)
