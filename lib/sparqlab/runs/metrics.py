"""``metrics.json``: one run's (or one shard's, or a merge's) numbers, recomputed from its predictions.

Scores are the registered metrics (:data:`sparqlab.eval.metrics.METRICS`) as :func:`sparqlab.eval.summarise`
aggregates them over the judged questions (a gold error is counted, not averaged:
:func:`sparqlab.eval.metrics.judged_scores`): every answer metric is a key, ``null`` without a value, and a metric
over all records (a method's own) is a key where it has a value; cost totals from
:func:`sparqlab.llm.aggregate_usage`; plus counts by error category and how many questions are still missing.
Everything is a pure function of the prediction records, so a merge recomputes exactly what a single run reports.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from sparqlab.eval import summarise
from sparqlab.eval.errors import is_no_gold_record
from sparqlab.eval.metrics import NOT_EXECUTED, binary_decisions, is_gold_error_record, metric_list
from sparqlab.llm import aggregate_usage
from sparqlab.llm.prefix_cache import BLOCK_TOKENS
from sparqlab.runs.manifest import now_iso
from sparqlab.runs.records import infrastructure_failure

GENERATED_ONLY = NOT_EXECUTED
"""``gold_source`` of a generation-only run's records: nothing was executed, nothing scored."""


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _counts(values: Iterable[Any]) -> dict[str, int]:
    """Sum of per-record counts given as a number or a ``{name: n}`` dict: ``{"total", **by_name}``."""
    by_name: Counter = Counter()
    total = 0
    for value in values:
        if isinstance(value, Mapping):
            by_name.update({k: int(v) for k, v in value.items() if k != "total"})
            total += sum(int(v) for k, v in value.items() if k != "total")
        elif value:
            total += int(value)
    return {"total": total, **dict(sorted(by_name.items()))}


