"""How a run's ``concurrency`` becomes threads and workers, said once (:class:`ExecutionResources`), and how it
fits the model endpoints' slots (:func:`fit_to_slots`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ExecutionResources:
    """The threads and workers of a run with ``concurrency`` questions in flight (``RunConfig.concurrency``).

    - ``question_workers = concurrency``: the asyncio tasks answering questions, one per question in flight (never
      more than the questions left), so a batching model server stays busy.
    - ``runner_threads = max(8, 2 × concurrency)``: the runner's own pool for each question's blocking steps
      (final query, gold query, answer conversion, matching); two per question in flight, as a final query cut off
      by the question's deadline keeps its thread until the KG answers while the gold query needs another.
    - ``kg_threads = max(32, 2 × concurrency)``: the event loop's default executor, where methods reach the KG
      through ``asyncio.to_thread``; two per question in flight like the runner's pool, and never fewer than the
      32 of Python's default (``min(32, cores + 4)``), which would queue a high-concurrency run's questions for a
      thread behind slow KG calls.
    - ``select_threads = max(2, min(8, concurrency))``: the one-off ``select=answerable`` check, which runs each
      gold query once before the run: in parallel, never more than the run's own questions in flight and at
      most 8 (a check, not the run); at least 2.
    - ``kg_query_workers = max(2, min(concurrency, cores))``: an embedded store's query processes, one per
      question in flight but at most one per core (queries are CPU-bound); at least two, so one long query does
      not hold up the rest.
    """

    question_workers: int
    runner_threads: int
    kg_threads: int
    select_threads: int
    kg_query_workers: int

    @classmethod
    def from_concurrency(cls, concurrency: int, cpu_count: int | None = None) -> ExecutionResources:
        """The resources of ``concurrency`` questions in flight on ``cpu_count`` cores (default: this machine's)."""
        cores = cpu_count or os.cpu_count() or 2
        return cls(question_workers=concurrency, runner_threads=max(8, 2 * concurrency),
                   kg_threads=max(32, 2 * concurrency), select_threads=max(2, min(8, concurrency)),
                   kg_query_workers=max(2, min(concurrency, cores)))


@dataclass(frozen=True)
class InFlight:
    """How many requests each model endpoint gets at once (``endpoint_slots``, by URL; endpoints without a
    known limit absent) and how many questions are in flight (``question_workers``)."""

    endpoint_slots: dict[str, int]
    question_workers: int


def fit_to_slots(models: Sequence[Any], model_slots: int | None, question_workers: int) -> InFlight:
    """Each endpoint gets at most its slots of requests at once (``model_slots``, else what it announced), shared
    by every model calling it; and no more questions are in flight than the slots of any model of the run, so
    that no question spends its deadline queueing for one."""
    from sparqlab.llm import InFlightLimit

    by_url: dict[str, list[Any]] = {}
    for model in models:
        for endpoint in model.endpoints():
            by_url.setdefault(endpoint.base_url, []).append(endpoint)
    slots_by_url: dict[str, int] = {}
    for url, endpoints in by_url.items():
        slots = model_slots or next((e.slots for e in endpoints if e.slots), None)
        if slots:  # a nested run (GGC's gate data) keeps the limit its parent run shares with other roles
            limit = next((e.in_flight_limit for e in endpoints
                          if e.in_flight_limit and e.in_flight_limit.slots == slots), None) or InFlightLimit(slots)
            for endpoint in endpoints:
                endpoint.in_flight_limit = limit
            slots_by_url[url] = slots
    totals = [sum(slots_by_url[url] for url in {e.base_url for e in model.endpoints()}) for model in models
              if model.endpoints() and all(e.base_url in slots_by_url for e in model.endpoints())]
    return InFlight(slots_by_url, min([question_workers, *totals]))
