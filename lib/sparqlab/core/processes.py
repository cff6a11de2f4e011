"""Stopping child processes (servers started for tests, benchmarks and headless runs) without leaving any."""

from __future__ import annotations

import subprocess


def stop_process(process: subprocess.Popen, timeout_s: float = 10.0) -> None:
    """Ask ``process`` to terminate, kill it if it has not exited after ``timeout_s``, and reap it."""
    process.terminate()
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
