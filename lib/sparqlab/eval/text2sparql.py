"""The TEXT2SPARQL challenge's official metric, in our own code: what its client's ``evaluate`` computes.

The client (PyPI ``text2sparql-client``, commands ``ask``/``query``/``evaluate``) scores a question by turning
both SPARQL JSON results into a ``{value: relevance}`` dict and handing them to trec_eval (``pytrec_eval``) as a
run and its relevance judgements:

* **flattening** (:func:`flatten_result`): the ``value`` of every binding of every projected variable, IRIs and
  literal lexical forms alike (no datatype, no language tag, no row or column), each with relevance 1; an ASK
  result is the single key ``"true"`` with relevance 1 (true) or 0 (false).
* **set measures** (:func:`official_scores`, trec_eval's ``set_P``, ``set_recall``, ``set_F`` with beta 1):
  retrieved = the run's keys, relevant = the judged keys with relevance >= 1, hits = their intersection;
  ``P = hits/|retrieved|`` (0 when nothing is retrieved), ``R = hits/|relevant|`` (0 when nothing is relevant),
  ``F = 2PR/(P+R)`` when there is a hit, else 0.
* **nDCG** (:func:`ndcg`, trec_eval's ``ndcg``) for questions flagged ``RESULT_ORDER_MATTERS``: the run is ranked
  by score, ties broken by *descending* value (trec_eval's ``comp_sim_docno``); since every flattened value has
  score 1, that ranking is the values in reverse byte order, not the order the query returned them in.
  ``DCG = sum_i gain_i / log2(i + 1)`` over ranks ``i = 1..`` with gain = relevance, divided by the ideal DCG of
  the relevant values (0 when there are none).
* **means** (:func:`summarise_official`): macro averages of set_P, set_recall, set_F over every question, and the
  client's combined ``set_F_ndcg``, which averages nDCG for order-sensitive questions and set_F for the rest.

A question whose gold set is empty gets no measures from pytrec_eval and is left out of the means
(:func:`sparqlab.runs.text2sparql.score_answers` marks it ``scored: false``).

Cases where it differs from our default set F1 (:mod:`sparqlab.eval.metrics`), all on purpose of the challenge:
an empty gold set is not scored (ours: 1 for an empty prediction); an ASK whose gold is false has no relevant value, so every prediction scores
0; a predicted ASK *false* still retrieves the key ``"true"`` and so scores 1 against a true gold; values of
every projected variable count (a query selecting ``?x ?label`` retrieves labels too, halving precision); no
normalisation (``"1.0"`` and ``"1"`` differ; an IRI and its label differ).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from sparqlab.kg.results import QueryResult

ORDER_METRIC = "ndcg"
"""The client's default ``--order_metric`` for ``RESULT_ORDER_MATTERS`` questions."""


def flatten_result(result: QueryResult | Mapping[str, Any] | None) -> dict[str, int]:
    """A query result as the client's ``{value: relevance}`` dict; ``None`` (no query, or it failed: the client
    gets an empty result then) is ``{}``. Accepts a :class:`QueryResult` or a SPARQL JSON results document."""
    if result is None:
        return {}
    if isinstance(result, QueryResult):
        result = result.to_json()
    if "boolean" in result:
        return {"true": 1 if result["boolean"] else 0}
    flat: dict[str, int] = {}
    bindings = result.get("results", {}).get("bindings", [])
    for var in result.get("head", {}).get("vars", []):
        for binding in bindings:
            if var in binding:
                flat[binding[var]["value"]] = 1
    return flat


def gold_relevance(gold_answers: Iterable[str], answer_form: str) -> dict[str, int]:
    """A question's gold answers (:func:`sparqlab.data.ck25.gold_from_result_set`) back as the official
    judgements: ASK ``["true"]``/``["false"]`` is ``{"true": 1}``/``{"true": 0}``, else every value with 1."""
    answers = list(gold_answers)
    if answer_form == "ask":
        return {"true": 1 if answers == ["true"] else 0}
    return dict.fromkeys(answers, 1)


