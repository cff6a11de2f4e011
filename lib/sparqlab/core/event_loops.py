"""Running a coroutine to completion from synchronous code, also inside a running event loop (a notebook's):
the one bridge every blocking call in the library goes through (a model's ``complete``, an HTTP :func:`fetch
<sparqlab.core.http.fetch>`, a GenOp evaluation on a loop its thread keeps)."""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import os
import threading
import weakref
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class _ThreadLoop:
    """An event loop owned by one thread and kept between :func:`run_sync` calls (``reuse_loop=True``); closed
    when its thread's holder goes away or at interpreter exit."""

    _local = threading.local()
    _open: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        _ThreadLoop._open.add(self.loop)

    def __del__(self) -> None:
        _shut_down(self.loop)

    @classmethod
    def current(cls) -> asyncio.AbstractEventLoop:
        holder = getattr(cls._local, "holder", None)
        if holder is None or holder.loop.is_closed():
            holder = cls._local.holder = cls()
        return holder.loop

    @classmethod
    def close_all(cls) -> None:
        for loop in list(cls._open):
            _shut_down(loop)


def _shut_down(loop: asyncio.AbstractEventLoop) -> None:
    """Close a kept loop as ``asyncio.run`` closes its own: async generators first (a model's HTTP client is closed
    by one, so aiohttp does not report an unclosed session at exit), then the loop."""
    if loop.is_closed() or loop.is_running():
        return
    try:
        loop.run_until_complete(loop.shutdown_asyncgens())
    except RuntimeError:  # another loop runs on this thread (a collection inside it): close without the generators
        pass
    finally:
        loop.close()


atexit.register(_ThreadLoop.close_all)


def _run_on_thread_loop(coroutine: Coroutine[Any, Any, T]) -> T:
    """``coroutine`` on this thread's kept loop; tasks it leaves behind are cancelled and awaited afterwards, as
    ``asyncio.run`` does before closing its loop, so nothing of one call runs during the next."""
    loop = _ThreadLoop.current()
    try:
        return loop.run_until_complete(coroutine)
    finally:
        leftover = asyncio.all_tasks(loop)
        for task in leftover:
            task.cancel()
        if leftover:
            loop.run_until_complete(asyncio.gather(*leftover, return_exceptions=True))


def _new_kept_worker() -> None:
    """One worker thread with a kept loop for ``reuse_loop`` calls made inside a running loop; the lock is held
    while it runs a call, so a concurrent call, or one made from the worker itself (nested), gets a fresh thread
    instead of waiting behind it. Made anew in a forked child, where the parent's threads and loops do not exist."""
    global _KEPT_WORKER, _KEPT_WORKER_BUSY
    _KEPT_WORKER = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="sparqlab-run-sync")
    _KEPT_WORKER_BUSY = threading.Lock()
    _ThreadLoop._local = threading.local()


_KEPT_WORKER: concurrent.futures.ThreadPoolExecutor
_KEPT_WORKER_BUSY: threading.Lock
_new_kept_worker()
os.register_at_fork(after_in_child=_new_kept_worker)


def run_sync(coroutine: Coroutine[Any, Any, T], *, reuse_loop: bool = False) -> T:
    """Run a coroutine to completion from synchronous code, also inside a running event loop (Jupyter), where
    ``asyncio.run`` is not allowed: there it runs in a fresh loop on a worker thread.

    ``reuse_loop``: run on an event loop kept between calls instead of a fresh ``asyncio.run`` loop (0.2–0.4 ms a
    call from synchronous code: loop set-up and tear-down, and on the main thread a ``repr`` of the finished task
    and its result when the SIGINT handler is removed; ~2 ms inside a running loop, with a new thread): the
    calling thread's own loop, or inside a running loop the loop of one kept worker thread (a fresh thread when
    that worker is busy). For short, frequent calls (a GenOp query evaluation). Differences from
    ``asyncio.run``: no SIGINT handler (Ctrl-C raises KeyboardInterrupt in the loop), the loop's default
    executor and async generators live on between calls."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False
    else:
        running = True
    if not running:  # outside the except block, so tracebacks are not prefixed with "no running event loop"
        return _run_on_thread_loop(coroutine) if reuse_loop else asyncio.run(coroutine)
    if reuse_loop and _KEPT_WORKER_BUSY.acquire(blocking=False):
        try:
            future = _KEPT_WORKER.submit(_run_on_thread_loop, coroutine)
        except BaseException:
            _KEPT_WORKER_BUSY.release()
            raise
        # released when the call ends, not when the caller stops waiting (Ctrl-C): the next call must not queue
        future.add_done_callback(lambda _: _KEPT_WORKER_BUSY.release())
        return future.result()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
