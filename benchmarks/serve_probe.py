"""Reliability probe of ``sparqlab serve`` (the TEXT2SPARQL endpoint), run as a hostile user and a careless one
would, all on 127.0.0.1 and bounded (the soak test, tests/end_to_end/security/test_serve_soak.py, uses its
clients).

    .venv/bin/python benchmarks/serve_probe.py [--scenarios burst,slow-model,idle,flood] [--json OUT]
        [--server-lib ../main/lib]

Each scenario starts its own ``sparqlab serve direct --kg ck25`` in a child process under a 1,024 open-file limit
(the common default, :data:`FILE_LIMIT`) and reports requests answered out of sent, latency (p50 / p95 / max, from
a client's first attempt to its final answer), the server's memory (resident now and at its peak) and its open
connections:

- ``burst``: 1,000 concurrent requests (``standin-schema-rules``); clients retry a 503 after its Retry-After, as
  the header asks;
- ``slow-model``: 100 concurrent requests against a 3 s stand-in model (``sparqlab serve-model --model
  standin-schema-rules --delay-ms 3000``) with a question timeout of 10 s and no retries: how long the last answer
  takes, how many are refused at once, how many ran out of time (``empty_query``);
- ``idle``: 10 idle sockets held open: how many the server has closed after 30 s;
- ``flood``: 1,100 idle sockets and 10 slow clients (a header byte every 0.2 s) while 20 normal requests are sent
  one after the other (retrying a 503 or a refused connection after Retry-After; 30 s per attempt, a request
  not answered within :data:`FLOOD_BUDGET_S` of the first counted as not answered).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from sparqlab.core.registry import Registry

FILE_LIMIT = 1024
"""The open-file limit the probed server runs under."""

FLOOD_BUDGET_S = 120.0
"""The flood's normal requests are sent within this time; the rest count as not answered."""

DATASET_IRI = "https://text2sparql.aksw.org/2025/corporate/"


def limit_files(limit: int = FILE_LIMIT) -> Callable[[], None]:
    """A ``preexec_fn`` setting the child's open-file limit (soft and hard) to ``limit``."""
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))


def _served_url(process: subprocess.Popen, what: str) -> str:
    line = process.stdout.readline()
    if not line.startswith("serving "):
        raise RuntimeError(f"{what} did not start: {process.stderr.read()[-2000:]}")
    return line.rsplit(" ", 1)[-1].strip()


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    process.stdout.close()
    process.stderr.close()


@contextmanager
def serving(runs: Path, *flags: str, experiment: str = "probe",
            env: dict[str, str] | None = None) -> Iterator[tuple[subprocess.Popen, int]]:
    """``sparqlab serve direct --kg ck25 --cache off --port 0 FLAGS`` under :data:`FILE_LIMIT`, its runs in
    ``runs`` (``env``: more environment variables, e.g. ``PYTHONPATH`` of another checkout to probe); yields the
    process and its port."""
    command = [sys.executable, "-m", "sparqlab", "serve", "direct", "--kg", "ck25", "--cache", "off", "--port", "0",
               "--experiment", experiment, *flags]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=limit_files(), env={**os.environ, **(env or {}), "SPARQLAB_RUNS": str(runs)})
    try:
        url = _served_url(process, "sparqlab serve")
        yield process, int(url.rsplit(":", 1)[1].split("/")[0])
    finally:
        _stop(process)


