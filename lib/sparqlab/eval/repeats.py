"""Scores of a run repeated with several sampling seeds: mean, spread between runs, and intervals over questions
and repeats.

A sampled model answers differently on the next run, so one run's interval over questions says nothing about how
far the next run moves. For ``R`` repeats of one configuration on ``Q`` paired questions (docs/metrics.md writes
the estimators out):

* every registered metric of one run (:func:`sparqlab.eval.metrics.metric_list`): its value per repeat, the
  **mean** over repeats and the **sd** between runs (sample standard deviation, ``n − 1``; 0 for one repeat);
* for a metric that averages a per-question field (``averages_field``: F1, EM, precision, recall ...) a **95 %
  two-level bootstrap interval**: each resample draws ``Q`` questions with replacement, then for each drawn
  question ``R`` of its repeats with replacement, and takes the mean of those ``Q × R`` values; the interval is
  the central 95 % of ``resamples`` such means (seeded: the same runs give the same interval);
* per question its **stability** (the share of repeats that return the majority answer set) and the questions
  that flip (stability below 1);
* the metrics over repeats (``pass@k``, ``majority@k``, ``mean@k``), each with a bootstrap interval over
  questions (:func:`sparqlab.eval.paired.bootstrap_ci`).

:func:`paired_repeats` compares two repeated runs on their common questions with the same two-level resampling of
the difference (the questions drawn once for both, the repeats of each drawn separately); a difference is
distinguishable from the run-to-run spread when that interval excludes 0.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sparqlab.eval.metrics import (
    ANSWER_METRICS,
    Metric,
    RepeatedQuestion,
    check_k,
    cost_amount,
    judged_records,
    metric_list,
    summarise,
)
from sparqlab.eval.normalise import answer_set
from sparqlab.eval.paired import bootstrap_ci, percentile_interval

CI, RESAMPLES, SEED = 95.0, 2000, 0
"""The intervals' level (%), number of bootstrap resamples and generator seed unless told otherwise."""


def repeated_questions(runs: Sequence[Sequence[Mapping[str, Any]]]) -> list[RepeatedQuestion]:
    """The questions judged in every repeat (prediction records of each run, in seed order), in the first run's
    order, each with its judged records and normalised answer sets."""
    if not runs:
        raise ValueError("no repeats to aggregate")
    by_id = [{str(record["id"]): record for record in judged_records(run)} for run in runs]
    common = [key for key in by_id[0] if all(key in run for run in by_id[1:])]
    return [RepeatedQuestion(key, tuple(run[key] for run in by_id),
                             tuple(_answers(run[key].get("predicted_answers")) for run in by_id)) for key in common]


def _answers(predicted: Any) -> frozenset[str] | None:
    return None if predicted is None else frozenset(answer_set(predicted))


def value_matrix(runs: Sequence[Sequence[Mapping[str, Any]]], metric: Metric) -> tuple[list[str], np.ndarray]:
    """The ids and per-question values of ``metric`` (``Q × R``: the questions that have a value in every repeat,
    in the first run's order; judged records for an answer metric, every record for a method's own)."""
    rows = [judged_records(run) if metric.judged else list(run) for run in runs]
    by_id = [{str(r["id"]): metric.per_question(r) for r in run} for run in rows]
    common = [key for key, value in by_id[0].items()
              if value is not None and all(run.get(key) is not None for run in by_id[1:])]
    values = [[cost_amount(run[key]) for run in by_id] for key in common]
    return common, np.array(values, dtype=float).reshape(len(common), len(runs))


