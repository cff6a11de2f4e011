"""Child processes (servers started for tests, benchmarks and headless runs): a free port, waiting until one answers,
stopping them without leaving any."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable


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
