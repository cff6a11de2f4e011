"""Soak: `sparqlab serve` under a 1,024 open-file limit keeps answering normal requests while 1,100 idle sockets
and a few slow clients (a header byte at a time) hold connections to it; every idle socket is closed, and the
session killed afterwards lists as ``killed`` with every answered request. Bounded and local (127.0.0.1)."""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest

from sparqlab.data.ck25 import DATASET_IRI

FILE_LIMIT = 1024
IDLE_SOCKETS = 1100
SLOW_CLIENTS = 10
NORMAL_REQUESTS = 30
READ_TIMEOUT_S = 2
RETRY_AFTER_S = 1


def _limit_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (FILE_LIMIT, FILE_LIMIT))


@pytest.fixture
def server(ck25_cache, tmp_path):
    """`sparqlab serve direct -m standin-echo --kg ck25` in a child process limited to 1,024 open files."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < IDLE_SOCKETS + 200:
        pytest.skip(f"this test process may open only {hard} files; the soak needs {IDLE_SOCKETS + 200}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, IDLE_SOCKETS + 200), hard))
    command = [sys.executable, "-m", "sparqlab", "serve", "direct", "-m", "standin-echo", "--kg", "ck25",
               "--cache", "off", "--port", "0", "--read-timeout", str(READ_TIMEOUT_S), "--retry-after", str(RETRY_AFTER_S), "--experiment", "soak"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=_limit_files, env={**os.environ, "SPARQLAB_RUNS": str(tmp_path / "runs")})
    try:
        line = process.stdout.readline()
        assert line.startswith("serving "), process.stderr.read()
        port = int(line.rsplit(":", 1)[1].split("/")[0])
        yield process, port, tmp_path / "runs"
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
        process.stdout.close()
        process.stderr.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _ask(port: int, question: str, refusals: list[int]) -> int:
    """One normal request on a connection of its own, as a well-behaved client sends it: a 503 or a connection
    closed before the answer (both while the server is at its connection limit) is retried after Retry-After,
    and counted in ``refusals``. The final HTTP status (0: no answer after ten attempts)."""
    target = "/?" + urlencode({"question": question, "dataset": DATASET_IRI})
    for _ in range(10):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
                conn.sendall(f"GET {target} HTTP/1.1\r\nHost: soak\r\nConnection: close\r\n\r\n".encode())
                data = b""
                while chunk := conn.recv(65536):
                    data += chunk
        except (ConnectionResetError, BrokenPipeError):
            data = b""
        status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else 0
        if status not in (0, 503):
            return status
        refusals.append(status)
        time.sleep(RETRY_AFTER_S)
    return 0


def _slow_client(port: int, stop: threading.Event, closed: list[bool]) -> None:
    """Sends a request header a byte every 0.2 s until the server closes the connection (or the test ends)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
            for byte in b"GET /?question=slow HTTP/1.1\r\nX-Slow: " + b"z" * 10_000:
                if stop.is_set():
                    return
                conn.sendall(bytes([byte]))
                time.sleep(0.2)
    except OSError:
        closed.append(True)


def _open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_normal_requests_are_answered_while_idle_and_slow_clients_hold_connections(server):
    process, port, runs = server
    refusals: list[int] = []
    assert _ask(port, "warm up: Which departments are there?", refusals) == 200
    idle = []
    for _ in range(IDLE_SOCKETS):
        conn = socket.socket()
        conn.setblocking(False)
        conn.connect_ex(("127.0.0.1", port))
        idle.append(conn)
    stop, slow_closed = threading.Event(), []
    slow = [threading.Thread(target=_slow_client, args=(port, stop, slow_closed), daemon=True)
            for _ in range(SLOW_CLIENTS)]
    for thread in slow:
        thread.start()
    try:
        statuses = [_ask(port, f"question {n}: Which products cost more than {n}?", refusals)
                    for n in range(NORMAL_REQUESTS)]
        server_files = _open_fds(process.pid)
        closed = _count_closed(idle, within_s=10 * READ_TIMEOUT_S)
        for thread in slow:  # each ends when the server cuts it off
            thread.join(timeout=10 * READ_TIMEOUT_S)
    finally:
        stop.set()
        for conn in idle:
            conn.close()

    assert statuses == [200] * NORMAL_REQUESTS, f"answered {statuses.count(200)} of {NORMAL_REQUESTS}"
    assert len(refusals) < NORMAL_REQUESTS, "idle connections make room: most requests get in at once"
    assert process.poll() is None, "the server is still running"
    assert server_files < FILE_LIMIT
    assert closed == IDLE_SOCKETS, f"{IDLE_SOCKETS - closed} idle sockets still open"
    assert len(slow_closed) == SLOW_CLIENTS, "every slow client was cut off"

    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    from sparqlab.runs import list_runs

    (row,) = list_runs(runs, "soak")
    assert row["status"] == "killed" and row["done"] == f"{NORMAL_REQUESTS + 1}/{NORMAL_REQUESTS + 1}"
    folder = Path(runs) / "soak" / row["run"]
    lines = [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]
    assert len(lines) == NORMAL_REQUESTS + 1 and all(r["error_type"] == "no_gold" for r in lines)


def _count_closed(conns: list[socket.socket], within_s: float) -> int:
    """How many of the non-blocking ``conns`` the server closed within ``within_s`` (a bound, not a measure)."""
    import selectors

    selector = selectors.DefaultSelector()
    for conn in conns:
        selector.register(conn, selectors.EVENT_READ)
    closed, deadline = 0, time.monotonic() + within_s
    while closed < len(conns) and time.monotonic() < deadline:
        for key, _ in selector.select(timeout=0.5):
            try:
                data = key.fileobj.recv(4096)
            except (ConnectionResetError, ConnectionRefusedError):
                data = b""
            except BlockingIOError:
                continue
            if not data:
                selector.unregister(key.fileobj)
                closed += 1
    selector.close()
    return closed