def two_level_means(values: np.ndarray, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """``resamples`` bootstrap means of a ``Q × R`` matrix: ``Q`` questions drawn with replacement
    (``rng.integers(0, Q, (resamples, Q))``), then for each drawn question ``R`` repeats with replacement
    (``rng.integers(0, R, (resamples, Q, R))``), averaged over the ``Q × R`` values drawn."""
    picked = rng.integers(0, values.shape[0], size=(resamples, values.shape[0]))
    return _repeat_means(values, picked, rng, resamples)


def _repeat_means(values: np.ndarray, picked: np.ndarray, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """The second level of :func:`two_level_means` for the drawn questions ``picked``."""
    repeats = rng.integers(0, values.shape[1], size=(resamples, picked.shape[1], values.shape[1]))
    return values[picked[:, :, None], repeats].mean(axis=(1, 2))


def two_level_interval(values: np.ndarray, ci: float = CI, resamples: int = RESAMPLES,
                       seed: int = SEED) -> tuple[float, float]:
    """The percentile interval (``ci``%) of the mean of a ``Q × R`` matrix of per-question values over questions
    and repeats (:func:`two_level_means`, generator ``numpy.random.default_rng(seed)``)."""
    if values.size == 0:
        raise ValueError("no question has a value in every repeat")
    return percentile_interval(two_level_means(values, np.random.default_rng(seed), resamples), ci)


def summarise_repeats(runs: Sequence[Sequence[Mapping[str, Any]]], k: int | None = None, ci: float = CI,
                      resamples: int = RESAMPLES, seed: int = SEED) -> dict[str, Any]:
    """The aggregates of a repeated run (module docstring) from each repeat's prediction records, in seed order.

    Returns ``n_repeats``, ``n_paired`` (questions judged in every repeat), ``k``, ``ci``; ``scores``: per
    registered metric of one run ``{"runs": [value per repeat], "mean", "sd", "interval": [low, high] | None}``
    (``mean`` and ``sd`` ``None`` when a repeat has no value); per metric over repeats (``pass@k`` …, its key
    with the number: ``pass@5``) ``{"value", "interval"}``; ``stability`` (mean over questions) and
    ``stability_by_question``; ``flipping`` (the ids of questions whose answer set differs between repeats)."""
    n = len(runs)
    k = check_k(n if k is None else k, n)
    questions = repeated_questions(runs)
    summaries = [summarise(run) for run in runs]
    scores = {}
    for metric in metric_list():
        values = [summary.get(metric.key) for summary in summaries]
        if all(value is None for value in values) and metric.optional:
            continue
        present = [value for value in values if value is not None]
        known = len(present) == len(values)
        matrix = value_matrix(runs, metric)[1] if known and metric.averages_field else None
        scores[metric.key] = {
            "runs": values, "mean": statistics.fmean(present) if known else None,
            "sd": (statistics.stdev(present) if n > 1 else 0.0) if known else None,
            "interval": list(two_level_interval(matrix, ci, resamples, seed)) if matrix is not None and matrix.size
            else None}
    over_repeats = {}
    for metric in metric_list(over_repeats=True):
        over = metric.over_repeats
        assert over is not None  # metric_list(over_repeats=True) lists only the metrics that have one
        per_question = over(questions, k)
        over_repeats[metric.at(k)] = {
            "value": statistics.fmean(per_question) if per_question else None,
            "interval": list(bootstrap_ci(per_question, ci, resamples, seed)) if per_question else None}
    stability = {q.id: q.stability() for q in questions}
    return {"n_repeats": n, "n_paired": len(questions), "k": k, "ci": ci, "interval_method":
            f"two-level bootstrap over questions and repeats ({resamples} resamples, seed {seed})",
            "scores": scores, **over_repeats,
            "stability": statistics.fmean(stability.values()) if stability else None,
            "stability_by_question": stability, "flipping": [key for key, share in stability.items() if share < 1]}


@dataclass(frozen=True)
class RepeatedComparison:
    """:func:`paired_repeats` of repeated runs ``a`` and ``b``: per metric the mean difference ``b − a`` with its
    paired two-level interval, and the share of paired questions whose majority answer set differs."""

    a: str
    b: str
    n: int
    repeats: tuple[int, int]
    differences: dict[str, dict[str, Any]]
    majority_differs: float
    ci: float

    def significant(self, metric: str) -> bool:
        """Whether the difference of ``metric`` is distinguishable from the spread: its interval excludes 0."""
        low, high = self.differences[metric]["interval"]
        return low > 0 or high < 0

    def summary(self) -> str:
        """A few lines: the paired questions, the intervals (percentage points), the majority answers."""
        lines = [f"paired over questions and repeats on {self.n} questions ({self.b} minus {self.a}; "
                 f"{self.repeats[0]} and {self.repeats[1]} repeats)"]
        for key, diff in self.differences.items():
            low, high = diff["interval"]
            verdict = "beyond" if self.significant(key) else "within"
            lines.append(f"  {key} difference {100 * diff['mean']:+.1f} points ({self.ci:g}% paired two-level "
                         f"bootstrap CI {100 * low:+.1f} to {100 * high:+.1f}: {verdict} the run-to-run spread)")
        lines.append(f"  majority answer set differs on {100 * self.majority_differs:.1f}% of the questions")
        return "\n".join(lines)


def paired_repeats(a: Sequence[Sequence[Mapping[str, Any]]], b: Sequence[Sequence[Mapping[str, Any]]],
                   a_name: str = "A", b_name: str = "B", metrics: Sequence[str] = ANSWER_METRICS, ci: float = CI,
                   resamples: int = RESAMPLES, seed: int = SEED) -> RepeatedComparison:
    """Compare two repeated runs (each a list of prediction records per repeat) paired by question: per metric
    the mean of ``b`` minus that of ``a`` over the questions judged in every repeat of both, with a paired
    two-level bootstrap interval (the same drawn questions for both, then each side's repeats drawn within each
    question: ``rng.integers(0, Q, (resamples, Q))``, then ``a``'s repeats, then ``b``'s, as
    :func:`two_level_means` draws them), and the share of those questions whose majority answer sets differ."""
    left, right = ({q.id: q for q in repeated_questions(side)} for side in (a, b))
    common = [key for key in left if key in right]
    if not common:
        raise ValueError(f"{a_name} and {b_name} share no question judged in every repeat")
    differences = {}
    for key in metrics:
        metric = next(m for m in metric_list() if m.key == key)
        pairs = [dict(zip(*value_matrix(side, metric), strict=True)) for side in (a, b)]
        shared = [q for q in common if q in pairs[0] and q in pairs[1]]
        matrices = [np.array([pair[q] for q in shared]) for pair in pairs]
        rng = np.random.default_rng(seed)
        picked = rng.integers(0, len(shared), size=(resamples, len(shared)))
        means = [_repeat_means(matrix, picked, rng, resamples) for matrix in matrices]
        differences[key] = {"mean": float(matrices[1].mean() - matrices[0].mean()),
                            "interval": list(percentile_interval(means[1] - means[0], ci))}
    differs = sum(left[q].answers[left[q].majority()] != right[q].answers[right[q].majority()] for q in common)
    return RepeatedComparison(a_name, b_name, len(common), (len(a), len(b)), differences, differs / len(common), ci)

