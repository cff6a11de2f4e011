"""Answer-set metrics as defined in the SAGA paper: per-question set F1, exact match, macro averages, empty rate.

For a question with predicted answer set Â and gold set A* (both normalised by
:func:`sparqlab.eval.normalise_answer`)::

    F1 = 2|Â ∩ A*| / (|Â| + |A*|)        EM = 1[F1 = 1] = 1[Â = A*]

Edge cases of one pair of sets (:func:`set_scores`; EM = 1[Â = A*] holds everywhere):

* both sets empty → F1 = 1: the two sets are equal. Whether such a *question* counts is the judging rule's
  business (below): by default it does not.
* exactly one set empty → F1 = 0 (precision or recall is undefined, the other is 0).
* ASK answers are the one-element sets {"true"} / {"false"}, so a wrong boolean scores 0 and a right one 1.

Judging a question (:func:`judged_scores`, the one rule behind every F1 / EM mean: ``summarise``, the agent and
GGC tables, sweeps, ``runs list``, plots). A failure never scores as a match:

* a question whose gold query fails or returns nothing is a **gold error**: counted (``n_gold_errors``), reported,
  and left out of the F1 / EM means (rule ``exclude``, the default: SAGA's F1 2|Â∩A*|/(|Â|+|A*|) is undefined for
  ∅ / ∅, and GGC's protocol calls such a gold query a ground-truth error, not a success);
* a prediction without answers (no query, a query that failed, a run out of budget) is wrong whatever the gold;
* rule ``count`` scores a gold error as a wrong answer (GGC's query-level accuracy on MCQA, whose Table 3 counts
  ground-truth errors among the generator's errors); rule ``spinach`` is SPINACH's convention, ∅ = ∅ is a match
  for a query that ran and returned nothing (for re-scoring SPINACH's released rows; a failed gold query is still
  left out).

The empty-result rate is the SAGA paper's (Experiments, "Metrics"): "the proportion of generated queries that
return no answer from the SPARQL endpoint" — over the questions that *have* a final query (one that fails to
execute returns no answer, so it counts as empty). Questions without a final query are a separate
``no_query_rate``; ``empty_rate_all`` is the share of all questions without answers (the workbench's earlier
``empty_rate``). Records that do not say whether a query was generated (no ``predicted_sparql`` key, e.g. answer
files) can only give the rate over all questions.

Every method is scored by :func:`score_prediction` and runs are summarised by :func:`summarise`, so all numbers
in a comparison come from the same code.

Each metric is declared once, in :data:`METRICS` (:func:`register_metric`: key, per-question value, aggregation,
direction, unit, label and where it is shown); the prediction lines' score fields, ``metrics.json``,
``runs list/show/compare``, ``sparqlab table``, ``sparqlab eval`` and the figures' axis labels all read it
(docs/adding-a-metric.md). The workbench's own are registered at the end of this module; a method package
registers its own (DeSQ's slot-averaged id EM and corpus BLEU), and so can any plug-in package.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from sparqlab.core.registry import Registry
from sparqlab.eval.normalise import answer_set
from sparqlab.kg.results import Term

COST_FIELDS = ("model_calls", "tokens", "latency_s")
"""Per-question cost fields a run record may carry; :func:`summarise` reports their mean per question."""

F1_KEY, EM_KEY, PRECISION_KEY, RECALL_KEY = "f1", "em", "precision", "recall"
"""The keys of the answer-set scores (registered at the end of this module), which are also the prediction line's
fields holding a question's scores. Every reader of those fields outside this module names them through these
names (or :data:`ANSWER_METRICS`, :data:`PRIMARY_METRIC`), so a rename is one edit and a grep finds every reader."""

EMPTY_RATE_KEY, NO_QUERY_RATE_KEY, EMPTY_RATE_ALL_KEY = "empty_rate", "no_query_rate", "empty_rate_all"
"""The keys of the three empty-result rates (:func:`empty_rates`)."""

ANSWER_METRICS = (F1_KEY, EM_KEY)
"""The per-question answer scores, in the order tables show them, whose means go through :func:`judged_frame`."""

PRIMARY_METRIC = F1_KEY
"""The metric a figure or table shows unless told otherwise: SAGA's answer-set F1, the score the papers lead with."""


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