@contextmanager
def slow_model(delay_ms: int, env: dict[str, str] | None = None) -> Iterator[str]:
    """``sparqlab serve-model --model standin-schema-rules --delay-ms DELAY`` on a free port; yields its /v1
    URL."""
    command = [sys.executable, "-m", "sparqlab", "serve-model", "--model", "standin-schema-rules", "--delay-ms",
               str(delay_ms), "--port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, **(env or {})})
    try:
        yield _served_url(process, "sparqlab serve-model")
    finally:
        _stop(process)


def server_state(pid: int) -> dict[str, float]:
    """Resident memory now and at its peak (MiB), open descriptors and open sockets of a process."""
    status = Path(f"/proc/{pid}/status").read_text()
    memory = {line.split(":")[0]: int(line.split()[1]) / 1024 for line in status.splitlines()
              if line.startswith(("VmRSS", "VmHWM"))}
    links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
    return {"rss_mib": round(memory["VmRSS"], 1), "peak_rss_mib": round(memory["VmHWM"], 1),
            "open_files": len(links), "open_sockets": sum(link.startswith("socket:") for link in links)}


async def request(port: int, question: str, retries: int, timeout_s: float = 600.0,
                  give_up_at: float | None = None) -> dict[str, Any]:
    """One client: a GET on a connection of its own, retrying a 503 or a connection closed before the answer
    ``retries`` times after the Retry-After (1 s without one), each attempt given up after ``timeout_s`` and the
    whole at ``give_up_at`` (``time.monotonic()``). Its final status (0: no answer), attempts, latency from the
    first attempt and whether the query was empty."""
    target = "/?" + urlencode({"question": question, "dataset": DATASET_IRI})
    started, attempts, status, query = time.perf_counter(), 0, 0, None
    give_up_at = time.monotonic() + (retries + 1) * (timeout_s + 60) if give_up_at is None else give_up_at
    while attempts <= retries and time.monotonic() < give_up_at:
        attempts += 1
        wait = 1.0
        try:
            async with asyncio.timeout(max(0.1, min(timeout_s, give_up_at - time.monotonic()))):
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(f"GET {target} HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n".encode())
                data = await reader.read()
                writer.close()
        except (OSError, TimeoutError):  # refused, reset or closed before the answer, or no answer in time
            data = b""
        head, _, body = data.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"retry-after:"):
                wait = float(line.split(b":", 1)[1])
        if status == 200:
            query = json.loads(body).get("query")
        if status not in (0, 503):
            break
        if attempts <= retries:
            await asyncio.sleep(wait)
    return {"status": status, "attempts": attempts, "latency_s": time.perf_counter() - started,
            "empty_query": status == 200 and not query}


def ask(port: int, question: str, retries: int = 10, timeout_s: float = 60.0,
        give_up_at: float | None = None) -> dict[str, Any]:
    """:func:`request` from synchronous code."""
    return asyncio.run(request(port, question, retries, timeout_s, give_up_at))


def open_idle(port: int, n: int) -> list[socket.socket]:
    """``n`` non-blocking connections that never send anything."""
    sockets = []
    for _ in range(n):
        conn = socket.socket()
        conn.setblocking(False)
        conn.connect_ex(("127.0.0.1", port))
        sockets.append(conn)
    return sockets


def slow_client(port: int, stop: threading.Event, cut: list[bool]) -> None:
    """Send a request header a byte every 0.2 s until the server closes the connection (appended to ``cut``) or
    ``stop`` is set."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
            for byte in b"GET /?question=slow HTTP/1.1\r\nX-Slow: " + b"z" * 10_000:
                if stop.is_set():
                    return
                conn.sendall(bytes([byte]))
                time.sleep(0.2)
    except OSError:
        cut.append(True)


def start_slow_clients(port: int, n: int, stop: threading.Event, cut: list[bool]) -> list[threading.Thread]:
    threads = [threading.Thread(target=slow_client, args=(port, stop, cut), daemon=True) for _ in range(n)]
    for thread in threads:
        thread.start()
    return threads


def count_closed(conns: list[socket.socket], within_s: float) -> int:
    """How many of the non-blocking ``conns`` the server has closed, waiting until all are or ``within_s``
    passed."""
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


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Answered out of sent (at once and after retries), refusals, empty queries, latency quantiles."""
    latencies = [float(r["latency_s"]) for r in results]
    return {"sent": len(results), "answered": sum(r["status"] == 200 for r in results),
            "answered_first_try": sum(r["status"] == 200 and r["attempts"] == 1 for r in results),
            "refused_503": sum(r["status"] == 503 for r in results),
            "no_answer": sum(r["status"] == 0 for r in results),
            "empty_query": sum(bool(r["empty_query"]) for r in results),
            "retries": sum(max(0, int(r["attempts"]) - 1) for r in results),
            "p50_s": round(_quantile(latencies, 0.5), 3), "p95_s": round(_quantile(latencies, 0.95), 3),
            "max_s": round(max(latencies), 3)}


def _lines(runs: Path) -> int:
    return sum(p.read_bytes().count(b"\n") for p in runs.glob("probe/*/predictions.jsonl"))


