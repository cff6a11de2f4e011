"""The record schemas of a results folder, defined once: the run header and the prediction line.

The runner builds records with :func:`prediction_record` and :func:`run_header`; the results loader and the shard
merge read headers with :func:`header_from`; :func:`flatten_prediction` turns a prediction line into the columns
of :func:`sparqlab.runs.load_predictions`. A key added here is added everywhere; the per-question score fields come
from the metric registry (:data:`sparqlab.eval.metrics.METRICS`), so a registered metric scored per question is a
field of every line.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from sparqlab.core.errors import InfrastructureError
from sparqlab.core.typed import Range, check_range
from sparqlab.eval.assess import score_fields
from sparqlab.eval.metrics import EM_KEY, F1_KEY, RATE, metric_list
from sparqlab.kg import errors as _kg_errors  # noqa: F401 - registers the KG layer's infrastructure errors
from sparqlab.llm import errors as _llm_errors  # noqa: F401 - and the model layer's

HEADER_FIELDS = ("run_id", "experiment", "folder", "method", "model", "model_is_standin", "kg", "engine",
                 "dataset", "split", "shard_index", "num_shards", "answer_match")
"""Identifying fields shared by ``manifest.json`` and ``metrics.json`` (``engine``: the SPARQL engine and version
that answered the KG's queries, :mod:`sparqlab.engines`; ``answer_match``: the answer comparison rule the
scores use, :mod:`sparqlab.eval.matching`)."""

QUESTION_FIELDS: dict[str, str] = {
    "id": "question id",
    "question": "question text",
    "answer_form": "select / ask / count",
    "predicted_sparql": "the method's final query (null when it gave up)",
    "predicted_answers": "normalised answers of executing the final query (null when there are none)",
    "gold_sparql": "the benchmark's gold query",
    "gold_answers": "normalised gold answers",
    "gold_source": "given / gold_sparql / error: <kind>: <message>",
}
"""The keys of a ``predictions.jsonl`` line before its scores (:func:`prediction_fields`)."""

RUN_FIELDS: dict[str, str] = {
    "error_category": "why the question has no (good) answer: method's own category, question_timeout, "
                      "method_error, a model error kind, final_query_timeout or the final query's KGError kind "
                      "(never a failure of the machinery: sparqlab.core.errors stops the run instead)",
    "error_type": "sparqlab.eval.categorise: correct, gold_error, no_gold, no_query, syntax_error, "
                  "execution_error, empty_result or semantic:<subtype>, the same for every method",
    "model_calls": "{call kind: n} over all roles",
    "model_calls_uncached": "calls that reached a model (not the response cache)",
    "role_usage": "{role: {calls: {kind: n}, tokens: {prompt, completion, total}}}",
    "reply_outcomes": "{call kind: {outcome: n}}: replies that did not end normally with text (truncated, "
                      "reasoning_exhausted, empty; sparqlab.llm.replies.reply_outcome)",
    "tokens": "{prompt, completion, total, prompt_recomputed} over all roles (prompt_recomputed: what a vLLM "
              "server with automatic prefix caching would compute of the prompts)",
    "tokens_estimated": "true when some call's tokens were estimated (stand-ins)",
    "kg_calls": "{tool: n}: the method's KG calls by tool (query, search, lookup, examples)",
    "latency_s": "wall time of the question (answer + final query)",
    "model_latency_s": "time spent in model calls",
    "scores": "method-specific scores from Method.score (columns scores.<key>)",
    "extra": "method-specific values from MethodOutput.extra (columns extra.<key>)",
    "metadata": "the question's scalar metadata (for grouping; full question, read by the runner only)",
    "gold_complexity": "the gold query's complexity features (sparqlab.eval.complexity: triples bucket, filter, "
                       "aggregate, order_by ...; columns gold_complexity.<key>)",
    "predicted_complexity": "the same features of the final query (columns predicted_complexity.<key>)",
}
"""The keys of a ``predictions.jsonl`` line after its scores (:func:`prediction_fields`)."""


def prediction_fields() -> dict[str, str]:
    """Every key of a ``predictions.jsonl`` line, with its meaning, in line order."""
    return {**QUESTION_FIELDS, **score_fields(), **RUN_FIELDS}


REQUIRED_PREDICTION_FIELDS = ("id", "question", "predicted_sparql", "predicted_answers", "gold_answers",
                              F1_KEY, EM_KEY, "error_category")
"""Fields every prediction line has had since the first version of the schema: a line without one of them is
damaged (resume answers its question again; a listing names it), while a field added later may be absent from an
older run's lines."""