def score_prediction(pred_answers: Iterable[Any] | None, gold_answers: Iterable[Any] | None,
                     rule: str = "exclude") -> dict[str, Any]:
    """The per-question fields every run record carries: ``f1``, ``em``, ``empty``, ``precision``, ``recall``.

    ``pred_answers=None`` means no answer was obtained (no query, or execution failed): empty, and wrong. An
    empty gold answer set is a gold error: ``f1`` / ``em`` / ``precision`` / ``recall`` are ``None`` (not judged)
    under the default ``rule`` (:data:`SCORING_RULES`). Raises ``ValueError`` without gold answers, since there is
    nothing to score against, and for a malformed answer list (:func:`check_answers`).
    """
    if gold_answers is None:
        raise ValueError("cannot score a prediction without gold answers (execute the gold SPARQL first)")
    predicted = check_answers(pred_answers, "predicted answers")
    gold = answer_set(check_answers(gold_answers, "gold answers") or [])
    return normalised_scores(None if predicted is None else answer_set(predicted), gold, rule)


NOT_JUDGED = dict.fromkeys((F1_KEY, EM_KEY, PRECISION_KEY, RECALL_KEY))
"""The scores of a question that is not judged (a gold error under the ``exclude`` rule, no gold at all)."""


def normalised_scores(predicted: AbstractSet[str] | None, gold: AbstractSet[str],
                      rule: str = "exclude") -> dict[str, Any]:
    """:func:`score_prediction` of answer sets already normalised and checked (``predicted=None``: no answer
    was obtained); the question is judged by :func:`judge`."""
    empty = not predicted
    score = judge(predicted, gold, rule=rule)
    scorers = {metric.key: metric.score for metric in metric_list() if metric.score is not None}
    if score is None:
        return {**NOT_JUDGED, "empty": empty, **dict.fromkeys(scorers)}
    return {F1_KEY: score.f1, EM_KEY: score.em, "empty": empty, PRECISION_KEY: score.precision,
            RECALL_KEY: score.recall, **{key: scorer(predicted, gold) for key, scorer in scorers.items()}}


SCORING_RULES = ("exclude", "count", "spinach")
"""How a question whose gold query fails or returns nothing (a gold error) enters F1 / EM means (module
docstring): ``exclude`` (default) leaves it out, ``count`` scores it wrong, ``spinach`` scores an executed query
with no answers as a match for an empty gold answer (SPINACH's ∅ = ∅; a failed gold query is left out)."""

NOT_EXECUTED = "not executed (generate_only)"
"""``gold_source`` of a generation-only run's records: nothing was executed, nothing is judged."""

_NO_SCORE = SetScore(0.0, 0.0, 0.0)
_MATCH = SetScore(1.0, 1.0, 1.0)


def check_rule(rule: str) -> str:
    """``rule`` if it is one of :data:`SCORING_RULES`, else ``ValueError`` naming them."""
    if rule not in SCORING_RULES:
        raise ValueError(f"unknown scoring rule {rule!r}; use one of {', '.join(SCORING_RULES)}")
    return rule


def judge(predicted: AbstractSet[str] | None, gold: AbstractSet[str] | None, gold_failed: bool = False,
          rule: str = "exclude") -> SetScore | None:
    """The scores of one question from normalised answer sets, ``None`` when it is not judged (left out of the
    means): a failed (``gold_failed``) or empty gold is a gold error, judged by ``rule``; ``predicted=None`` (no
    answer obtained) is wrong whatever the gold (module docstring)."""
    check_rule(rule)
    if gold_failed or not gold:
        if rule == "count":
            return _NO_SCORE
        if rule == "spinach" and not gold_failed and gold is not None:
            return _MATCH if predicted is not None and not predicted else _NO_SCORE
        return None
    if predicted is None:
        return _NO_SCORE
    return normalised_set_scores(predicted, gold)