def role_usage(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per model role: calls by kind (with ``total``) and tokens, summed over the records' ``role_usage``."""
    roles: dict[str, dict[str, Any]] = {}
    for record in records:
        for role, usage in (record.get("role_usage") or {}).items():
            entry = roles.setdefault(role, {"calls": Counter(), "tokens": 0})
            entry["calls"].update(usage.get("calls") or {})
            entry["tokens"] += int((usage.get("tokens") or {}).get("total", 0))
    return {role: {"calls": {"total": sum(e["calls"].values()), **dict(sorted(e["calls"].items()))},
                   "tokens": e["tokens"]} for role, e in sorted(roles.items())}


def reply_outcomes(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Replies that did not end normally, summed over the records: ``{"total": {outcome: n}, kind: {outcome: n}}``
    (``reasoning_exhausted``, ``truncated``, ``empty`` ...)."""
    by_kind: dict[str, Counter] = {}
    for record in records:
        for kind, outcomes in (record.get("reply_outcomes") or {}).items():
            by_kind.setdefault(kind, Counter()).update(outcomes)
    total = sum(by_kind.values(), Counter())
    return {"total": dict(sorted(total.items())), **{k: dict(sorted(c.items())) for k, c in sorted(by_kind.items())}}


def method_scores(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Mean of each numeric (or boolean) entry of the records' ``scores`` over the records that have it."""
    values: dict[str, list[float]] = {}
    for record in records:
        for key, value in (record.get("scores") or {}).items():
            if isinstance(value, int | float):
                values.setdefault(key, []).append(float(value))
    return {key: round(statistics.fmean(v), 6) for key, v in sorted(values.items())}


def pooled_scores(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Rates a method scores per question as counts ``<name>_matched`` / ``<name>_total``, pooled over the records
    (Σ matched / Σ total) as ``<name>_micro``: e.g. DeSQ's fragment and URI EM, which its paper averages over all
    fragments / URI slots of the test set rather than per question."""
    sums: dict[str, list[float]] = {}
    for record in records:
        scores = record.get("scores") or {}
        for key, matched in scores.items():
            name = key.removesuffix("_matched")
            total = scores.get(f"{name}_total")
            if key.endswith("_matched") and isinstance(matched, int | float) and isinstance(total, int | float):
                pair = sums.setdefault(name, [0.0, 0.0])
                pair[0] += matched
                pair[1] += total
    return {f"{name}_micro": round(m / t, 6) for name, (m, t) in sorted(sums.items()) if t}


def decision_scores(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Binary decisions a method scores per question as ``<name>_label`` (1 = positive) and ``<name>_decision``
    (1 = decided positive), e.g. GGC's gate (``gate_label``: s(0) is wrong, ``gate_decision``: the corrector was
    triggered): ``<name>_accuracy``, ``_precision``, ``_recall``, ``_f1``, ``_fpr`` and ``_trigger_rate`` (share
    decided positive, the paper's name for the gate's) over the records that score both (:func:`sparqlab.eval.metrics.binary_decisions`)."""
    pairs: dict[str, tuple[list[Any], list[Any]]] = {}
    for record in records:
        scores = record.get("scores") or {}
        for key, label in scores.items():
            name = key.removesuffix("_label")
            if key.endswith("_label") and f"{name}_decision" in scores:
                labels, decisions = pairs.setdefault(name, ([], []))
                labels.append(label)
                decisions.append(scores[f"{name}_decision"])
    found = {}
    for name, (labels, decisions) in sorted(pairs.items()):
        for measure, value in binary_decisions(labels, decisions).items():
            if measure not in ("tp", "fp", "fn", "tn"):
                found[f"{name}_{measure}"] = round(value, 6)
    return found


def compute_metrics(records: Iterable[Mapping[str, Any]], n_questions: int) -> dict[str, Any]:
    """Scores, costs and error counts of ``records`` (prediction lines) out of ``n_questions`` selected."""
    records = list(records)
    summary = summarise(records)
    latencies = [float(r.get("latency_s") or 0.0) for r in records]
    usage = aggregate_usage(records)
    n_infrastructure = sum(1 for r in records if infrastructure_failure(r))
    return {
        "n_questions": n_questions,
        "n_done": len(records),
        "n_missing": n_questions - len(records),
        # a recorded failure of the machinery is not an answer: the run is not complete until it is redone
        "n_infrastructure_errors": n_infrastructure,
        "complete": len(records) == n_questions and n_infrastructure == 0,
        "n_scored": summary["n"],
        # questions that cannot be judged (gold query failed or gave nothing); a generation-only line was not
        # judged, and a question without any gold (a served request) has nothing to judge
        "n_gold_errors": sum(1 for r in records if r.get("gold_source") != GENERATED_ONLY
                             and not is_no_gold_record(r) and is_gold_error_record(r)),
        **{metric.key: summary.get(metric.key) for metric in metric_list() if metric.judged or metric.key in summary},
        "error_categories": dict(sorted(Counter(r.get("error_category") or "none" for r in records).items())),
        "error_types": dict(sorted(Counter(r.get("error_type") or "unknown" for r in records).items())),
        "usage": usage,
        "prefix_cache": prefix_cache_summary(usage),
        "tokens_estimated": any(r.get("tokens_estimated") for r in records),
        "model_calls_uncached": sum(int(r.get("model_calls_uncached") or 0) for r in records),
        "kg_calls": _counts(r.get("kg_calls") for r in records),
        "role_usage": role_usage(records),
        "reply_outcomes": reply_outcomes(records),
        "method_scores": {**pooled_scores(records), **method_scores(records), **decision_scores(records)},
        "latency_s": {
            "mean": statistics.fmean(latencies) if latencies else None,
            "p50": _quantile(latencies, 0.5) if latencies else None,
            "p95": _quantile(latencies, 0.95) if latencies else None,
            "max": max(latencies) if latencies else None,
        },
    }


def prefix_cache_summary(usage: Mapping[str, Any]) -> dict[str, Any]:
    """The run's prompt tokens and how many a prefix cache spared, twice: ``simulated`` (what a vLLM server with
    automatic prefix caching would recompute, :mod:`sparqlab.llm.prefix_cache`: ``recomputed_prompt_tokens``,
    ``None`` for records made without the count) and ``reported`` (``cached_prompt_tokens``: what the servers said
    they took from their cache, ``None`` when no server said), each with the share reused."""
    tokens = usage.get("tokens") or {}
    prompt, recomputed, cached = tokens.get("prompt", 0), tokens.get("prompt_recomputed"), tokens.get("prompt_cached")
    return {"simulated": {"block_tokens": BLOCK_TOKENS, "prompt_tokens": prompt,
                          "recomputed_prompt_tokens": recomputed,
                          "reused_share": round(1 - recomputed / prompt, 4) if prompt and recomputed is not None
                          else None},
            "reported": {"prompt_tokens": prompt, "cached_prompt_tokens": cached,
                         "reused_share": round(cached / prompt, 4) if prompt and cached is not None else None}}


def metrics_document(header: Mapping[str, Any], records: Iterable[Mapping[str, Any]], n_questions: int,
                     wall_time_s: float, prepare: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The content of ``metrics.json``: the run's header (ids, method, model, ``model_is_standin``, KG, data,
    shard) followed by :func:`compute_metrics`, the wall time summed over the sessions that finished, and the
    cost of the last session's ``prepare`` step (``wall_s``, ``model_calls``, ``tokens``, ``kg_calls``,
    ``artifacts``), apart from the per-question cost."""
    return {**header, **compute_metrics(records, n_questions), "wall_time_s": round(wall_time_s, 3),
            "prepare": dict(prepare or {}), "updated": now_iso()}


KG_CLIENT_PREFIX = "kg_"
"""``metrics.json`` keys of the KG service client's counts (``kg_retries``, ``kg_throttled``, ``kg_wait_s`` …:
:meth:`sparqlab.kg.service.ServiceClient.stats`), one per counter."""
SNAPSHOT_SOURCE = "gold_snapshot"
"""``gold_source`` of a question scored against a gold snapshot's answers (:mod:`sparqlab.data.gold_snapshot`)."""
SNAPSHOT_ERROR_MARK = "(from the gold snapshot)"
"""Ends the ``gold_source`` of a question whose gold query failed when the snapshot was taken."""


def kg_client_totals(parts: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """The KG client counts of several ``metrics.json`` (a run's earlier calls, a merge's shards) added up."""
    totals: Counter = Counter()
    for part in parts:
        totals.update({k: v for k, v in part.items() if k.startswith(KG_CLIENT_PREFIX)
                       and isinstance(v, int | float) and not isinstance(v, bool)})
    return {k: round(v, 3) for k, v in sorted(totals.items())}


def gold_snapshot_entry(note: Mapping[str, Any] | None, records: Iterable[Mapping[str, Any]]) -> dict | None:
    """``metrics.json``'s ``gold_snapshot``: the snapshot a run considered (``None``: gold as shipped or
    executed live) with how many of the records were scored from it."""
    if note is None:
        return None
    used = sum(1 for r in records if r.get("gold_source") == SNAPSHOT_SOURCE
               or str(r.get("gold_source") or "").endswith(SNAPSHOT_ERROR_MARK))
    return {**{k: v for k, v in note.items() if k != "questions_scored_from_it"}, "questions_scored_from_it": used}
