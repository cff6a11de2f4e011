"""One question's assessment: every per-question score field a run's prediction line carries, in one call.

A run (and the TEXT2SPARQL endpoint) hands :func:`assess` the question and its :class:`Outcome` (the final query,
its raw result with rows in order, the answers, the gold answers and where they came from) and writes what comes
back. The fields come from the metric registry (:data:`sparqlab.eval.metrics.METRICS`): each registered metric's
own field (``f1``, ``em``, ``empty``, ``precision``, ``recall``, a plug-in's ``score=``), the ``scores`` entries of
every metric that scores the whole outcome (``outcome=``, e.g. TEXT2SPARQL's official set_F and nDCG, which need
the result's rows and the answer form), the error type (:func:`sparqlab.eval.errors.categorise`) and both
queries' complexity (:func:`sparqlab.eval.complexity.query_complexity`). A generation-only line (``gold_source``
:data:`~sparqlab.eval.metrics.NOT_EXECUTED`) is not scored: its score fields are null.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sparqlab.eval.complexity import query_complexity
from sparqlab.eval.errors import score_and_categorise
from sparqlab.eval.metrics import NOT_EXECUTED, metric_list
from sparqlab.kg.results import QueryResult


@dataclass(frozen=True)
class Outcome:
    """What became of one question: the final query (``None``: none), its raw ``result`` (rows in the order the
    engine returned them; ``None`` when it did not run), the normalised ``predicted_answers`` (``None``: no answer
    obtained), the ``error_category`` (why there is no good answer), the gold answers and their ``gold_source``
    (``given``, ``gold_sparql``, ``error: ...``, :data:`~sparqlab.eval.metrics.NOT_EXECUTED`)."""

    predicted_sparql: str | None
    result: QueryResult | None
    predicted_answers: list[str] | None
    error_category: str | None
    gold_answers: list[str] | None
    gold_source: str | None

    @property
    def executed(self) -> bool:
        """Whether the run executed and scores (not a generation-only line)."""
        return self.gold_source != NOT_EXECUTED


def score_fields() -> dict[str, str]:
    """The per-question score fields of a prediction line, with their meaning: each registered metric's own
    top-level field (``f1``, ``em``, ``empty``, ``precision``, ``recall``, a plug-in's), in registration order."""
    fields: dict[str, str] = {}
    for metric in metric_list():
        if metric.field and "." not in metric.field:
            fields.setdefault(metric.field, metric.description or metric.label)
    return fields


def score_values(scores: Mapping[str, Any] | None) -> dict[str, Any]:
    """A prediction line's score fields from ``scores`` (:func:`sparqlab.eval.score_prediction`); every one null
    for a question that was not scored (``None``: a generation-only run)."""
    return {key: (scores or {}).get(key) for key in score_fields()}


def outcome_scores(question: Any, outcome: Outcome) -> dict[str, Any]:
    """The ``scores`` entries of every registered metric that scores the whole outcome, in registration order
    (``{}`` for a line that is not scored)."""
    if not outcome.executed:
        return {}
    entries: dict[str, Any] = {}
    for metric in metric_list():
        if metric.outcome is not None:
            entries.update(metric.outcome(question, outcome))
    return entries


def assess(question: Any, outcome: Outcome) -> dict[str, Any]:
    """Every per-question score field of ``question``'s prediction line (module docstring): the registered score
    fields, ``error_type``, ``scores`` (the outcome metrics' entries), ``gold_complexity`` and
    ``predicted_complexity``. ``question`` is a :class:`sparqlab.data.question.Question` (its ``gold_sparql``,
    ``answer_form`` and ``metadata`` are read)."""
    scores, error_type = None, None
    if outcome.executed:
        scores, error_type = score_and_categorise(outcome.predicted_sparql, outcome.predicted_answers,
                                                  outcome.error_category, outcome.gold_answers,
                                                  question.gold_sparql, outcome.gold_source)
    return {**score_values(scores), "error_type": error_type, "scores": outcome_scores(question, outcome),
            "gold_complexity": query_complexity(question.gold_sparql),
            "predicted_complexity": query_complexity(outcome.predicted_sparql)}
