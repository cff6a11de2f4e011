"""Paired comparison of two runs: flips by question id, McNemar's exact test, paired bootstrap intervals."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from sparqlab import plots  # noqa: E402
from sparqlab.eval.paired import paired_comparison  # noqa: E402


def run(scores):
    return [{"id": f"q{i}", "f1": f, "em": f == 1.0} for i, f in enumerate(scores)]


def test_flips_counts_and_mcnemar_exact_p():
    a = run([1.0] * 5 + [0.0] * 10 + [0.0] * 5)
    b = run([1.0] * 5 + [1.0] * 10 + [0.0] * 5)
    result = paired_comparison(a, b, "base", "new")
    assert (result.n, result.both, result.neither) == (20, 5, 5)
    assert result.a_only == [] and result.b_only == [f"q{i}" for i in range(5, 15)]
    assert result.mcnemar_p == pytest.approx(2 * 0.5 ** 10)  # 10 flips, all one way
    assert result.f1_diff == pytest.approx(0.5) and result.em_diff == pytest.approx(0.5)
    low, high = result.f1_diff_ci
    assert 0 < low < 0.5 < high <= 1


def test_balanced_flips_are_not_significant_and_pairing_is_by_id():
    a = run([1.0, 0.0] * 10)
    b = list(reversed(a))  # same scores per id, other order in the file
    same = paired_comparison(a, b)
    assert same.a_only == same.b_only == [] and same.mcnemar_p == 1.0 and same.f1_diff_ci == (0.0, 0.0)
    swapped = paired_comparison(a, run([0.0, 1.0] * 10))
    assert len(swapped.a_only) == len(swapped.b_only) == 10 and swapped.mcnemar_p == pytest.approx(1.0)
    low, high = swapped.f1_diff_ci
    assert low < 0 < high


def test_unscored_and_unmatched_questions_are_reported_not_paired():
    a = run([1.0, 0.0, 1.0]) + [{"id": "gone", "f1": None, "em": None}]
    b = run([1.0, 1.0])
    result = paired_comparison(a, b)
    assert result.n == 2 and result.only_a == ["q2"] and result.only_b == []
    assert "not paired" in result.summary() and "McNemar" in result.summary()
    with pytest.raises(ValueError, match="share no scored question"):
        paired_comparison(run([1.0]), [{"id": "other", "f1": 1.0, "em": True}])
    with pytest.raises(ValueError, match="twice"):
        paired_comparison(run([1.0]) * 2, run([1.0]))


def test_paired_flips_plot_shows_counts_and_the_test(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARQLAB_FIGURES", str(tmp_path))
    result = paired_comparison(run([1.0] * 3 + [0.0] * 4), run([1.0] * 2 + [0.0] + [1.0] * 4))
    ax = plots.paired_flips(result)
    assert [round(p.get_width()) for p in ax.patches] == [2, 1, 4, 0]
    assert "McNemar p=" in ax.get_title() and ax.get_xlabel() == "questions (n=7 paired)"
