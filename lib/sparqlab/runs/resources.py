"""How a run's ``concurrency`` becomes threads and workers, said once (:class:`ExecutionResources`)."""

from __future__ import annotations

import os
from dataclasses import dataclass


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
