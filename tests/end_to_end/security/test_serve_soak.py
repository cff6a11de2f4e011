"""Soak: `sparqlab serve` under a 1,024 open-file limit keeps answering normal requests while 1,100 idle sockets
and a few slow clients (a header byte at a time) hold connections to it; every idle socket and slow client is
cut off, and the session killed afterwards lists as ``killed`` with every answered request. Bounded and local
(127.0.0.1); the clients are the reliability probe's (benchmarks/serve_probe.py). Every wait is on
the server (an answer, a closed socket) and bounded per phase, far beyond what it takes on a loaded machine (a
few seconds in all alone), so a server that stops answering fails the phase with what it did, not the test run's
time limit."""

from __future__ import annotations

import json
import resource
import signal
import threading
import time

import pytest

from support.benchmarks import load_benchmark

probe = load_benchmark("serve_probe")

IDLE_SOCKETS = 1100
SLOW_CLIENTS = 10
NORMAL_REQUESTS = 30
READ_TIMEOUT_S = 2
PHASE_S = 60.0
"""Bound on each phase: the normal requests (all of them), the idle sockets' and slow clients' closing."""


@pytest.fixture
def server(ck25_cache, tmp_path):
    """`sparqlab serve direct -m standin-echo --kg ck25` in a child process limited to 1,024 open files, and
    this process allowed enough files for the clients."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < IDLE_SOCKETS + 200:
        pytest.skip(f"this test process may open only {hard} files; the soak needs {IDLE_SOCKETS + 200}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, IDLE_SOCKETS + 200), hard))
    runs = tmp_path / "runs"
    try:
        with probe.serving(runs, "-m", "standin-echo", "--read-timeout-s", str(READ_TIMEOUT_S), "--retry-after-s", "1",
                           experiment="soak") as (process, port):
            yield process, port, runs
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_normal_requests_are_answered_while_idle_and_slow_clients_hold_connections(server):
    from sparqlab.runs import list_runs

    process, port, runs = server
    assert probe.ask(port, "warm up: Which departments are there?", timeout_s=600)["status"] == 200
    idle = probe.open_idle(port, IDLE_SOCKETS)
    stop, cut = threading.Event(), []
    slow = probe.start_slow_clients(port, SLOW_CLIENTS, stop, cut)
    try:
        # a 503 (or a connection closed at the limit) is retried after Retry-After, as a well-behaved client does
        give_up_at = time.monotonic() + PHASE_S
        answers = [probe.ask(port, f"question {n}: Which products cost more than {n}?", give_up_at=give_up_at)
                   for n in range(NORMAL_REQUESTS)]
        server_files = probe.server_state(process.pid)["open_files"]
        closed = probe.count_closed(idle, within_s=PHASE_S)
        cut_by = time.monotonic() + PHASE_S
        for thread in slow:  # each ends when the server cuts it off
            thread.join(timeout=max(0.0, cut_by - time.monotonic()))
    finally:
        stop.set()
        for conn in idle:
            conn.close()

    statuses = [a["status"] for a in answers]
    assert statuses == [200] * NORMAL_REQUESTS, f"answered {statuses.count(200)} of {NORMAL_REQUESTS}"
    assert sum(a["attempts"] == 1 for a in answers) > NORMAL_REQUESTS // 2, "idle connections make room"
    assert process.poll() is None, "the server is still running"
    assert server_files < probe.FILE_LIMIT
    assert closed == IDLE_SOCKETS, f"{IDLE_SOCKETS - closed} idle sockets still open"
    assert len(cut) == SLOW_CLIENTS, "every slow client was cut off"

    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert "Too many open files" not in process.stderr.read(), "the server never ran out of descriptors"
    (row,) = list_runs(runs, "soak")
    assert row["status"] == "killed" and row["done"] == f"{NORMAL_REQUESTS + 1}/{NORMAL_REQUESTS + 1}"
    lines = [json.loads(line) for line in (runs / "soak" / row["run"] / "predictions.jsonl").read_text().splitlines()]
    assert len(lines) == NORMAL_REQUESTS + 1 and all(r["error_type"] == "no_gold" for r in lines)
