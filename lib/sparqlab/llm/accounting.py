"""Token and latency accounting: totals over calls (by call kind) and over a run's per-question records.

Per call, a :class:`~sparqlab.llm.base.ChatResponse` carries its usage and latency; per question, the method
context counts calls and tokens by kind; per run, :func:`aggregate_usage` sums the per-question records.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sparqlab.llm.base import ChatResponse


@dataclass
class UsageTotals:
    """Running totals over chat calls. ``estimated`` turns true as soon as one call's tokens were estimated
    (stand-ins, servers reporting no usage), so an aggregate never passes estimates off as measurements.
    ``prompt_cached`` sums the prompt tokens servers reported as taken from their prefix cache (``None`` while no
    call reported any), beside ``prompt_recomputed``, the simulation of :mod:`sparqlab.llm.prefix_cache`."""

    calls: Counter = field(default_factory=Counter)
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt_recomputed: int = 0
    prompt_cached: int | None = None
    latency_s: float = 0.0
    estimated: bool = False

    def add(self, response: ChatResponse, kind: str = "generate") -> None:
        self.calls[kind] += 1
        self.cached_calls += response.cached
        self.prompt_tokens += response.usage.prompt_tokens
        self.completion_tokens += response.usage.completion_tokens
        self.prompt_recomputed += response.usage.prompt_tokens if response.prompt_recomputed is None \
            else response.prompt_recomputed
        self._add_cached(response.usage.cached_tokens)
        self.latency_s += response.latency_s
        self.estimated |= response.usage.estimated

    def merge(self, other: UsageTotals) -> None:
        self.calls.update(other.calls)
        self.cached_calls += other.cached_calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.prompt_recomputed += other.prompt_recomputed
        self._add_cached(other.prompt_cached)
        self.latency_s += other.latency_s
        self.estimated |= other.estimated

    def _add_cached(self, tokens: int | None) -> None:
        if tokens is not None:
            self.prompt_cached = (self.prompt_cached or 0) + tokens

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": {"total": self.total_calls, **dict(sorted(self.calls.items()))},
            "cached_calls": self.cached_calls,
            "tokens": {"prompt": self.prompt_tokens, "completion": self.completion_tokens,
                       "total": self.total_tokens, "prompt_recomputed": self.prompt_recomputed,
                       **({} if self.prompt_cached is None else {"prompt_cached": self.prompt_cached}),
                       "estimated": self.estimated},
            "model_latency_s": round(self.latency_s, 6),
        }


def _split(value: Any) -> tuple[float, dict[str, float]]:
    """A count given as a number or as a dict by kind, as ``(total, by_kind)``. A dict's total is its ``total``
    entry if it has one, else the sum of its kinds; non-numeric entries (flags) are skipped."""
    if value is None:
        return 0, {}
    if not isinstance(value, Mapping):
        return value, {}
    by_kind = {key: count for key, count in value.items()
               if key != "total" and isinstance(count, int | float) and not isinstance(count, bool)}
    return value.get("total", sum(by_kind.values())), by_kind


def aggregate_usage(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Run-level totals and per-question means from per-question records with the fields ``model_calls`` (a
    number or a dict by call kind), ``tokens`` (a number, or a dict such as ``{"prompt", "completion"}``) and
    ``latency_s``; missing fields count as zero. Breakdowns sum the records that give one.
    """
    totals = {"model_calls": 0, "tokens": 0}
    breakdowns = {"model_calls": Counter(), "tokens": Counter()}
    latency = 0.0
    questions = 0
    for record in records:
        questions += 1
        for key in totals:
            total, by_kind = _split(record.get(key))
            totals[key] += total
            breakdowns[key].update(by_kind)
        latency += float(record.get("latency_s") or 0.0)

    def mean(value: float) -> float:
        return round(value / questions, 6) if questions else 0.0

    return {
        "questions": questions,
        **{key: {"total": totals[key], **dict(sorted(breakdowns[key].items()))} for key in totals},
        "latency_s": round(latency, 6),
        "per_question": {"model_calls": mean(totals["model_calls"]), "tokens": mean(totals["tokens"]),
                         "latency_s": mean(latency)},
    }