def is_gold_error(gold_answers: Iterable[Any] | None, gold_source: str | None = None) -> bool:
    """Whether a question cannot be judged (``gold_error``): its gold query failed or returned nothing."""
    return gold_failed(gold_source) or not answer_set(gold_answers or ())


def gold_failed(gold_source: str | None) -> bool:
    """Whether a record's ``gold_source`` says its gold query failed (``error: <kind>: <message>``)."""
    return str(gold_source or "").startswith("error")


def is_gold_error_record(record: Mapping[str, Any]) -> bool:
    """:func:`is_gold_error` on a ``predictions.jsonl`` record, without categorising its prediction."""
    return is_gold_error(record.get("gold_answers"), record.get("gold_source"))


def _given(value: Any) -> Any:
    """A record field as given, ``None`` for a missing value (pandas fills absent cells with NaN)."""
    return None if isinstance(value, float) and math.isnan(value) else value


def judged_scores(record: Mapping[str, Any], rule: str = "exclude") -> tuple[float, bool] | None:
    """``(F1, EM)`` of one prediction line under ``rule`` (:data:`SCORING_RULES`), ``None`` when the question is
    not judged: the one rule every F1 / EM mean goes through (module docstring).

    A record with ``gold_answers`` is judged from its fields: a gold error by ``rule``, a missing prediction
    (``predicted_answers`` null) as wrong, otherwise its stored ``f1`` / ``em``. A question with no gold at all,
    or a generation-only line, is not judged. A record without a ``gold_answers`` field (a score file of
    another tool) is judged by its stored scores; without them it is not judged.
    """
    check_rule(rule)
    if "gold_answers" not in record:
        f1 = _given(record.get(F1_KEY))
        return None if f1 is None else (float(f1), bool(record.get(EM_KEY)))
    gold, source = _given(record.get("gold_answers")), _given(record.get("gold_source"))
    if source == NOT_EXECUTED or (gold is None and not gold_failed(source)):
        return None
    predicted = _given(record.get("predicted_answers"))
    if gold_failed(source) or not answer_set(gold):
        score = judge(None if predicted is None else answer_set(predicted), None if gold is None else set(),
                      gold_failed(source), rule)
        return None if score is None else (score.f1, score.em)
    if predicted is None:
        return 0.0, False
    f1 = _given(record.get(F1_KEY))
    return None if f1 is None else (float(f1), bool(record.get(EM_KEY)))


