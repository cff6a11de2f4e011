"""GroupCommit: appends from many coroutines share fsyncs, and keep RunStore.append's guarantees."""

import asyncio
import os
import threading

import pytest

from sparqlab.core.errors import StorageFull
from sparqlab.core.jsonl import read_jsonl
from sparqlab.runs.store import GroupCommit, RunStore


def finished(i: int) -> tuple[dict, list]:
    return {"id": f"q{i}", "f1": i / 10}, [{"event": "step", "n": i}]


def test_appends_that_wait_on_a_write_in_progress_go_together_in_the_next_batch(tmp_path, monkeypatch):
    store = RunStore(tmp_path / "run")
    store.open()
    release, fsyncs, real_fsync = threading.Event(), [], os.fsync

    def slow_first_fsync(fd: int) -> None:
        fsyncs.append(fd)
        if len(fsyncs) == 1:
            release.wait(10)  # the first batch is still being written while the others arrive
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", slow_first_fsync)

    async def main() -> None:
        commit = GroupCommit(store)
        tasks = [asyncio.create_task(commit.append(*finished(0)))]
        while not fsyncs:  # the first question's batch is being written ...
            await asyncio.sleep(0.01)
        tasks += [asyncio.create_task(commit.append(*finished(i))) for i in range(1, 40)]
        await asyncio.sleep(0.05)  # ... while 39 more finish
        release.set()
        await asyncio.gather(*tasks)
        await commit.close()

    asyncio.run(main())
    store.close()
    assert len(fsyncs) == 4  # two batches (1 and 39 questions), two fsyncs each: not 80
    predictions = list(read_jsonl(tmp_path / "run" / "predictions.jsonl"))
    traces = list(read_jsonl(tmp_path / "run" / "traces.jsonl"))
    assert sorted(p["id"] for p in predictions) == sorted(f"q{i}" for i in range(40))
    assert [t["id"] for t in traces] == [p["id"] for p in predictions]
    assert all(t["trace"] == [{"event": "step", "n": int(t["id"][1:])}] for t in traces)


def test_a_failed_write_raises_in_every_append_of_its_batch(tmp_path):
    store = RunStore(tmp_path / "run")
    store.open()
    store._predictions = open("/dev/full", "w", encoding="utf-8")  # noqa: SIM115 - every write: ENOSPC

    async def main() -> list:
        commit = GroupCommit(store)
        try:
            return await asyncio.gather(*(commit.append(*finished(i)) for i in range(5)), return_exceptions=True)
        finally:
            await commit.close()

    outcomes = asyncio.run(main())
    store.close()
    assert len(outcomes) == 5 and all(isinstance(outcome, StorageFull) for outcome in outcomes), outcomes
    assert "predictions.jsonl" in str(outcomes[0])


def test_close_writes_a_finished_question_whose_coroutine_was_cancelled(tmp_path):
    store = RunStore(tmp_path / "run")
    store.open()

    async def main() -> None:
        commit = GroupCommit(store)
        task = asyncio.create_task(commit.append(*finished(7)))
        await asyncio.sleep(0)  # queued, waiting for its write
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await commit.close()

    asyncio.run(main())
    store.close()
    assert [p["id"] for p in read_jsonl(tmp_path / "run" / "predictions.jsonl")] == ["q7"]
    assert [t["id"] for t in read_jsonl(tmp_path / "run" / "traces.jsonl")] == ["q7"]
