"""The one policy turning a run's concurrency into threads and workers (sparqlab.runs.resources)."""

from __future__ import annotations

import dataclasses

import pytest

from sparqlab.runs import RunConfig
from sparqlab.runs.resources import ExecutionResources


@pytest.mark.parametrize(("concurrency", "cores", "expected"), [
    # questions, runner, KG (loop), select, KG query workers
    (1, 16, (1, 8, 32, 2, 2)),     # floors: a serial run still overlaps its blocking steps
    (4, 2, (4, 8, 32, 4, 2)),      # query workers: one per core at most
    (12, 16, (12, 24, 32, 8, 12)),  # select capped at 8; one query worker per question in flight
    (64, 16, (64, 128, 128, 8, 16)),  # two threads per question in flight
])
def test_concurrency_sets_every_pool(concurrency, cores, expected):
    resources = ExecutionResources.from_concurrency(concurrency, cpu_count=cores)
    assert dataclasses.astuple(resources) == expected


def test_a_run_config_reads_the_same_policy_and_it_is_frozen():
    resources = RunConfig(concurrency=12).resources
    assert resources == ExecutionResources.from_concurrency(12)
    with pytest.raises(dataclasses.FrozenInstanceError):
        resources.kg_threads = 1  # type: ignore[misc]
