"""The runner's concurrency benchmark: is the model server the limit, not the runner?

N questions, each making S sequential model calls to ``standin-latency`` served over HTTP by
``sparqlab serve-model`` (a separate process, so the server's CPU work does not share this interpreter) with a
fixed delay, then the runner's usual work: final query on a small embedded KG, scoring, two fsynced lines.
Every concurrency level runs the same questions in a fresh results folder with the response cache off. One model
call before the timed levels pays what a process pays once (importing the HTTP client stack, loading the TLS
context), which the first level, concurrency 1, used to count as its own; each level still counts its whole run
(the run's setup, checks and metrics included) over its calls.

Reported per level: wall time of the whole ``run()`` call, speedup over concurrency 1 (ideal = C; the target is
>= 0.8·C), calls per second, the model latency the client saw per call, and this process's CPU time per call
(runner + HTTP client). Two overheads, in milliseconds per model call:

- runner overhead at concurrency 1 over HTTP: (wall time - model latency seen by the client) / calls, i.e.
  everything the runner adds around the calls (context, trace, final query, scoring, writes, setup);
- runner-only overhead: the same questions against an in-process ``standin-latency`` with zero delay (no HTTP),
  wall time / calls.

    .venv/bin/python benchmarks/concurrency.py [--questions 96 --calls 2 --delay-ms 200 --concurrency 8 16 32]
        [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sparqlab.data.question import Question
from sparqlab.platform.base import Method, MethodOutput, QuestionContext
from sparqlab.platform.config import MethodConfig

BENCH_ANSWER = "http://example.org/bench/answer"
BENCH_SPARQL = f"SELECT ?x WHERE {{ <{BENCH_ANSWER}> ?p ?o BIND(<{BENCH_ANSWER}> AS ?x) }}"


@dataclass(frozen=True)
class MultiCallConfig(MethodConfig):
    """- ``calls``: sequential model calls per question."""

    calls: int = 1


class MultiCallMethod(Method):
    """S sequential model calls per question (like an agent's steps), then a fixed final query."""

    name = "bench-multicall"
    config_class = MultiCallConfig

    def __init__(self, calls: int):
        super().__init__(calls=calls)

    async def answer(self, question: Question, ctx: QuestionContext) -> MethodOutput:
        for step in range(self.config.calls):
            await ctx.chat([{"role": "user", "content": f"Question: {question.text} (step {step})"}],
                           kind="step", max_tokens=32)
        return MethodOutput(BENCH_SPARQL)


def bench_questions(n: int) -> list[Question]:
    return [Question(f"bench-{i:05d}", f"benchmark question {i}", gold_answers=[BENCH_ANSWER]) for i in range(n)]


def _bench_kg(folder: Path):
    """A one-triple embedded KG: the final query really runs on a store, but is cheap."""
    from sparqlab.kg.embedded import load_rdf_file

    path = folder / "bench.nt"
    path.write_text(f'<{BENCH_ANSWER}> <http://example.org/bench/p> "x" .\n', encoding="utf-8")
    return load_rdf_file(path)


def _timed_run(method: Method, questions: list[Question], concurrency: int, root: Path, kg: Any,
               progress: bool, **model: Any) -> dict[str, Any]:
    from sparqlab.runs.config import RunConfig
    from sparqlab.runs.runner import run

    config = RunConfig(experiment="bench", cache="off", concurrency=concurrency, progress=progress,
                       output_root=str(root / f"c{concurrency}-{time.monotonic_ns()}"), question_timeout_s=None,
                       model=model.get("name"), model_url=model.get("url"))
    start, cpu = time.perf_counter(), time.process_time()
    result = run(method, questions, config, kg=kg, model=model.get("model"))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    if not result.metrics["complete"] or result.metrics["error_categories"] != {"none": len(questions)}:
        raise RuntimeError(f"benchmark run at concurrency {concurrency} did not answer every question cleanly: "
                           f"{result.metrics['error_categories']}")
    calls = result.metrics["usage"]["model_calls"]["total"]
    model_latency = float(result.predictions()["model_latency_s"].sum())
    return {"concurrency": concurrency, "wall_s": wall, "calls": calls, "calls_per_s": calls / wall,
            "model_latency_ms_per_call": model_latency / calls * 1000, "client_cpu_ms_per_call": cpu / calls * 1000}


def run_benchmark(questions: int = 96, calls: int = 2, delay_ms: float = 200.0,
                  levels: list[int] | tuple[int, ...] = (8, 16, 32), progress: bool = False) -> dict[str, Any]:
    """Measure wall time at concurrency 1 and each of ``levels``; returns a JSON-serialisable report."""
    from sparqlab.llm import LatencyStandin, OpenAIModel
    from sparqlab.serving.model_server import serve_in_background

    method, qs = MultiCallMethod(calls), bench_questions(questions)
    rows = []
    with tempfile.TemporaryDirectory(prefix="sparqlab-bench-") as tmp:
        kg = _bench_kg(Path(tmp))
        try:
            kg.query(BENCH_SPARQL)  # start the store's query worker before timing anything
            local = _timed_run(method, qs, 1, Path(tmp), kg, False, model=LatencyStandin(delay_ms=0))
            with serve_in_background("standin-latency", delay_ms=delay_ms, process=True) as url:
                OpenAIModel("standin-latency", base_url=url).chat_sync("warm-up", max_tokens=1)  # once a process
                for level in [1, *levels]:
                    rows.append(_timed_run(method, qs, level, Path(tmp), kg, progress, name="standin-latency",
                                           url=url))
        finally:
            kg.close()
    base = rows[0]
    for row in rows:
        row["speedup"] = base["wall_s"] / row["wall_s"]
        row["target_speedup"] = 0.8 * row["concurrency"]
        row["meets_target"] = row["speedup"] >= row["target_speedup"]
    return {
        "questions": questions, "calls_per_question": calls, "delay_ms": delay_ms, "levels": rows,
        "runner_overhead_ms_per_call": base["wall_s"] * 1000 / base["calls"] - base["model_latency_ms_per_call"],
        "runner_only_ms_per_call": local["wall_s"] * 1000 / local["calls"],
        "http_overhead_ms_per_call": base["model_latency_ms_per_call"] - delay_ms,
        "load_average": os.getloadavg()[0], "cpus": os.cpu_count(),
    }


def format_report(report: dict[str, Any]) -> str:
    """The report as a table plus the overhead lines."""
    lines = [f"{report['questions']} questions x {report['calls_per_question']} calls, standin-latency served over "
             f"HTTP with {report['delay_ms']:g} ms delay per call",
             f"{'concurrency':>11}  {'wall_s':>7}  {'calls/s':>7}  {'speedup':>7}  {'target':>6}  ok   "
             f"{'latency_ms/call':>15}  {'client_cpu_ms/call':>18}"]
    for row in report["levels"]:
        lines.append(f"{row['concurrency']:>11}  {row['wall_s']:>7.2f}  {row['calls_per_s']:>7.1f}  "
                     f"{row['speedup']:>7.2f}  {row['target_speedup']:>6.1f}  "
                     f"{'yes' if row['meets_target'] else 'NO ':3}  {row['model_latency_ms_per_call']:>15.1f}  "
                     f"{row['client_cpu_ms_per_call']:>18.2f}")
    lines += ["target: speedup >= 0.8 x concurrency (the server, not the runner, should be the limit)"]
    for row in report["levels"]:
        if not row["meets_target"]:
            lines.append(shortfall_note(row, report))
    lines += [
        f"runner overhead per model call, excluding model latency (HTTP, concurrency 1): "
        f"{report['runner_overhead_ms_per_call']:.2f} ms",
        f"runner-only overhead per model call (in-process stand-in, no delay, no HTTP): "
        f"{report['runner_only_ms_per_call']:.2f} ms",
        f"HTTP client + server time per call beyond the {report['delay_ms']:g} ms delay: "
        f"{report['http_overhead_ms_per_call']:.2f} ms",
    ]
    return "\n".join(lines)


def shortfall_note(row: dict[str, Any], report: dict[str, Any]) -> str:
    """Why a level is marked NO: how far below the target it is, the best speedup its question count allows
    (N / ceil(N / C): the last wave runs part-full) and how busy the machine was while it ran."""
    level, questions = row["concurrency"], report["questions"]
    ideal = questions / math.ceil(questions / level)
    load = report.get("load_average")
    busy = f"; load average {load:.1f} on {report.get('cpus')} CPUs" if load is not None else ""
    return (f"NO at concurrency {level}: speedup {row['speedup']:.2f}x is {1 - row['speedup'] / row['target_speedup']:.1%} "
            f"below the target {row['target_speedup']:.1f}x (ideal with {questions} questions: {ideal:.1f}x; client "
            f"CPU {row['client_cpu_ms_per_call']:.2f} ms per call{busy})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", "-n", type=int, default=96, help="questions per run (default 96)")
    parser.add_argument("--calls", "-s", type=int, default=2, help="sequential model calls per question (default 2)")
    parser.add_argument("--delay-ms", type=float, default=200.0, help="server delay per call (default 200 ms)")
    parser.add_argument("--concurrency", "-c", type=int, nargs="+", default=[8, 16, 32],
                        help="concurrency levels compared with 1 (default 8 16 32)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    report = run_benchmark(questions=args.questions, calls=args.calls, delay_ms=args.delay_ms,
                           levels=args.concurrency, progress=sys.stderr.isatty())
    print(json.dumps(report, indent=2) if args.json else format_report(report))


if __name__ == "__main__":
    main()
