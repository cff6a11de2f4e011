"""``run_sync``: a fresh ``asyncio.run`` loop by default, or the thread's kept loop with ``reuse_loop=True``,
which must behave like a fresh loop for what a call can observe (its result, its exception, no task of one call
running on in the next), and fall back to a worker thread inside a running loop (Jupyter)."""

from __future__ import annotations

import asyncio
import os
import signal
import threading

import pytest

from sparqlab.core.event_loops import run_sync


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


def test_reuse_loop_inside_a_running_loop_keeps_one_worker_loop():
    async def caller():
        return [run_sync(running_loop(), reuse_loop=True) for _ in range(3)]

    first, second, third = asyncio.run(caller())
    assert first is second is third and not first.is_closed()


def test_reuse_loop_nested_and_concurrent_calls_do_not_wait_for_the_kept_worker():
    """A call made while the kept worker is busy (from its own coroutine, or from another thread) runs on a fresh
    thread: it would deadlock (nested) or queue (concurrent) otherwise."""
    release = threading.Event()

    async def nested():
        outer = asyncio.get_running_loop()
        inner = run_sync(running_loop(), reuse_loop=True)  # made on the kept worker's own loop
        return outer, inner

    async def holds_the_worker():
        await asyncio.get_running_loop().run_in_executor(None, release.wait, 10)
        return asyncio.get_running_loop()

    async def jupyter_cell():
        outer, inner = run_sync(nested(), reuse_loop=True)
        assert inner is not outer
        other: list = []
        busy = threading.Thread(target=lambda: other.append(asyncio.run(call_in_loop(holds_the_worker()))))
        busy.start()
        while not other and not _worker_is_busy():
            await asyncio.sleep(0.001)
        during = run_sync(running_loop(), reuse_loop=True)  # does not wait for the busy worker
        release.set()
        busy.join()
        return during, other[0]

    async def call_in_loop(coroutine):
        return run_sync(coroutine, reuse_loop=True)

    during, held = asyncio.run(jupyter_cell())
    assert during is not held


def _worker_is_busy() -> bool:
    from sparqlab.core import event_loops

    return event_loops._KEPT_WORKER_BUSY.locked()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_reuse_loop_works_in_a_forked_child():
    """The parent's kept worker thread does not exist in a forked child: the child gets its own, not a queue that
    nothing serves (it would hang; the child gives up after 10 s)."""

    async def jupyter_cell():
        return run_sync(asyncio.sleep(0, result=3), reuse_loop=True)

    assert asyncio.run(jupyter_cell()) == 3  # the parent's worker thread exists now
    assert run_sync(asyncio.sleep(0, result=4), reuse_loop=True) == 4  # and the main thread's kept loop
    pid = os.fork()
    if pid == 0:  # child
        code = 1
        try:
            signal.alarm(10)
            ok = asyncio.run(jupyter_cell()) == 3 and run_sync(asyncio.sleep(0, result=4), reuse_loop=True) == 4
            code = 0 if ok else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


KEPT_LOOP_CLIENT = """
import asyncio, sys
from sparqlab.core.event_loops import run_sync
from sparqlab.llm.openai_backend import OpenAIModel
from sparqlab.serving.model_server import serve_in_background

with serve_in_background("standin-echo", process=True) as url:
    model = OpenAIModel("standin-echo", base_url=url)
    ask = lambda text: model.chat([{"role": "user", "content": text}])
    print(run_sync(ask("main thread"), reuse_loop=True).text)

    async def inside_a_loop():
        return run_sync(ask("inside a loop"), reuse_loop=True).text

    print(asyncio.run(inside_a_loop()))
"""


def test_kept_loops_close_the_model_client_at_exit():
    """A served model used on kept loops (GenOp's evaluations) and never closed by the caller: the loops' shutdown
    at exit closes its HTTP client, so aiohttp reports no unclosed session or connector."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", KEPT_LOOP_CLIENT], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["main thread", "inside a loop"]
    assert "Unclosed" not in done.stderr, done.stderr


def test_fetch_answers_from_synchronous_code_and_from_inside_a_running_loop():
    """:func:`sparqlab.core.http.fetch` goes through ``run_sync``: the same bounded exchange from a script and from
    a notebook cell (a running loop, where ``asyncio.run`` is refused)."""
    from sparqlab.core.http import fetch
    from support.hostile_http import hostile_server, http_reply

    with hostile_server(http_reply(b'{"answer": 42}')) as url:
        response, body = fetch(f"{url}/plain", timeout_s=5, max_bytes=1000)

        async def notebook_cell() -> bytes:
            return fetch(f"{url}/in-a-loop", timeout_s=5, max_bytes=1000)[1]

        assert (response.status_code, body) == (200, b'{"answer": 42}')
        assert asyncio.run(notebook_cell()) == body
