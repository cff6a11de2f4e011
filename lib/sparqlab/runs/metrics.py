"""``metrics.json``: one run's (or one shard's, or a merge's) numbers, recomputed from its predictions.

Scores come from :func:`sparqlab.eval.summarise` over the questions that have gold answers; cost totals from
:func:`sparqlab.llm.aggregate_usage`; plus counts by error category and how many questions are still missing.
Everything is a pure function of the prediction records, so a merge recomputes exactly what a single run reports.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from sparqlab.eval import summarise
from sparqlab.llm import aggregate_usage
from sparqlab.runs.manifest import now_iso

SCORE_KEYS = ("f1", "em", "empty_rate", "precision", "recall")


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def compute_metrics(records: Iterable[Mapping[str, Any]], n_questions: int) -> dict[str, Any]:
    """Scores, costs and error counts of ``records`` (prediction lines) out of ``n_questions`` selected."""
    records = list(records)
    scored = [r for r in records if r.get("f1") is not None]
    summary = summarise(scored)
    latencies = [float(r.get("latency_s") or 0.0) for r in records]
    return {
        "n_questions": n_questions,
        "n_done": len(records),
        "n_missing": n_questions - len(records),
        "complete": len(records) == n_questions,
        "n_scored": len(scored),
        "n_gold_errors": sum(1 for r in records if str(r.get("gold_source") or "").startswith("error")),
        **{key: summary.get(key) for key in SCORE_KEYS},
        "error_categories": dict(sorted(Counter(r.get("error_category") or "none" for r in records).items())),
        "usage": aggregate_usage(records),
        "tokens_estimated": any(r.get("tokens_estimated") for r in records),
        "model_calls_uncached": sum(int(r.get("model_calls_uncached") or 0) for r in records),
        "kg_calls": sum(int(r.get("kg_calls") or 0) for r in records),
        "latency_s": {
            "mean": statistics.fmean(latencies) if latencies else None,
            "p50": _quantile(latencies, 0.5) if latencies else None,
            "p95": _quantile(latencies, 0.95) if latencies else None,
            "max": max(latencies) if latencies else None,
        },
    }


def metrics_document(header: Mapping[str, Any], records: Iterable[Mapping[str, Any]], n_questions: int,
                     wall_time_s: float) -> dict[str, Any]:
    """The content of ``metrics.json``: the run's header (ids, method, model, ``model_is_standin``, KG, data,
    shard) followed by :func:`compute_metrics` and the wall time summed over the sessions that finished."""
    return {**header, **compute_metrics(records, n_questions), "wall_time_s": round(wall_time_s, 3),
            "updated": now_iso()}