@dataclass(frozen=True)
class OfficialScore:
    """One question's official scores; ``ndcg`` only for order-sensitive questions."""

    set_P: float  # noqa: N815 - the client's measure names
    set_recall: float
    set_F: float  # noqa: N815
    ndcg: float | None = None

    def to_json(self) -> dict[str, float]:
        return {k: v for k, v in asdict(self).items() if v is not None}


def _ranking(run: Mapping[str, float]) -> list[str]:
    """trec_eval's ranking: score descending, ties by descending value in byte order (``strcmp``)."""
    by_value = sorted(run, key=lambda value: value.encode("utf-8"), reverse=True)
    return sorted(by_value, key=lambda value: -float(run[value]))


def ndcg(run: Mapping[str, float], judged: Mapping[str, int]) -> float:
    """trec_eval's nDCG of a run (``{value: score}``) against judgements (``{value: relevance}``)."""
    gains = [max(0, judged.get(value, 0)) for value in _ranking(run)]
    dcg = sum(gain / math.log2(rank + 2) for rank, gain in enumerate(gains) if gain)
    ideal_gains = sorted((r for r in judged.values() if r > 0), reverse=True)
    ideal = sum(gain / math.log2(rank + 2) for rank, gain in enumerate(ideal_gains))
    return dcg / ideal if ideal > 0 else 0.0


def official_scores(run: Mapping[str, float], judged: Mapping[str, int], order_matters: bool = False) -> OfficialScore:
    """set_P, set_recall, set_F (and nDCG if ``order_matters``) of one question, as trec_eval computes them."""
    relevant = {value for value, relevance in judged.items() if relevance >= 1}
    hits = len(relevant.intersection(run))
    precision = hits / len(run) if run else 0.0
    recall = hits / len(relevant) if relevant else 0.0
    f = 2 * precision * recall / (precision + recall) if hits else 0.0
    return OfficialScore(precision, recall, f, ndcg(run, judged) if order_matters else None)


def summarise_official(scores: Mapping[str, OfficialScore]) -> dict[str, Any]:
    """Macro averages as the client's ``average`` entry: ``set_P``, ``set_recall``, ``set_F`` over all questions,
    ``ndcg`` over the order-sensitive ones and ``set_F_ndcg``, the client's combined score.

    ``set_F_ndcg`` reproduces the client exactly, including a quirk: it averages over the per-question entries
    (nDCG where order matters, else set_F) *and* its own ``average`` entry, which by then holds the mean nDCG of
    the order-sensitive questions, so the mean has n + 1 terms. ``set_F_ndcg_per_question`` is the plain mean over
    the n questions.
    """
    if not scores:
        return {"n": 0}
    values = list(scores.values())
    summary: dict[str, Any] = {"n": len(values)}
    for measure in ("set_P", "set_recall", "set_F"):
        summary[measure] = statistics.fmean(getattr(s, measure) for s in values)
    ordered = [s.ndcg for s in values if s.ndcg is not None]
    if ordered:
        summary[ORDER_METRIC] = statistics.fmean(ordered)
        combined = [s.ndcg if s.ndcg is not None else s.set_F for s in values]
        summary["set_F_ndcg_per_question"] = statistics.fmean(combined)
        summary["set_F_ndcg"] = statistics.fmean([*combined, summary[ORDER_METRIC]])
    return summary


OFFICIAL_METRIC = "text2sparql"
"""A question whose ``metadata["official_metric"]`` is this is scored by the runner with the challenge's metric too:
its record's ``scores`` gain ``text2sparql`` (set_F) and, where order matters, ``text2sparql_ndcg``, and
``metrics.json`` their means (``method_scores``), so sweeps and tables report the official number."""


def official_question_scores(question: Any, result: QueryResult | None, gold: Iterable[str] | None) -> dict[str, float]:
    """The official per-question scores of a run's final result (``{}`` for a question of another benchmark, or
    one the client leaves unscored: no gold, or an empty gold set)."""
    if question.metadata.get("official_metric") != OFFICIAL_METRIC or not gold:
        return {}
    judged = gold_relevance(gold, question.answer_form)
    order_matters = bool(question.metadata.get("order_matters"))
    score = official_scores(flatten_result(result), judged, order_matters)
    return {OFFICIAL_METRIC: score.set_F, **({f"{OFFICIAL_METRIC}_ndcg": score.ndcg} if order_matters else {})}