def _concurrent(process: subprocess.Popen, port: int, runs: Path, n: int, retries: int) -> dict[str, Any]:
    """``n`` requests at once (after one warm-up request, so the server has prepared its method)."""
    ask(port, "warm up", retries=3, timeout_s=600)

    async def at_once():
        return await asyncio.gather(*(request(port, f"request {k}: Which departments are there?", retries)
                                      for k in range(n)))

    results = asyncio.run(at_once())
    return {**summary(results), **server_state(process.pid), "run_lines": _lines(runs)}


def burst(runs: Path, env: dict[str, str]) -> dict[str, Any]:
    with serving(runs, "-m", "standin-schema-rules", env=env) as (process, port):
        return _concurrent(process, port, runs, 1000, retries=30)


def slow(runs: Path, env: dict[str, str]) -> dict[str, Any]:
    # spelt --question-timeout: older checkouts' flag (a --server-lib baseline), which argparse also takes as the
    # prefix of today's --question-timeout-s
    with slow_model(3000, env) as model_url, serving(runs, "-m", "standin-schema-rules", "--model-url", model_url,
                                                      "--question-timeout", "10", env=env) as (process, port):
        return _concurrent(process, port, runs, 100, retries=0)


def idle(runs: Path, env: dict[str, str]) -> dict[str, Any]:
    with serving(runs, "-m", "standin-schema-rules", env=env) as (process, port):
        ask(port, "warm up", retries=3, timeout_s=600)  # the server accepts once its method is prepared
        sockets = open_idle(port, 10)
        time.sleep(1.0)
        held = server_state(process.pid)["open_sockets"]
        time.sleep(29.0)
        closed = count_closed(sockets, within_s=0.5)
        for conn in sockets:
            conn.close()
        return {"idle_sockets": 10, "still_open_after_30s": 10 - closed, "server_sockets_at_1s": held,
                **server_state(process.pid)}


def flood(runs: Path, env: dict[str, str]) -> dict[str, Any]:
    with serving(runs, "-m", "standin-schema-rules", env=env) as (process, port):
        ask(port, "warm up", retries=3, timeout_s=600)
        idle_sockets = open_idle(port, 1100)
        stop, cut = threading.Event(), []
        start_slow_clients(port, 10, stop, cut)
        deadline = time.monotonic() + FLOOD_BUDGET_S
        results = [ask(port, f"flood {n}: Which suppliers are there?", retries=10, timeout_s=30, give_up_at=deadline)
                   for n in range(20)]  # a request not answered within the budget counts as not answered
        state = server_state(process.pid)
        stop.set()
        for conn in idle_sockets:
            conn.close()
        return {**summary(results), **state, "idle_sockets": 1100, "slow_clients": 10}


SCENARIOS: Registry[Callable[[Path, dict[str, str]], dict[str, Any]]] = Registry("probe scenario", group=None)
"""The probe's scenarios by name (see the module docstring)."""
for _name, _scenario in (("burst", burst), ("slow-model", slow), ("idle", idle), ("flood", flood)):
    SCENARIOS.register(_name, _scenario)


def run_probe(names: list[str], report: Callable[[str, dict[str, Any]], None] | None = None,
              server_env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run the named scenarios (:data:`SCENARIOS`), each in a scratch runs folder, the servers with
    ``server_env`` added to their environment; ``report(name, result)`` is called as each ends. This process may
    open enough files for the clients' sockets."""
    scenarios = {name: SCENARIOS.get(name) for name in names}  # a misspelt name fails before any scenario runs
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    results = {}
    for name, scenario in scenarios.items():
        with tempfile.TemporaryDirectory(prefix=f"serve-probe-{name}-") as scratch:
            results[name] = scenario(Path(scratch), server_env or {})
        if report:
            report(name, results[name])
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", default=",".join(SCENARIOS.loaded()),
                        help="comma-separated (default: all, %(default)s)")
    parser.add_argument("--json", default=None, help="also write the results to this file")
    parser.add_argument("--server-lib", default=None, metavar="DIR",
                        help="run the probed servers from another checkout's lib/ folder (PYTHONPATH), e.g. a "
                             "worktree of main for a baseline")
    args = parser.parse_args()

    def report(name: str, result: dict) -> None:
        print(f"{name:<11} " + "  ".join(f"{key} {value}" for key, value in result.items()), flush=True)

    results = run_probe(args.scenarios.split(","), report,
                        {"PYTHONPATH": args.server_lib} if args.server_lib else None)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
