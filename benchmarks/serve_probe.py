"""Reliability probe of `sparqlab serve` (the TEXT2SPARQL endpoint), run as a hostile user and a careless one
would, all on 127.0.0.1 and bounded. Each scenario starts its own `sparqlab serve direct --kg ck25` in a child
process under a 1,024 open-file limit (the common default) and reports requests answered out of sent, latency
(p50 / p95 / max, from a client's first attempt to its final answer), the server's memory (resident now and
peak) and its open connections:

- ``burst``: 1,000 concurrent requests (``standin-schema-rules``); clients retry a 503 after its Retry-After, as the
  header asks;
- ``slow-model``: 100 concurrent requests against a 3 s stand-in model (``sparqlab serve-model --model
  standin-schema-rules --delay-ms 3000``) with ``--question-timeout 10`` and no retries: how long the last
  answer takes, how many are refused at once, how many ran out of time (``empty_query``);
- ``idle``: 10 idle sockets held open: how many the server has closed after 30 s;
- ``flood``: 1,100 idle sockets and 10 slow clients (a header byte every 0.2 s) while 20 normal requests are
  sent one after the other (retrying a 503 or a refused connection after Retry-After; 30 s per attempt, the
  requests not sent within 120 s counted as not answered).

Usage: python benchmarks/serve_probe.py [--scenarios burst,slow-model,idle,flood] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode

FILE_LIMIT = 1024
FLOOD_BUDGET_S = 120.0
"""The flood's normal requests are sent within this time; the rest count as not answered."""
DATASET_IRI = "https://text2sparql.aksw.org/2025/corporate/"


def _limit_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (FILE_LIMIT, FILE_LIMIT))


def _first_line(process: subprocess.Popen, what: str) -> str:
    line = process.stdout.readline()
    if not line.startswith("serving "):
        raise RuntimeError(f"{what} did not start: {process.stderr.read()[-2000:]}")
    return line.rsplit(" ", 1)[-1].strip()


@contextmanager
def serving(runs: Path, *flags: str):
    """`sparqlab serve direct --kg ck25 --port 0 FLAGS` under the file limit; yields (process, port)."""
    command = [sys.executable, "-m", "sparqlab", "serve", "direct", "--kg", "ck25", "--cache", "off", "--port", "0",
               "--experiment", "probe", *flags]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=_limit_files, env={**os.environ, "SPARQLAB_RUNS": str(runs)})
    try:
        url = _first_line(process, "sparqlab serve")
        yield process, int(url.rsplit(":", 1)[1].split("/")[0])
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()
        process.stderr.close()


