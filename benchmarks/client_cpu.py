"""Client CPU per model call at concurrency C (issue 23 target 5: <= 2 ms at C = 32), old and new
:class:`~sparqlab.llm.OpenAIModel` side by side in one run.

The server is ``sparqlab serve-model --model standin-latency`` in a separate process (its CPU is not counted), so
this process's CPU time is the client's: ``time.process_time()`` over the calls, divided by the number of calls.
Two measurements per path (below), alternated over ``--repeats`` so that a change of machine load hits both paths alike:

- ``runner``: the ``benchmarks/concurrency.py`` workload (N questions x S sequential calls, final query on a one-triple
  store, scoring, fsynced writes) through ``sparqlab.runs.runner.run`` at concurrency C: everything a runner core
  spends per model call;
- ``client``: the model alone, ``acomplete`` for N x S requests with at most C in flight on one event loop.

Paths: ``old`` is the ``OpenAIModel`` of git revision ``--baseline-rev`` (``chat.completions.create`` on HTTPX2,
before target 5), loaded from git into a private module, so every path runs in one interpreter against one server;
``post-httpx`` is today's model (the SDK's low-level ``post``, reply read from the raw JSON) on HTTPX2; ``new`` is
today's default (the same on the SDK's aiohttp transport). The runner's own CPU per call, without HTTP, is measured
alongside (in-process ``standin-latency`` with zero delay). ``--profile PATH...`` adds a cProfile of those
paths' client-only workload.

Usage: python benchmarks/client_cpu.py [--questions 192 --calls 2 --delay-ms 50 -c 32 --repeats 3 --profile old new]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import importlib.util
import io
import json
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from concurrency import MultiCallMethod, _bench_kg, _timed_run, bench_questions  # benchmarks/concurrency.py

from sparqlab.llm import ChatRequest, LatencyStandin, OpenAIModel
from sparqlab.serving.model_server import serve_in_background

BASELINE_REV = "134316ad301ca8d88687d560395ed813bfca4db9"
"""The last revision whose ``OpenAIModel`` called ``chat.completions.create`` (typed SDK path)."""

ROOT = Path(__file__).resolve().parents[1]


def baseline_model_class(rev: str) -> type:
    """``OpenAIModel`` as it was at ``rev``, imported from ``git show`` under a private module name."""
    source = subprocess.run(["git", "show", f"{rev}:lib/sparqlab/llm/openai_backend.py"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as file:
        file.write(source)
    spec = importlib.util.spec_from_file_location("sparqlab_baseline_openai_backend", file.name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    Path(file.name).unlink()
    return module.OpenAIModel


def client_only(model: Any, requests: list[ChatRequest], concurrency: int) -> dict[str, float]:
    """CPU and wall time of ``acomplete`` over ``requests``, at most ``concurrency`` in flight, one event loop."""

    async def drive() -> None:
        gate = asyncio.Semaphore(concurrency)

        async def one(request: ChatRequest) -> None:
            async with gate:
                reply = await model.acomplete(request)
                if reply.text != request.last_user_message:
                    raise RuntimeError(f"unexpected reply {reply.text!r}")

        try:
            await asyncio.gather(*(one(request) for request in requests))
        finally:
            await model.aclose()

    start, cpu = time.perf_counter(), time.process_time()
    asyncio.run(drive())
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"wall_s": wall, "cpu_ms_per_call": cpu / len(requests) * 1000}


PROFILE_PARTS = (
    ("the SDK's request (post -> request), in all", "openai/_base_client.py", "request"),
    ("  building the request: options, headers, URL, body (SDK + HTTPX2)", "openai/_base_client.py",
     "_build_request"),
    ("  request options (FinalRequestOptions.construct)", "openai/_models.py", "construct"),
    ("  HTTPX2 send, transport included", "httpx2/_client.py", "send"),
    ("    the transport: aiohttp", "httpx_aiohttp/transport.py", "handle_async_request"),
    ("    the transport: HTTPX2's connection pool", "httpcore2/_async/connection_pool.py", "handle_async_request"),
    ("  reading the response body", "httpx2/_models.py", "aread"),
    ("  typed: parameter transform (TypedDict)", "openai/_utils/_transform.py", "async_maybe_transform"),
    ("  typed: parsing into pydantic models", "openai/_legacy_response.py", "parse"),
    ("reading the reply (completion_response)", "sparqlab/llm/openai_backend.py", "completion_response"),
)
"""(label, file suffix, function) of the parts of a call whose cumulative CPU the profile reports."""


def profile_client(model: Any, requests: list[ChatRequest], concurrency: int, top: int) -> str:
    """cProfile (process time) of :func:`client_only`: the cumulative share of each of :data:`PROFILE_PARTS`,
    then the ``top`` functions by internal time."""
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    client_only(model, requests, concurrency)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    total = stats.total_tt
    lines = [f"{total / len(requests) * 1000:.2f} ms per call under the profiler; cumulative share of each part:"]
    for label, suffix, function in PROFILE_PARTS:
        spent = sum(row[3] for (file, _, name), row in stats.stats.items()
                    if name == function and file.replace("\\", "/").endswith(suffix))
        if spent:
            lines.append(f"  {spent / total:6.1%}  {label}")
    stats.sort_stats("tottime").print_stats(top)
    return "\n".join(lines) + "\n" + out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=192)
    parser.add_argument("--calls", type=int, default=2, help="sequential model calls per question")
    parser.add_argument("--delay-ms", type=float, default=50.0, help="the served stand-in's latency per call")
    parser.add_argument("-c", "--concurrency", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline-rev", default=BASELINE_REV)
    parser.add_argument("--profile", nargs="*", default=[], choices=("old", "post-httpx", "new"),
                        help="also profile these paths' client-only workload")
    parser.add_argument("--top", type=int, default=25, help="rows of the profile")
    parser.add_argument("--json", type=Path, help="write the report here too")
    args = parser.parse_args(argv)

    old = baseline_model_class(args.baseline_rev)
    paths = {"old": lambda url: old("standin-latency", base_url=url),
             "post-httpx": lambda url: OpenAIModel("standin-latency", base_url=url, http_transport="httpx"),
             "new": lambda url: OpenAIModel("standin-latency", base_url=url)}
    method, questions = MultiCallMethod(args.calls), bench_questions(args.questions)
    calls = args.questions * args.calls
    requests = [ChatRequest.build("standin-latency", f"question {i}", max_tokens=32) for i in range(calls)]
    rows: dict[str, dict[str, list[float]]] = {name: {"runner": [], "client": []} for name in paths}
    in_process: list[float] = []
    with tempfile.TemporaryDirectory(prefix="sparqlab-client-cpu-") as tmp, \
            serve_in_background("standin-latency", delay_ms=args.delay_ms, process=True) as url:
        kg = _bench_kg(Path(tmp))
        try:
            kg.query("ASK { ?s ?p ?o }")  # start the store's query worker before timing anything
            for make in paths.values():  # warm-up: imports, first connections
                client_only(make(url), requests[:64], args.concurrency)
            for _ in range(args.repeats):
                in_process.append(_timed_run(method, questions, args.concurrency, Path(tmp), kg, False,
                                             model=LatencyStandin(delay_ms=0))["client_cpu_ms_per_call"])
                for name, make in paths.items():
                    run = _timed_run(method, questions, args.concurrency, Path(tmp), kg, False, model=make(url))
                    rows[name]["runner"].append(run["client_cpu_ms_per_call"])
                    rows[name]["client"].append(client_only(make(url), requests, args.concurrency)["cpu_ms_per_call"])
            profiles = {name: profile_client(paths[name](url), requests, args.concurrency, args.top)
                        for name in args.profile}
        finally:
            kg.close()

    report = {"questions": args.questions, "calls_per_question": args.calls, "calls": calls,
              "delay_ms": args.delay_ms, "concurrency": args.concurrency, "repeats": args.repeats,
              "baseline_rev": args.baseline_rev,
              "runner_in_process_cpu_ms_per_call": {"median": statistics.median(in_process), "runs": in_process},
              "cpu_ms_per_call": {name: {kind: {"median": statistics.median(values), "runs": values}
                                         for kind, values in kinds.items()} for name, kinds in rows.items()}}
    for kind in ("runner", "client"):
        report[f"{kind}_new_over_old"] = (report["cpu_ms_per_call"]["new"][kind]["median"]
                                          / report["cpu_ms_per_call"]["old"][kind]["median"])
    print(f"{calls} calls ({args.questions} questions x {args.calls}), concurrency {args.concurrency}, served "
          f"standin-latency {args.delay_ms:g} ms, median of {args.repeats}; CPU ms per model call of this process")
    print(f"{'path':<10} {'runner':>8} {'client':>8}   runs (runner | client)")
    for name, kinds in report["cpu_ms_per_call"].items():
        runs = " ".join(f"{v:.2f}" for v in kinds["runner"]["runs"]) + " | " + \
            " ".join(f"{v:.2f}" for v in kinds["client"]["runs"])
        print(f"{name:<10} {kinds['runner']['median']:>8.2f} {kinds['client']['median']:>8.2f}   {runs}")
    print(f"runner without HTTP (in-process stand-in, zero delay): {report['runner_in_process_cpu_ms_per_call']['median']:.2f}"
          " ms per call")
    print(f"new / old: runner {report['runner_new_over_old']:.2f}, client {report['client_new_over_old']:.2f}")
    for name, profile in profiles.items():
        print(f"\ncProfile of the {name} path's client-only workload (process time):\n{profile}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
