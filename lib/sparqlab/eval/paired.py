"""Paired comparison of two runs over the same questions: which questions flipped, and is the difference real?

Two runs on one question set are paired data: per question both have a score. Comparing their means as if they
were independent samples wastes that. This module matches the runs' per-question records by question id and
reports the flips (questions one run answers exactly and the other does not), McNemar's exact test on the
exact-match flips, and a paired bootstrap interval of the difference of mean F1 and EM.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import binomtest

from sparqlab.eval.metrics import judged_scores


@dataclass(repr=False)
class PairedComparison:
    """The result of :func:`paired_comparison` (``a`` and ``b`` are the two runs' names).

    - ``n``: questions scored in both runs (matched by id); ``only_a`` / ``only_b``: ids scored in one run only.
    - ``both`` / ``neither``: questions both / neither run answers exactly (EM).
    - ``a_only`` / ``b_only``: ids of the flips — exact in ``a`` but not ``b``, and the reverse.
    - ``mcnemar_p``: two-sided exact McNemar p-value (binomial test of ``len(a_only)`` among the flips, p = 1/2);
      1.0 when there are no flips.
    - ``f1_diff`` / ``em_diff``: mean of ``b - a`` per question, with ``*_ci`` percentile bootstrap intervals
      (``ci``% level, ``resamples`` resamples of the questions, seeded).
    """

    a: str
    b: str
    n: int
    both: int
    neither: int
    a_only: list[str] = field(default_factory=list)
    b_only: list[str] = field(default_factory=list)
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    mcnemar_p: float = 1.0
    f1_diff: float = 0.0
    f1_diff_ci: tuple[float, float] = (0.0, 0.0)
    em_diff: float = 0.0
    em_diff_ci: tuple[float, float] = (0.0, 0.0)
    ci: float = 95.0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def __repr__(self) -> str:
        return self.summary()

    def summary(self) -> str:
        """A few lines: counts, the test, the intervals (percentage points, one decimal), the runs by name."""

        def pp(value: float) -> str:
            return f"{100 * value:+.1f}"

        lines = [f"paired comparison on {self.n} questions scored in both runs ({self.b} minus {self.a})",
                 f"  exact in both {self.both}, in neither {self.neither}, only in {self.a} {len(self.a_only)}, "
                 f"only in {self.b} {len(self.b_only)}",
                 f"  McNemar exact test on the {len(self.a_only) + len(self.b_only)} flips: p = {self.mcnemar_p:.3g}",
                 f"  F1 difference {pp(self.f1_diff)} points ({self.ci:g}% paired bootstrap CI "
                 f"{pp(self.f1_diff_ci[0])} to {pp(self.f1_diff_ci[1])})",
                 f"  EM difference {pp(self.em_diff)} points ({self.ci:g}% paired bootstrap CI "
                 f"{pp(self.em_diff_ci[0])} to {pp(self.em_diff_ci[1])})"]
        if self.only_a or self.only_b:
            lines.append(f"  not paired (scored in one run only): {len(self.only_a)} in {self.a}, "
                         f"{len(self.only_b)} in {self.b}")
        return "\n".join(lines)


def _scored(records: Iterable[Mapping[str, Any]]) -> dict[str, tuple[float, bool]]:
    """Each judged question's ``(F1, EM)`` (:func:`sparqlab.eval.metrics.judged_scores`: gold errors left out, a
    missing prediction wrong), by question id; duplicate ids are an error."""
    found: dict[str, tuple[float, bool]] = {}
    for record in records:
        if (score := judged_scores(record)) is None:
            continue
        key = str(record["id"])
        if key in found:
            raise ValueError(f"question id {key!r} appears twice in one run")
        found[key] = score
    return found


def paired_comparison(a: Iterable[Mapping[str, Any]], b: Iterable[Mapping[str, Any]], a_name: str = "A",
                      b_name: str = "B", ci: float = 95.0, resamples: int = 2000, seed: int = 0) -> PairedComparison:
    """Compare two runs' per-question records (``id``, ``f1``, ``em``) paired by question id."""
    left, right = _scored(a), _scored(b)
    common = [key for key in left if key in right]
    if not common:
        raise ValueError(f"runs {a_name} and {b_name} share no scored question (compare runs of one question set)")
    f1 = np.array([[left[k][0], right[k][0]] for k in common])
    em = np.array([[left[k][1], right[k][1]] for k in common])
    a_only = [k for k, (x, y) in zip(common, em, strict=True) if x and not y]
    b_only = [k for k, (x, y) in zip(common, em, strict=True) if y and not x]
    flips = len(a_only) + len(b_only)
    p_value = binomtest(len(a_only), flips, 0.5).pvalue if flips else 1.0
    picks = _resample(len(common), resamples, seed)

    def interval(diff: np.ndarray) -> tuple[float, float]:
        return _percentile_interval(diff, picks, ci)

    f1_diff, em_diff = f1[:, 1] - f1[:, 0], em[:, 1].astype(float) - em[:, 0].astype(float)
    return PairedComparison(
        a=a_name, b=b_name, n=len(common), both=int((em[:, 0] & em[:, 1]).sum()),
        neither=int((~em[:, 0] & ~em[:, 1]).sum()), a_only=a_only, b_only=b_only,
        only_a=[k for k in left if k not in right], only_b=[k for k in right if k not in left],
        mcnemar_p=float(p_value), f1_diff=float(f1_diff.mean()), f1_diff_ci=interval(f1_diff),
        em_diff=float(em_diff.mean()), em_diff_ci=interval(em_diff), ci=ci)


def _resample(n: int, resamples: int, seed: int) -> np.ndarray:
    """``resamples`` rows of ``n`` question positions drawn with replacement (seeded)."""
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def _percentile_interval(values: np.ndarray, picks: np.ndarray, ci: float) -> tuple[float, float]:
    """Percentile bootstrap interval (``ci``%) of the mean of ``values`` over the resamples ``picks``."""
    return percentile_interval(values[picks].mean(axis=1), ci)


def percentile_interval(estimates: np.ndarray, ci: float) -> tuple[float, float]:
    """The central ``ci``% of the bootstrap estimates (numpy's linear percentiles): the percentile interval."""
    tail = (100 - ci) / 2
    low, high = np.percentile(estimates, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap_ci(values: Iterable[float], ci: float = 95.0, resamples: int = 2000,
                 seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of per-question values (one run's F1 or EM), resampling the
    questions with a seeded generator, as the paired intervals above do for differences."""
    array = np.asarray([float(v) for v in values], dtype=float)
    if not len(array):
        raise ValueError("no values to bootstrap")
    return _percentile_interval(array, _resample(len(array), resamples, seed), ci)