@contextmanager
def slow_model(delay_ms: int):
    """`sparqlab serve-model --model standin-schema-rules --delay-ms DELAY` on a free port; yields its /v1
    URL."""
    command = [sys.executable, "-m", "sparqlab", "serve-model", "--model", "standin-schema-rules", "--delay-ms",
               str(delay_ms), "--port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        yield _first_line(process, "sparqlab serve-model")
    finally:
        process.terminate()
        process.wait(timeout=60)
        process.stdout.close()
        process.stderr.close()


def server_state(pid: int) -> dict[str, float]:
    """Resident memory now and at its peak (MiB), open descriptors and open TCP connections of the server."""
    status = Path(f"/proc/{pid}/status").read_text()
    memory = {line.split(":")[0]: int(line.split()[1]) / 1024 for line in status.splitlines()
              if line.startswith(("VmRSS", "VmHWM"))}
    links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
    return {"rss_mib": round(memory["VmRSS"], 1), "peak_rss_mib": round(memory["VmHWM"], 1),
            "open_files": len(links), "open_sockets": sum(link.startswith("socket:") for link in links)}


async def request(port: int, question: str, retries: int, timeout_s: float = 600.0) -> dict[str, object]:
    """One client: a GET on a connection of its own, retrying a 503 or a refused connection ``retries`` times
    after the Retry-After, each attempt given up after ``timeout_s``. Its final status (0: no answer), attempts
    and latency from the first attempt."""
    target = "/?" + urlencode({"question": question, "dataset": DATASET_IRI})
    started, attempts, status, query = time.perf_counter(), 0, 0, None
    while attempts <= retries:
        attempts += 1
        wait = 1.0
        try:
            async with asyncio.timeout(timeout_s):
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(f"GET {target} HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n".encode())
                data = await reader.read()
                writer.close()
        except (ConnectionError, OSError, TimeoutError):
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


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def summary(results: list[dict[str, object]]) -> dict[str, object]:
    latencies = [float(r["latency_s"]) for r in results]
    return {"sent": len(results), "answered": sum(r["status"] == 200 for r in results),
            "answered_first_try": sum(r["status"] == 200 and r["attempts"] == 1 for r in results),
            "refused_503": sum(r["status"] == 503 for r in results),
            "no_answer": sum(r["status"] == 0 for r in results),
            "empty_query": sum(bool(r["empty_query"]) for r in results),
            "retries": sum(int(r["attempts"]) - 1 for r in results),
            "p50_s": round(_quantile(latencies, 0.5), 3), "p95_s": round(_quantile(latencies, 0.95), 3),
            "max_s": round(max(latencies), 3)}


def _lines(runs: Path) -> int:
    return sum(p.read_bytes().count(b"\n") for p in runs.glob("probe/*/predictions.jsonl"))


def burst(runs: Path) -> dict[str, object]:
    with serving(runs, "-m", "standin-schema-rules") as (process, port):
        asyncio.run(request(port, "warm up", 3))

        async def all_at_once():
            return await asyncio.gather(*(request(port, f"burst {n}: Which departments are there?", 30)
                                          for n in range(1000)))

        results = asyncio.run(all_at_once())
        return {**summary(results), **server_state(process.pid), "run_lines": _lines(runs)}


def slow(runs: Path) -> dict[str, object]:
    with slow_model(3000) as model_url, serving(runs, "-m", "standin-schema-rules", "--model-url", model_url,
                                                 "--question-timeout", "10") as (process, port):
        asyncio.run(request(port, "warm up", 0))

        async def hundred():
            return await asyncio.gather(*(request(port, f"slow {n}: Which products are there?", 0)
                                          for n in range(100)))

        results = asyncio.run(hundred())
        return {**summary(results), **server_state(process.pid), "run_lines": _lines(runs)}


def idle(runs: Path) -> dict[str, object]:
    with serving(runs, "-m", "standin-schema-rules") as (process, port):
        asyncio.run(request(port, "warm up", 3))  # the server accepts once its method is prepared
        sockets = [socket.create_connection(("127.0.0.1", port)) for _ in range(10)]
        time.sleep(1.0)
        held = server_state(process.pid)["open_sockets"]
        time.sleep(29.0)
        still_open = 0
        for conn in sockets:
            conn.setblocking(False)
            try:
                closed = conn.recv(1) == b""  # end of stream: the server closed it
            except BlockingIOError:
                closed = False
            except ConnectionError:
                closed = True
            still_open += not closed
            conn.close()
        return {"idle_sockets": 10, "still_open_after_30s": still_open, "server_sockets_at_1s": held,
                **server_state(process.pid)}


def flood(runs: Path) -> dict[str, object]:
    with serving(runs, "-m", "standin-schema-rules") as (process, port):
        asyncio.run(request(port, "warm up", 3))
        idle_sockets = []
        for _ in range(1100):
            conn = socket.socket()
            conn.setblocking(False)
            conn.connect_ex(("127.0.0.1", port))
            idle_sockets.append(conn)
        stop = threading.Event()

        def trickle() -> None:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
                    for byte in b"GET /?question=slow HTTP/1.1\r\nX-Slow: " + b"z" * 10_000:
                        if stop.is_set():
                            return
                        conn.sendall(bytes([byte]))
                        time.sleep(0.2)
            except OSError:
                pass

        slow_clients = [threading.Thread(target=trickle, daemon=True) for _ in range(10)]
        for thread in slow_clients:
            thread.start()
        deadline = time.monotonic() + FLOOD_BUDGET_S
        results = []
        for n in range(20):  # requests not sent within the budget count as not answered
            results.append(asyncio.run(request(port, f"flood {n}: Which suppliers are there?", 10, timeout_s=30))
                           if time.monotonic() < deadline else
                           {"status": 0, "attempts": 0, "latency_s": 0.0, "empty_query": False})
        state = server_state(process.pid)
        stop.set()
        for conn in idle_sockets:
            conn.close()
        return {**summary(results), **state, "idle_sockets": 1100, "slow_clients": 10}


SCENARIOS = {"burst": burst, "slow-model": slow, "idle": idle, "flood": flood}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma-separated (default: all)")
    parser.add_argument("--json", default=None, help="also write the results to this file")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))  # the clients' own sockets
    results = {}
    for name in args.scenarios.split(","):
        with tempfile.TemporaryDirectory(prefix=f"serve-probe-{name}-") as scratch:
            results[name] = SCENARIOS[name](Path(scratch))
        print(f"{name:<11} " + "  ".join(f"{key} {value}" for key, value in results[name].items()), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
