"""The TEXT2SPARQL challenge's official metric, in our own code: what its organisers' evaluation computes.

The organisers score a system by turning both SPARQL JSON results into a ``{value: relevance}`` dict (their
client's ``query`` step writes these as *result-set files*) and handing them to trec_eval (``pytrec_eval``) as a
run and its relevance judgements (their client's ``evaluate`` step):

* **flattening** (:func:`flatten_result`): the ``value`` of every binding of every projected variable, IRIs and
  literal lexical forms alike (no datatype, no language tag, no row or column), each with relevance 1; an ASK
  result is the single key ``"true"`` with relevance 1 (true) or 0 (false). A failed or missing query is ``{}``.
* **set measures** (:func:`official_scores`, trec_eval's ``set_P``, ``set_recall``, ``set_F`` with beta 1):
  retrieved = the run's keys, relevant = the judged keys with relevance >= 1, hits = their intersection;
  ``P = hits/|retrieved|`` (0 when nothing is retrieved), ``R = hits/|relevant|`` (0 when nothing is relevant),
  ``F = 2PR/(P+R)`` when there is a hit, else 0.
* **nDCG** (:func:`ndcg`, trec_eval's ``ndcg``) for questions flagged ``RESULT_ORDER_MATTERS``: the run is ranked
  by score, ties broken by *descending* value (trec_eval's ``comp_sim_docno``); since every flattened value has
  score 1, that ranking is the values in reverse byte order, not the order the query returned them in.
* **one question in several languages**: each language is its own question (qname ``prefix:N-lang``), scored
  and averaged on its own; the means run over every qname of every language, and per language.
* **means** (:func:`summarise_official`), as published: the mean of every measure over *all* questions, a
  question whose true result set is empty counted as 0 (the published files give it 0 everywhere); nDCG over the
  order-sensitive ones; and the combined ``set_F_ndcg``, whose quirks :func:`summarise_official` documents.

Two conventions (:data:`CONVENTIONS`; docs/metrics.md has examples from the published files):

* ``text2sparql`` reproduces the published numbers exactly, including what a careful reader would not expect: an
  empty true set scores 0 for every system, an ASK whose answer is false has no relevant value (so every system
  scores 0), a predicted ASK *false* still retrieves the key ``"true"`` (so it scores 1 against a true answer),
  and ``set_F_ndcg`` averages one term more than there are questions.
* ``text2sparql-strict`` keeps the set measures over flattened values but scores those cases as they read: an
  empty true set is answered correctly (1) by an empty result only, an ASK is right (1) when the booleans agree,
  and every mean is the plain mean over the questions.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from sparqlab.core.typed import Range, check_range, coerce
from sparqlab.eval.metrics import register_metric
from sparqlab.kg.results import QueryResult

if TYPE_CHECKING:
    from sparqlab.eval.assess import Outcome

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
    """A question's gold answers (:func:`sparqlab.text2sparql.editions.gold_from_result_set`) back as the official
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


OFFICIAL_METRIC = "text2sparql"
"""The published convention's name (``--metric text2sparql``). A question whose ``metadata["official_metric"]``
is this is scored with it in every run too: the official measures are registered metrics
(:data:`OFFICIAL_KEYS`, end of this module), so its record's ``scores`` gain ``text2sparql`` (set_F),
``text2sparql_set_P``, ``text2sparql_set_recall`` and, where order matters, ``text2sparql_ndcg``, and
``metrics.json`` their published means (as registered metrics, and as ``method_scores``' plain means)."""

STRICT_METRIC = "text2sparql-strict"
"""The convention a careful reader expects (module docstring)."""

CONVENTIONS = (OFFICIAL_METRIC, STRICT_METRIC)


def check_convention(convention: str) -> bool:
    """``True`` for the strict convention; an unknown name is an error naming both."""
    if convention not in CONVENTIONS:
        raise ValueError(f"unknown TEXT2SPARQL convention {convention!r}; use {' or '.join(CONVENTIONS)}")
    return convention == STRICT_METRIC