def rate_fields() -> list[str]:
    """The per-question fields of rate metrics: each ``null`` (unscored), a boolean or a number in [0, 1]."""
    return [metric.field for metric in metric_list() if metric.unit == RATE and metric.field and "." not in metric.field]


TIME_FIELDS = {"latency_s": Range(ge=0, le=365 * 86400), "model_latency_s": Range(ge=0, le=365 * 86400)}
"""Seconds fields of a prediction line and their range: a negative time, or one that overflows when a listing
sums the column (an imported ``elapsed: 1e308``), makes the line damaged instead of every later listing fail."""


def prediction_problem(record: Mapping[str, Any]) -> str | None:
    """What makes a prediction line unusable (missing required fields, an id that is not text, a score outside
    [0, 1], a time that is not a number of seconds in :data:`TIME_FIELDS`), or ``None`` for a sound line."""
    missing = [key for key in REQUIRED_PREDICTION_FIELDS if key not in record]
    if missing:
        return f"missing field{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
    if not isinstance(record["id"], str) or not record["id"]:
        return f"the id is {record['id']!r}, not a question id"
    for key in dict.fromkeys(rate_fields()):
        value = record.get(key)
        if value is None or isinstance(value, bool):
            continue
        if not isinstance(value, int | float) or not 0.0 <= value <= 1.0:  # NaN fails both comparisons
            return f"{key} is {value!r}, outside [0, 1]"
    for key, allowed in TIME_FIELDS.items():
        value = record.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            return f"{key} is {value!r}, not a number of seconds"
        try:
            check_range(value, allowed, key)
        except ValueError as problem:
            return str(problem)
    return None


def trace_problem(record: Mapping[str, Any]) -> str | None:
    """What makes a trace line unusable (no question id, no list of events), or ``None``."""
    if not isinstance(record.get("id"), str) or not record["id"]:
        return "no question id"
    if not isinstance(record.get("trace"), list):
        return "the trace is not a list of events"
    return None


FLATTENED = ("extra", "scores", "gold_complexity", "predicted_complexity")
"""Nested fields whose scalar entries become ``<field>.<key>`` columns in ``load_predictions``."""


def run_header(**values: Any) -> dict[str, Any]:
    """A header dict with exactly :data:`HEADER_FIELDS`."""
    _check(values, HEADER_FIELDS, "run header")
    return {key: values[key] for key in HEADER_FIELDS}


def header_from(document: Mapping[str, Any]) -> dict[str, Any]:
    """The header fields of a manifest or metrics document (missing ones as ``None``)."""
    return {key: document.get(key) for key in HEADER_FIELDS}


def prediction_record(**values: Any) -> dict[str, Any]:
    """A prediction line with exactly :func:`prediction_fields`, in that order."""
    fields = prediction_fields()
    _check(values, tuple(fields), "prediction record")
    return {key: values[key] for key in fields}


def _check(values: Mapping[str, Any], expected: tuple[str, ...], what: str) -> None:
    missing = [k for k in expected if k not in values]
    unknown = [k for k in values if k not in expected]
    if missing or unknown:
        raise ValueError(f"{what}: missing {missing}, unknown {unknown} (schema in sparqlab.runs.records)")


def is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def flatten_prediction(record: Mapping[str, Any]) -> dict[str, Any]:
    """A prediction line as flat columns: scalar entries of ``extra`` / ``scores`` become ``extra.<key>`` /
    ``scores.<key>`` (structured entries stay in the nested column only), and the question's metadata become
    columns of their own unless a column has that name already."""
    row = dict(record)
    for name in FLATTENED:
        for key, value in (record.get(name) or {}).items():
            if is_scalar(value):
                row[f"{name}.{key}"] = value
    for key, value in (record.get("metadata") or {}).items():
        row.setdefault(key, value)
    return row


@functools.cache
def infrastructure_categories() -> frozenset[str]:
    """The ``kind`` of every :class:`~sparqlab.core.errors.InfrastructureError` (``model_unavailable``,
    ``replay_miss``, ``endpoint_unavailable``, ``storage_error`` ...): a failure of the machinery, never an answer."""
    kinds, todo = set(), [InfrastructureError]
    while todo:
        cls = todo.pop()
        kinds.add(cls.kind)
        todo.extend(cls.__subclasses__())
    return frozenset(kinds)


def infrastructure_failure(record: Mapping[str, Any]) -> bool:
    """Whether a prediction line records a failure of the machinery instead of an answer (written by a version
    that recorded them): an infrastructure error category, or a crashed scorer (``scores.score_error``). Such a
    question is not done: the run lists as incomplete, and a rerun answers it again."""
    scores = record.get("scores")
    return (record.get("error_category") in infrastructure_categories()
            or (isinstance(scores, Mapping) and "score_error" in scores))
