"""Answer-set metrics as defined in the SAGA paper: per-question set F1, exact match, macro averages, empty rate.

For a question with predicted answer set Â and gold set A* (both normalised by
:func:`sparqlab.eval.normalise_answer`)::

    F1 = 2|Â ∩ A*| / (|Â| + |A*|)        EM = 1[F1 = 1] = 1[Â = A*]

Edge cases, chosen so that EM = 1[Â = A*] holds everywhere:

* both sets empty → F1 = 1 (the prediction reproduces an empty gold answer exactly). Benchmarks rarely keep
  such questions; when they do, execution-based scoring counts them as correct, as every execution-based paper
  does.
* exactly one set empty → F1 = 0 (precision or recall is undefined, the other is 0).
* ASK answers are the one-element sets {"true"} / {"false"}, so a wrong boolean scores 0 and a right one 1.
* a missing prediction (no query, or it failed to execute) is scored as the empty set (``empty`` is true).

The empty-result rate is the SAGA paper's (Experiments, "Metrics"): "the proportion of generated queries that
return no answer from the SPARQL endpoint" — over the questions that *have* a final query (one that fails to
execute returns no answer, so it counts as empty). Questions without a final query are a separate
``no_query_rate``; ``empty_rate_all`` is the share of all questions without answers (the workbench's earlier
``empty_rate``). Records that do not say whether a query was generated (no ``predicted_sparql`` key, e.g. answer
files) can only give the rate over all questions.

Every method is scored by :func:`score_prediction` and runs are summarised by :func:`summarise`, so all numbers
in a comparison come from the same code.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from sparqlab.eval.normalise import answer_set
from sparqlab.kg.results import Term

COST_FIELDS = ("model_calls", "tokens", "latency_s")
"""Per-question cost fields a run record may carry; :func:`summarise` reports their mean per question."""


@dataclass(frozen=True)
class SetScore:
    """Precision, recall and F1 of one predicted answer set against the gold set."""

    precision: float
    recall: float
    f1: float

    @property
    def em(self) -> bool:
        """Exact match: the two normalised sets are equal."""
        return self.f1 == 1.0


def set_scores(pred: Iterable[Any] | None, gold: Iterable[Any]) -> SetScore:
    """Set precision/recall/F1 after normalising both sides (edge cases in the module docstring)."""
    return normalised_set_scores(answer_set(pred or ()), answer_set(gold))


def normalised_set_scores(predicted: AbstractSet[str], expected: AbstractSet[str]) -> SetScore:
    """:func:`set_scores` of two answer sets already normalised (:func:`sparqlab.eval.normalise.answer_set`), so
    a caller that needs the sets again normalises each once."""
    if not predicted and not expected:
        return SetScore(1.0, 1.0, 1.0)
    if not predicted or not expected:
        return SetScore(0.0, 0.0, 0.0)
    hits = len(predicted & expected)
    return SetScore(hits / len(predicted), hits / len(expected), 2 * hits / (len(predicted) + len(expected)))


def set_f1(pred: Iterable[Any] | None, gold: Iterable[Any]) -> float:
    """SAGA's per-question answer-set F1, ``2|Â∩A*| / (|Â|+|A*|)``, over normalised answers.

    ``pred`` and ``gold`` are iterables of answers: strings, numbers, booleans, :class:`~sparqlab.kg.results.Term`
    objects or SPARQL-JSON binding values. Duplicates and surface variants (``wd:Q42`` vs its full IRI,
    ``"1"^^xsd:integer`` vs ``"1.0"^^xsd:decimal``) collapse before counting. Unlike
    :func:`sparqlab.eval.row_f1` it ignores which row or column an answer came from.
    """
    return set_scores(pred, gold).f1


def check_answers(value: Any, name: str = "answers") -> list[Any] | None:
    """``value`` as an answer list, or ``ValueError`` saying what is wrong with it, element by element.

    An answer list is ``None`` (no answer obtained / no gold) or a list, tuple or set of strings, finite numbers,
    booleans or :class:`~sparqlab.kg.results.Term` objects. A bare string is refused (it would be scored letter
    by letter: ``"Alien"`` against ``["A","l","i","e","n"]`` gave F1 1.0), so is a dict, a nested list or a null
    element. Readers of answer files call it with the file and line in ``name``.
    """
    if value is None:
        return None
    if not isinstance(value, list | tuple | set | frozenset):
        raise ValueError(f"{name} must be a list of answers (or null), got {type(value).__name__} {value!r:.60}")
    for index, item in enumerate(value):
        if isinstance(item, float) and not math.isfinite(item):
            raise ValueError(f"{name}[{index}] is {item}, not an answer")
        if not isinstance(item, str | int | float | Term):  # bool is an int
            raise ValueError(f"{name}[{index}] must be a string, number or boolean, got {type(item).__name__} "
                             f"{item!r:.60}")
    return list(value)


def score_prediction(pred_answers: Iterable[Any] | None, gold_answers: Iterable[Any] | None) -> dict[str, Any]:
    """The per-question fields every run record carries: ``f1``, ``em``, ``empty``, ``precision``, ``recall``.

    ``pred_answers=None`` means no answer was obtained (no query, or execution failed): empty, and scored as
    the empty set. Raises ``ValueError`` without gold answers, since there is nothing to score against, and for
    a malformed answer list (:func:`check_answers`).
    """
    if gold_answers is None:
        raise ValueError("cannot score a prediction without gold answers (execute the gold SPARQL first)")
    predicted = answer_set(check_answers(pred_answers, "predicted answers") or ())
    return normalised_scores(predicted, answer_set(check_answers(gold_answers, "gold answers")))


def normalised_scores(predicted: AbstractSet[str], gold: AbstractSet[str]) -> dict[str, Any]:
    """:func:`score_prediction` of answer sets already normalised and checked (a missing prediction is the empty
    set: check_answers refused null items, so only an empty list normalises to an empty set)."""
    score = normalised_set_scores(predicted, gold)
    return {"f1": score.f1, "em": score.em, "empty": not predicted, "precision": score.precision,
            "recall": score.recall}


def binary_decisions(labels: Iterable[Any], decisions: Iterable[Any]) -> dict[str, float]:
    """Accuracy, precision, recall, F1, false-positive rate and decision rate (share decided positive) of binary
    decisions against labels (truthy = positive), with the confusion counts ``tp``/``fp``/``fn``/``tn``; an
    undefined ratio (nothing decided positive ...) is 0. The GGC paper's gate metrics (section 4.1)."""
    y, g = [bool(v) for v in labels], [bool(v) for v in decisions]
    if len(y) != len(g):
        raise ValueError(f"{len(y)} labels but {len(g)} decisions")
    tp = sum(a and b for a, b in zip(y, g, strict=True))
    fp = sum(b and not a for a, b in zip(y, g, strict=True))
    fn = sum(a and not b for a, b in zip(y, g, strict=True))
    tn = len(y) - tp - fp - fn
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return {"accuracy": (tp + tn) / len(y) if y else 0.0, "precision": precision, "recall": recall,
            "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
            "fpr": fp / (fp + tn) if fp + tn else 0.0, "decision_rate": (tp + fp) / len(y) if y else 0.0,
            "tp": tp, "fp": fp, "fn": fn, "tn": tn}