def official_scores(run: Mapping[str, float], judged: Mapping[str, int], order_matters: bool = False, *,
                    ask: bool = False, convention: str = OFFICIAL_METRIC) -> OfficialScore:
    """set_P, set_recall, set_F (and nDCG if ``order_matters``) of one question under ``convention``.

    ``text2sparql``: as trec_eval computes them (so an empty ``judged`` scores 0, and for an ASK ``{"true": 0}``
    retrieves the key ``"true"``). ``text2sparql-strict``: an ASK (``ask``) scores 1 on every measure when the
    predicted boolean equals the judged one, else 0; a question with nothing relevant scores 1 for an empty run
    and 0 otherwise; everything else as ``text2sparql``."""
    relevant = {value for value, relevance in judged.items() if relevance >= 1}
    if check_convention(convention):
        verdict = None
        if ask:
            verdict = set(run) == {"true"} and bool(run["true"]) == bool(judged.get("true"))
        elif not relevant:
            verdict = not run
        if verdict is not None:
            value = float(verdict)
            return OfficialScore(value, value, value, value if order_matters else None)
    hits = len(relevant.intersection(run))
    precision = hits / len(run) if run else 0.0
    recall = hits / len(relevant) if relevant else 0.0
    f = 2 * precision * recall / (precision + recall) if hits else 0.0
    return OfficialScore(precision, recall, f, ndcg(run, judged) if order_matters else None)


SET_MEASURES = ("set_P", "set_recall", "set_F")
COMBINED = f"set_F_{ORDER_METRIC}"


def language_of(qname: str) -> str | None:
    """The language of a challenge qname (``db25:14-es`` -> ``es``); ``None`` for an id without one."""
    head, _, language = qname.rpartition("-")
    return language if head and language.isalpha() else None


def _combined(scores: Iterable[OfficialScore]) -> list[float]:
    """The client's combined score per question: nDCG where order matters, else set_F."""
    return [s.ndcg if s.ndcg is not None else s.set_F for s in scores]


def _means(scores: list[OfficialScore], strict: bool, trec_mean: bool, extra_term: bool) -> dict[str, Any]:
    """One block of means (see :func:`summarise_official`)."""
    import numpy as np

    mean = (lambda values: float(np.mean(values))) if trec_mean and not strict else statistics.fmean
    block: dict[str, Any] = {"n": len(scores)}
    for measure in SET_MEASURES:
        block[measure] = mean([getattr(s, measure) for s in scores])
    ordered = [s.ndcg for s in scores if s.ndcg is not None]
    if ordered:
        block[ORDER_METRIC] = mean(ordered)
        combined = _combined(scores)
        block[COMBINED] = statistics.fmean(combined + ([block[ORDER_METRIC]] if extra_term and not strict else []))
    return block


def summarise_official(scores: Mapping[str, OfficialScore], *, convention: str = OFFICIAL_METRIC,
                       edition: int = 2026) -> dict[str, Any]:
    """The means of per-question scores (keyed by qname) as the organisers publish them, and per language.

    Returns ``{"n", "set_P", "set_recall", "set_F", ["ndcg", "set_F_ndcg"], "languages": {lang: {...}}}``
    (``languages`` only when the qnames carry two or more). Under ``text2sparql``:

    - the overall set measures and nDCG are trec_eval's aggregate (numpy's mean, to the last bit), over every
      question of every language;
    - ``set_F_ndcg`` averages nDCG (order-sensitive questions) or set_F (the rest) *and* the overall mean nDCG
      itself, one term more than there are questions (the client appends its running ``average`` entry);
    - a language's means are plain means over its questions; its ``set_F_ndcg`` has that extra term (the
      language's mean nDCG) in the ``edition`` 2026 files and none in the 2025 ones.

    ``text2sparql-strict``: plain means everywhere, ``set_F_ndcg`` the mean over the questions.
    """
    strict = check_convention(convention)
    if not scores:
        return {"n": 0}
    summary = _means(list(scores.values()), strict, trec_mean=True, extra_term=True)
    by_language: dict[str, list[OfficialScore]] = {}
    for qname, score in scores.items():
        by_language.setdefault(language_of(qname) or "", []).append(score)
    if len(by_language) > 1 and "" not in by_language:
        summary["languages"] = {language: _means(group, strict, trec_mean=False, extra_term=edition >= 2026)
                                for language, group in by_language.items()}
    return summary