def binary_decisions(labels: Iterable[Any], decisions: Iterable[Any]) -> dict[str, float]:
    """Accuracy, precision, recall, F1, false-positive rate and trigger rate (share decided positive) of binary
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
            "fpr": fp / (fp + tn) if fp + tn else 0.0, "trigger_rate": (tp + fp) / len(y) if y else 0.0,
            "tp": tp, "fp": fp, "fn": fn, "tn": tn}


def summarise(records: Iterable[Mapping[str, Any]], rule: str = "exclude") -> dict[str, Any]:
    """Each registered metric (:data:`METRICS`) aggregated over the per-question records (as written to
    ``predictions.jsonl``), plus ``n`` and the mean per question of each cost field.

    Every record is judged by :func:`judged_scores` under ``rule``; the others (gold errors under ``exclude``,
    questions without gold) are left out of every answer metric (a metric declared ``judged=False``, such as a
    method's execution-free scores, reads every record). Returns ``n`` (judged questions), ``f1``, ``em``, the
    rates of :func:`empty_rates` (``empty_rate`` over generated queries, ``no_query_rate``, ``empty_rate_all``),
    ``precision``/``recall`` when every judged record has them, any other registered metric that has a value, and
    the mean per question of each cost field in :data:`COST_FIELDS` when every judged record has it. A cost given as
    a dict (e.g. model calls by kind) counts its ``total`` entry, else the sum of its counts.
    """
    records = list(records)
    judged = []
    for number, record in enumerate(records):
        if (score := judged_scores(record, rule)) is None:
            continue
        missing = [k for k in (*ANSWER_METRICS, "empty") if k not in record]
        if missing:
            raise ValueError(
                f"record {number} (id {record.get('id')!r}) lacks {missing}; score it with score_prediction first"
            )
        judged.append({**record, F1_KEY: score[0], EM_KEY: score[1]})  # as judged_records gives them
    summary: dict[str, Any] = {"n": len(judged)}
    for metric in metric_list():
        if not judged and metric.judged:
            continue
        value = metric.aggregate(judged if metric.judged else records)
        if value is not None or not metric.optional:
            summary[metric.key] = value
    for key in COST_FIELDS:
        if judged and all(r.get(key) is not None for r in judged):
            summary[key] = statistics.fmean(cost_amount(r[key]) for r in judged)
    return summary


def judged_records(records: Iterable[Mapping[str, Any]], rule: str = "exclude") -> list[dict[str, Any]]:
    """The records whose question is judged under ``rule``, each with ``f1`` / ``em`` replaced by
    :func:`judged_scores` (for per-question statistics: bootstrap intervals, paired tests)."""
    return [{**record, F1_KEY: score[0], EM_KEY: score[1]} for record in records
            if (score := judged_scores(record, rule)) is not None]


def judged_frame(frame: Any, rule: str = "exclude") -> Any:
    """The rows of a predictions frame (:func:`sparqlab.runs.load_predictions`, or any frame of prediction
    lines) whose question is judged under ``rule``, with ``f1`` / ``em`` replaced by :func:`judged_scores`;
    ``attrs["not_judged"]`` counts the rows left out. Tables and figures average these columns, never the raw
    ones."""
    rows = frame.to_dict("records")
    scores = [judged_scores(row, rule) for row in rows]
    keep = [score is not None for score in scores]
    judged = frame.loc[keep].copy()
    judged[F1_KEY] = [score[0] for score in scores if score is not None]
    judged[EM_KEY] = [bool(score[1]) for score in scores if score is not None]
    judged.attrs = {**frame.attrs, "not_judged": len(rows) - len(judged), "rule": rule}
    return judged


def answer_means(frame: Any, by: str | list[str], metrics: Iterable[str] = ANSWER_METRICS,
                 rule: str = "exclude") -> Any:
    """Mean of ``metrics`` per ``by`` group over the judged rows (:func:`judged_frame`), in group order of first
    appearance; a group with no judged row is absent. Every table that averages F1 / EM calls this."""
    judged = judged_frame(frame, rule)
    means = judged.groupby(by, sort=False)[list(metrics)].mean()
    means.attrs = judged.attrs
    return means


def empty_rates(records: list[Mapping[str, Any]]) -> dict[str, float | None]:
    """``empty_rate``: share of the generated queries (records with a ``predicted_sparql``) that returned no
    answer (SAGA's definition; ``None`` when no question has a query); ``no_query_rate``: share of questions
    without a final query; ``empty_rate_all``: share of all questions without answers. Without
    ``predicted_sparql`` keys only the last is known, and ``empty_rate`` falls back to it."""
    every = statistics.fmean(float(r["empty"]) for r in records)
    if not all("predicted_sparql" in r for r in records):
        return {EMPTY_RATE_KEY: every, NO_QUERY_RATE_KEY: None, EMPTY_RATE_ALL_KEY: every}
    generated = [r for r in records if r["predicted_sparql"]]
    return {EMPTY_RATE_KEY: statistics.fmean(float(r["empty"]) for r in generated) if generated else None,
            NO_QUERY_RATE_KEY: 1.0 - len(generated) / len(records), EMPTY_RATE_ALL_KEY: every}


def cost_amount(value: Any) -> float:
    """A cost given as a number or as a dict by kind: its ``total`` entry, else the sum of its numeric entries
    (flags such as ``"estimated": True`` are not counts), as :func:`sparqlab.llm.aggregate_usage` reads it."""
    if not isinstance(value, Mapping):
        return float(value)
    if "total" in value:
        return float(value["total"])
    return float(sum(v for v in value.values() if isinstance(v, int | float) and not isinstance(v, bool)))


# -- the metric registry ----------------------------------------------------------------------------------------

RATE, COUNT, SECONDS = "rate", "count", "seconds"
"""Units: a share in [0, 1] (printed in percent with one decimal, as the papers print them), a count, seconds."""

VIEWS = frozenset({"list", "show", "compare", "eval", "report", "table"})
"""Where a metric can be a column: ``sparqlab runs list`` (and a run's closing line in ``runs score``),
``runs show``, ``runs compare``, ``sparqlab eval``, the HTML run report, ``sparqlab table``."""


@dataclass(frozen=True)
class Metric:
    """One metric, declared once (lm-evaluation-harness's ``register_metric(metric, aggregation,
    higher_is_better)``, with the display every listing needs).

    - ``key``: its name in ``metrics.json`` and in every table; also the prediction line's field of a metric
      scored per question by ``score``.
    - ``label``: the column header of ``sparqlab table`` and, with `` (%)`` for a rate, a figure's axis label.
    - ``aggregate``: the run's value from the records (``None``: no value), e.g. :func:`mean_of` a field, or a
      corpus-level function (a slot-weighted mean, corpus BLEU).
    - ``field``: the prediction line field holding the per-question value (for bootstrap intervals and per-question
      figures); a dotted ``scores.<key>`` reads a method's own scores. ``None``: corpus-level only.
    - ``score``: ``(predicted, gold) -> value`` of a judged question from its normalised answer sets
      (``predicted`` ``None``: no answer), written to the prediction line under ``key``; ``None`` for a value
      something else records (the answer-set scores, a method's ``Method.score``).
    - ``outcome``: ``(question, outcome) -> {scores key: value}`` of a metric that needs the whole per-question
      outcome (:class:`sparqlab.eval.assess.Outcome`: the final result's rows in order, the answer form, the
      gold), not only two answer sets; its entries go to the prediction line's ``scores`` (``field`` then reads
      ``scores.<key>``). TEXT2SPARQL's official measures are scored so (:mod:`sparqlab.text2sparql.metric`).
    - ``higher_is_better``: the direction (``None``: not ranked); ``unit``: :data:`RATE`, :data:`COUNT` or
      :data:`SECONDS`; ``views``: where it is a column by default (:data:`VIEWS`: all of them).
    - ``judged``: aggregated over the judged questions only (answer metrics) or over every record (a method's
      execution-free scores); ``optional``: left out of a summary that has no value for it (a method's metrics
      on other methods' runs) rather than reported as ``None``; ``description``: one line for the predictions
      schema and docs.
    - ``averages_field``: the run's value is the mean of ``field`` over the questions (set when ``aggregate`` is
      the default), so repeats of a run get a two-level interval of it (:mod:`sparqlab.eval.repeats`).
    - ``over_repeats``: ``(questions, k) -> per-question values`` of a metric defined over the repeats of a run
      (``pass@k``, ``majority@k``; :class:`sparqlab.eval.repeats.RepeatedQuestion`), ``None`` for a metric of one
      run; a metric over repeats is absent from one run's summary and listed by ``metric_list(over_repeats=True)``.
    """

    key: str
    label: str
    aggregate: Callable[[Sequence[Mapping[str, Any]]], float | None]
    field: str | None = None
    score: Callable[[AbstractSet[str] | None, AbstractSet[str]], Any] | None = None
    outcome: Callable[[Any, Any], Mapping[str, Any]] | None = None
    higher_is_better: bool | None = True
    unit: str = RATE
    views: frozenset[str] = VIEWS
    judged: bool = True
    optional: bool = False
    description: str = ""
    averages_field: bool = False
    over_repeats: Callable[[Sequence[Any], int], list[float]] | None = None

    @property
    def axis_label(self) -> str:
        """The label of a figure's axis: rates are drawn in percent."""
        return f"{self.label} (%)" if self.unit == RATE else self.label

    def scale(self, value: float) -> float:
        """``value`` as drawn and printed: a rate in percent."""
        return 100 * value if self.unit == RATE else value

    def format(self, value: Any) -> str:
        """``value`` as the tables print it: a rate in percent with one decimal, a count whole, seconds to two
        decimals, ``None`` as ``-``."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "-"
        if self.unit == RATE:
            return f"{100 * value:.1f}"
        if self.unit == COUNT:
            return f"{value:.0f}"
        return f"{value:.2f}"

    def at(self, k: int) -> str:
        """The key of a metric over repeats with its k: ``pass@k`` at 5 is ``pass@5``."""
        return self.key.replace("@k", f"@{k}")

    def per_question(self, record: Mapping[str, Any]) -> Any:
        """The per-question value in a prediction line, ``None`` without one."""
        return None if self.field is None else field_value(record, self.field)


def field_value(record: Mapping[str, Any], field: str) -> Any:
    """A prediction line's ``field``: a flat column (``scores.none.id_em`` of a frame row) or the nested path it
    names (``scores`` → ``none.id_em`` of a line: a key may hold dots); ``None`` when absent or NaN."""
    if field in record:
        return _given(record[field])
    head, dot, rest = field.partition(".")
    inner = record.get(head) if dot else None
    return field_value(inner, rest) if isinstance(inner, Mapping) else None


METRICS: Registry[Metric] = Registry("metric")
"""Every metric by key, in registration order (:func:`metrics`); a plug-in package registers its own on import."""


def register_metric(key: str, label: str, aggregate: Callable[[Sequence[Mapping[str, Any]]], float | None] | None
                    = None, *, replace: bool = False, **declared: Any) -> Metric:
    """Declare a metric once (the fields of :class:`Metric`); ``aggregate`` defaults to :func:`mean_of` its
    ``field`` (``key`` when it is scored per question by ``score``)."""
    if declared.get("score") is not None:
        declared.setdefault("field", key)
    if declared.get("over_repeats") is not None:
        aggregate = aggregate or _needs_repeats(key)
    elif aggregate is None:
        if declared.get("field") is None:
            raise ValueError(f"metric {key!r}: give an aggregate or the per-question field it averages")
        aggregate = mean_of(declared["field"])
        declared.setdefault("averages_field", True)
    unknown = set(declared.get("views", ())) - VIEWS
    if unknown:
        raise ValueError(f"metric {key!r}: unknown views {sorted(unknown)}; known: {', '.join(sorted(VIEWS))}")
    return METRICS.register(key, Metric(key, label, aggregate, **declared), replace=replace)


def metric_list(view: str | None = None, over_repeats: bool = False) -> list[Metric]:
    """The registered metrics in registration order (plug-ins loaded first), those shown in ``view`` when given:
    the metrics of one run, or with ``over_repeats`` those defined over the repeats of a run (``pass@k`` ...)."""
    METRICS.names()
    return [metric for metric in METRICS.loaded().values() if (view is None or view in metric.views)
            and (metric.over_repeats is not None) == over_repeats]


def _needs_repeats(key: str) -> Callable[[Sequence[Mapping[str, Any]]], float | None]:
    """The ``aggregate`` of a metric over repeats: one run has no value for it."""
    def aggregate(records: Sequence[Mapping[str, Any]]) -> float | None:
        raise ValueError(f"metric {key!r} is defined over the repeats of a run (sparqlab.eval.repeats), not one run")

    return aggregate


def find_metric(name: str) -> Metric | None:
    """The metric named ``name``, or the first whose per-question field it is (``empty`` -> ``empty_rate``), for
    figures of per-question columns; ``None`` for any other column."""
    found = METRICS.find(name)
    return found or next((metric for metric in metric_list() if metric.field == name), None)


def mean_of(field: str) -> Callable[[Sequence[Mapping[str, Any]]], float | None]:
    """The mean of a per-question field (dotted ``scores.<key>`` followed) over the records, ``None`` unless every
    record has a value (a score some questions lack is not averaged over the others)."""
    def aggregate(records: Sequence[Mapping[str, Any]]) -> float | None:
        values = [field_value(r, field) for r in records]
        if not values or any(v is None for v in values):
            return None
        return statistics.fmean(cost_amount(v) for v in values)

    aggregate.__qualname__ = f"mean_of({field!r})"
    return aggregate


def _empty_rate(name: str) -> Callable[[Sequence[Mapping[str, Any]]], float | None]:
    return lambda records: empty_rates(list(records))[name] if records else None


register_metric(F1_KEY, "F1", field=F1_KEY, description="answer-set F1 (null when unscored)")
register_metric(EM_KEY, "EM", field=EM_KEY, description="answer-set exact match")
register_metric(EMPTY_RATE_KEY, "Empty results", _empty_rate(EMPTY_RATE_KEY), field="empty", higher_is_better=False,
                views=frozenset({"list", "show", "compare", "eval", "report"}),
                description="the final query returned no answers")
register_metric(NO_QUERY_RATE_KEY, "No query", _empty_rate(NO_QUERY_RATE_KEY), higher_is_better=False,
                views=frozenset({"compare", "report"}))
register_metric(EMPTY_RATE_ALL_KEY, "Empty (all questions)", _empty_rate(EMPTY_RATE_ALL_KEY), field="empty",
                higher_is_better=False, views=frozenset())
register_metric(PRECISION_KEY, "Precision", field=PRECISION_KEY, optional=True,
                views=frozenset({"show", "eval", "report"}), description="answer-set precision")
register_metric(RECALL_KEY, "Recall", field=RECALL_KEY, optional=True, views=frozenset({"show", "eval", "report"}),
                description="answer-set recall")


# -- metrics over the repeats of a run ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RepeatedQuestion:
    """One judged question across the repeats of a run (one run per sampling seed), in seed order: each repeat's
    judged record (:func:`judged_records`) and normalised answer set (``None``: no answer obtained)."""

    id: str
    records: tuple[Mapping[str, Any], ...]
    answers: tuple[frozenset[str] | None, ...]

    def correct(self, k: int | None = None) -> int:
        """How many of the first ``k`` repeats (all by default) answer exactly (EM)."""
        return sum(bool(record[EM_KEY]) for record in self.records[:k])

    def majority(self, k: int | None = None) -> int:
        """The repeat whose answer set most of the first ``k`` repeats return; a tie goes to the set returned
        first in seed order (deterministic, and the lowest seed is what a single run would have reported)."""
        answers = self.answers[:k]
        counts = {answer: answers.count(answer) for answer in answers}
        return next(index for index, answer in enumerate(answers) if counts[answer] == max(counts.values()))

    def stability(self) -> float:
        """The share of repeats whose answer set is the majority's."""
        return self.answers.count(self.answers[self.majority()]) / len(self.answers)


def check_k(k: int, n: int) -> int:
    """``k`` if 1 <= k <= n (the repeats a metric @k reads), else ``ValueError`` naming both."""
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the number of repeats n={n} for a metric @k; got k={k}")
    return k


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimator of pass@k from ``n`` repeats of which ``c`` are correct: 1 − C(n−c, k) / C(n, k),
    the chance that k repeats drawn without replacement hold at least one correct (Chen et al. 2021)."""
    check_k(k, n)
    if not 0 <= c <= n:
        raise ValueError(f"the correct repeats c must be between 0 and n={n}; got c={c}")
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def _pass_at_k(questions: Sequence[RepeatedQuestion], k: int) -> list[float]:
    return [pass_at_k(len(q.records), q.correct(), k) for q in questions]


def _majority_at_k(questions: Sequence[RepeatedQuestion], k: int) -> list[float]:
    return [float(q.records[q.majority(k)][EM_KEY]) for q in questions]


def _mean_at_k(questions: Sequence[RepeatedQuestion], k: int) -> list[float]:
    return [q.correct() / len(q.records) for q in questions]


register_metric("pass@k", "pass@k", over_repeats=_pass_at_k, views=frozenset({"show", "table", "report"}),
                description="share of questions at least one of k repeats answers exactly (unbiased estimator "
                            "1 - C(n-c,k)/C(n,k) over all n repeats)")
register_metric("majority@k", "majority@k", over_repeats=_majority_at_k, views=frozenset({"show", "table", "report"}),
                description="exact match of the answer set most of the first k repeats return (self-consistency; "
                            "a tie goes to the set returned first in seed order)")
register_metric("mean@k", "mean@k", over_repeats=_mean_at_k, views=frozenset({"show", "report"}),
                description="expected exact match of k repeats, c/n per question (unbiased for every k)")