def summarise(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Macro averages over per-question records (as written to ``predictions.jsonl``).

    Returns ``n``, ``f1``, ``em``, the rates of :func:`empty_rates` (``empty_rate`` over generated queries,
    ``no_query_rate``, ``empty_rate_all``), plus ``precision``/``recall`` and the mean per question of each cost
    field in :data:`COST_FIELDS` when every record has it. A cost given as a dict (e.g. model calls by kind) counts its ``total`` entry, else the sum of
    its counts.
    """
    records = list(records)
    if not records:
        return {"n": 0}
    for number, record in enumerate(records):
        missing = [k for k in ("f1", "em", "empty") if k not in record]
        if missing:
            raise ValueError(
                f"record {number} (id {record.get('id')!r}) lacks {missing}; score it with score_prediction first"
            )
    summary: dict[str, Any] = {
        "n": len(records),
        "f1": statistics.fmean(float(r["f1"]) for r in records),
        "em": statistics.fmean(float(r["em"]) for r in records),
        **empty_rates(records),
    }
    for key in ("precision", "recall", *COST_FIELDS):
        if all(r.get(key) is not None for r in records):
            summary[key] = statistics.fmean(cost_amount(r[key]) for r in records)
    return summary


def empty_rates(records: list[Mapping[str, Any]]) -> dict[str, float | None]:
    """``empty_rate``: share of the generated queries (records with a ``predicted_sparql``) that returned no
    answer (SAGA's definition; ``None`` when no question has a query); ``no_query_rate``: share of questions
    without a final query; ``empty_rate_all``: share of all questions without answers. Without
    ``predicted_sparql`` keys only the last is known, and ``empty_rate`` falls back to it."""
    every = statistics.fmean(float(r["empty"]) for r in records)
    if not all("predicted_sparql" in r for r in records):
        return {"empty_rate": every, "no_query_rate": None, "empty_rate_all": every}
    generated = [r for r in records if r["predicted_sparql"]]
    return {"empty_rate": statistics.fmean(float(r["empty"]) for r in generated) if generated else None,
            "no_query_rate": 1.0 - len(generated) / len(records), "empty_rate_all": every}


def cost_amount(value: Any) -> float:
    """A cost given as a number or as a dict by kind: its ``total`` entry, else the sum of its numeric entries
    (flags such as ``"estimated": True`` are not counts), as :func:`sparqlab.llm.aggregate_usage` reads it."""
    if not isinstance(value, Mapping):
        return float(value)
    if "total" in value:
        return float(value["total"])
    return float(sum(v for v in value.values() if isinstance(v, int | float) and not isinstance(v, bool)))