def official_question_scores(question: Any, outcome: Outcome) -> dict[str, float]:
    """The published convention's per-question scores of a run's final result, as the registered official
    metric's ``outcome`` scorer (:func:`sparqlab.eval.assess.assess` calls it for every question): ``{}`` for a
    question of another benchmark or without gold; an empty gold set scores 0, as in the published files."""
    if question.metadata.get("official_metric") != OFFICIAL_METRIC or outcome.gold_answers is None:
        return {}
    judged = gold_relevance(outcome.gold_answers, question.answer_form)
    order_matters = bool(question.metadata.get("order_matters"))
    score = official_scores(flatten_result(outcome.result), judged, order_matters, ask=question.answer_form == "ask")
    return record_scores(score)


OFFICIAL_KEYS = {"set_P": f"{OFFICIAL_METRIC}_set_P", "set_recall": f"{OFFICIAL_METRIC}_set_recall",
                 "set_F": OFFICIAL_METRIC, ORDER_METRIC: f"{OFFICIAL_METRIC}_{ORDER_METRIC}",
                 COMBINED: f"{OFFICIAL_METRIC}_{COMBINED}"}
"""The official measures (the organisers' names, in the leaderboard's column order) and their keys in the metric
registry, ``metrics.json`` and (all but the combined one, which is corpus-level) a run record's ``scores``."""


def record_scores(score: OfficialScore) -> dict[str, float]:
    """One question's official scores as a run record's ``scores`` keys (:data:`OFFICIAL_KEYS`)."""
    return {OFFICIAL_KEYS["set_F"]: score.set_F, OFFICIAL_KEYS["set_P"]: score.set_P,
            OFFICIAL_KEYS["set_recall"]: score.set_recall,
            **({OFFICIAL_KEYS[ORDER_METRIC]: score.ndcg} if score.ndcg is not None else {})}


SCORE_RANGE = Range(ge=0, le=1)
"""Every official score is a fraction."""


def score_from_record(scores: Mapping[str, float]) -> OfficialScore | None:
    """The official scores a run record carries (:func:`record_scores`), or ``None`` when it has none; a
    ``ValueError`` naming the key when one is missing, not a number or outside [0, 1] (an edited or damaged
    record is never averaged into a row)."""
    if OFFICIAL_METRIC not in scores:
        return None
    keys = [OFFICIAL_KEYS[measure] for measure in (*SET_MEASURES, ORDER_METRIC)]
    values = []
    for key in keys:
        value = coerce(scores.get(key), float | None if key == keys[-1] else float, f"scores.{key}")
        check_range(value, SCORE_RANGE, f"scores.{key}")
        values.append(value)
    return OfficialScore(*values)


def official_mean(measure: str) -> Callable[[Sequence[Mapping[str, Any]]], float | None]:
    """The run's value of an official ``measure``: the published mean (:func:`summarise_official`) over the
    records that carry official scores, ``None`` when none does (a run of another benchmark)."""
    def aggregate(records: Sequence[Mapping[str, Any]]) -> float | None:
        scores = {str(record.get("id")): score for record in records
                  if (score := score_from_record(record.get("scores") or {})) is not None}
        return summarise_official(scores).get(measure) if scores else None

    aggregate.__qualname__ = f"official_mean({measure!r})"
    return aggregate


for _measure, _key in OFFICIAL_KEYS.items():
    register_metric(_key, f"TEXT2SPARQL {_measure}", official_mean(_measure),
                    field=None if _measure == COMBINED else f"scores.{_key}",
                    outcome=official_question_scores if _key == OFFICIAL_METRIC else None,
                    judged=False, optional=True,
                    views=frozenset({"show"}) if _measure in ("set_F", COMBINED) else frozenset(),
                    description=f"the TEXT2SPARQL challenge's {_measure}, published convention (mean over every "
                                "question, an empty gold set scoring 0)")
