"""``run_sync``: a fresh ``asyncio.run`` loop by default, or the thread's kept loop with ``reuse_loop=True``,
which must behave like a fresh loop for what a call can observe (its result, its exception, no task of one call
running on in the next), and fall back to a worker thread inside a running loop (Jupyter)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from sparqlab.llm.base import run_sync


async def running_loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


def test_reuse_loop_keeps_one_loop_per_thread():
    first, second = run_sync(running_loop(), reuse_loop=True), run_sync(running_loop(), reuse_loop=True)
    assert first is second and not first.is_closed() and not first.is_running()
    fresh = run_sync(running_loop())
    assert fresh is not first and fresh.is_closed()

    other: list = []
    worker = threading.Thread(target=lambda: other.append(run_sync(running_loop(), reuse_loop=True)))
    worker.start()
    worker.join()
    assert other[0] is not first


def test_reuse_loop_cancels_what_a_call_leaves_behind():
    started = []

    async def leave_a_task() -> asyncio.Task:
        async def forever():
            started.append(True)
            await asyncio.sleep(3600)

        task = asyncio.get_running_loop().create_task(forever())
        await asyncio.sleep(0)
        return task

    task = run_sync(leave_a_task(), reuse_loop=True)
    assert started and task.cancelled()
    assert run_sync(running_loop(), reuse_loop=True) is task.get_loop()  # the loop is still usable


def test_reuse_loop_raises_the_coroutine_error_and_stays_usable():
    async def fail():
        await asyncio.sleep(0)
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        run_sync(fail(), reuse_loop=True)
    assert run_sync(asyncio.sleep(0, result=7), reuse_loop=True) == 7


def test_reuse_loop_inside_a_running_loop_runs_on_a_worker_thread():
    async def caller():
        outer = asyncio.get_running_loop()
        inner = run_sync(running_loop(), reuse_loop=True)  # a blocking call made from async code (Jupyter)
        return outer, inner

    outer, inner = asyncio.run(caller())
    assert inner is not outer
