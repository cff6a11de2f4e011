"""Throughput of one model on three replicas of different latency against each replica alone, in one run.

Three `sparqlab serve-model --delay-ms D` processes (default 300, 600, 1200 ms per call: slow enough that
the 2-core machine's CPU is not what limits them). Each replica alone is
driven with `--concurrency` calls in flight for `--seconds`; then the three together, through the client's replica
set (`model_url` A,B,C: least in flight first), with 3 × concurrency in flight. Target: the set's throughput is at
least 0.9 × the sum of the three alone.

    .venv/bin/python benchmarks/replicas.py [--delays 300 600 1200 --concurrency 8 --seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time

from sparqlab.llm import get_model
from sparqlab.llm.base import ChatRequest
from sparqlab.serving.model_server import serve_in_background

MODEL = "standin-keyword-rules"


async def _throughput(model, in_flight: int, seconds: float) -> float:
    """Calls completed within ``seconds`` per second, with ``in_flight`` callers (the calls still running at the
    end do not count, so a slow replica's tail does not stretch the window)."""
    done = 0
    stop = time.perf_counter() + seconds
    request = ChatRequest.build(MODEL, "Which movies did Ridley Scott direct?", max_tokens=64)

    async def caller() -> None:
        nonlocal done
        while time.perf_counter() < stop:
            await model.acomplete(request)
            done += time.perf_counter() <= stop

    await asyncio.gather(*(caller() for _ in range(in_flight)))
    await model.aclose()
    return done / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delays", type=float, nargs=3, default=[300, 600, 1200], help="per-call delay of each (ms)")
    parser.add_argument("--concurrency", type=int, default=8, help="calls in flight per replica")
    parser.add_argument("--seconds", type=float, default=10.0, help="duration of each measurement")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        urls = [stack.enter_context(serve_in_background(MODEL, process=True, delay_ms=delay))
                for delay in args.delays]
        alone = [asyncio.run(_throughput(get_model(MODEL, base_url=url), args.concurrency, args.seconds))
                 for url in urls]
        replicas = get_model(MODEL, base_url=",".join(urls))
        together = asyncio.run(_throughput(replicas, 3 * args.concurrency, args.seconds))
        stats = replicas.replica_stats()
    result = {"delays_ms": args.delays, "concurrency_per_replica": args.concurrency, "seconds": args.seconds,
              "alone_calls_per_s": [round(x, 2) for x in alone], "sum_alone": round(sum(alone), 2),
              "replica_set_calls_per_s": round(together, 2), "ratio": round(together / sum(alone), 3),
              "target": 0.9, "met": together >= 0.9 * sum(alone),
              "calls_per_replica": {url: s["calls"] for url, s in stats.items()}}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
