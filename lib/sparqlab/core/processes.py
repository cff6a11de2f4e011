"""Child processes (servers started for tests, benchmarks and headless runs; an embedded KG store's workers): a free
port, waiting until one answers, stopping them without leaving any; a child's heap cap, environment and exit with
its parent, and why it ended."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any


def stop_process(process: subprocess.Popen, timeout_s: float = 10.0, group: bool = False) -> None:
    """Ask ``process`` to terminate (SIGTERM), kill it (SIGKILL) if it has not exited after ``timeout_s``, and
    reap it. ``group``: signal its whole process group (a process started with ``start_new_session=True``, such
    as a model server with worker processes of its own)."""

    def send(sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if group:
                os.killpg(process.pid, sig)
            else:
                process.send_signal(sig)

    send(signal.SIGTERM)
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        send(signal.SIGKILL)
        process.wait()
    if group:  # workers of the group that outlived their leader
        send(signal.SIGKILL)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` nothing listens on at the moment (IPv6 when the host is an IPv6 address)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def wait_until_answering(url: str, process: subprocess.Popen, name: str, startup_timeout_s: float,
                         exit_detail: Callable[[], str]) -> None:
    """Return once ``url`` (a SPARQL endpoint) answers ``ASK {}``; :class:`RuntimeError` naming ``name`` when the
    process exits first (with ``exit_detail()``: its output) or nothing answers within ``startup_timeout_s``."""
    deadline = time.monotonic() + startup_timeout_s
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited during start-up: {exit_detail()}")
        try:
            urllib.request.urlopen(url + "?query=ASK%7B%7D", timeout=2).read()
            return
        except (urllib.error.URLError, ConnectionError):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not answer within {startup_timeout_s:g} s") from None
            time.sleep(0.05)


def cap_heap(limit_bytes: int) -> None:
    """Cap this process's heap at ``limit_bytes`` (RLIMIT_DATA; 0: no cap)."""
    if limit_bytes > 0:
        import resource

        resource.setrlimit(resource.RLIMIT_DATA, (limit_bytes, limit_bytes))


def python_child_env() -> dict[str, str]:
    """The environment of a Python child process (a KG store's worker): this one's, with sparqlab importable."""
    import sparqlab

    env = dict(os.environ)
    package_root = str(Path(sparqlab.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    return env


def exit_with_parent() -> None:
    """End this (worker) process when its parent dies, even in the middle of a long query (end of input comes too
    late)."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


OUT_OF_MEMORY = "it ran out of its memory limit"
"""How :func:`exit_cause` says that a process capped by :func:`cap_heap` hit its cap."""


def exit_cause(code: int, stderr: Any) -> str:
    """Why a child process ended, from its exit status and the last 4 KiB of its ``stderr`` (a binary file)."""
    stderr.seek(max(0, stderr.seek(0, os.SEEK_END) - 4096))
    tail = stderr.read().decode("utf-8", "replace")
    if "memory allocation" in tail or "MemoryError" in tail:
        return OUT_OF_MEMORY
    if code < 0:
        return f"it crashed ({signal.Signals(-code).name})"
    return f"it exited with code {code}"
