"""Every method on the real small model: SmolLM2-135M-Instruct served by llama-cpp-python on this machine
(``sparqlab model serve smollm2-135m``, started here and stopped at the end), a few MetaQA 1-hop questions each on
the movie KG, one question at a time (the server computes one request at a time).

Reported per method, from each run's metrics.json: model calls, prompt and completion tokens (the server's counts)
and seconds per question, and the outcome categories (``error_types``: correct, no_query, syntax_error,
empty_result, semantic:…; and the ``error_categories`` behind them, e.g. parse_failure). Replies are capped per
call kind as below (the same kinds the suite caps, a little more generously).

    .venv/bin/python benchmarks/real_model.py [--limit 5] [--threads N] [--only direct-0shot saga ...] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sparqlab.data import load
from sparqlab.data.question import Question
from sparqlab.kg import open_kg
from sparqlab.methods import make_method
from sparqlab.methods.genop.examples import MOVIE_QUERY
from sparqlab.runs import RunConfig, run
from sparqlab.serving.llama_cpp import start_llama_server

AGENT = {"action_format": "text", "max_actions": 6, "controller_max_tokens": 128, "reparse_max_tokens": 96,
         "prune_max_tokens": 96}
METHODS: dict[str, tuple[str, dict[str, Any]]] = {
    "direct-0shot": ("direct", {"generate_max_tokens": 128, "reparse_max_tokens": 128}),
    "direct-3shot": ("direct", {"generate_max_tokens": 128, "reparse_max_tokens": 128,
                                "few_shot_ids": "first three training questions"}),
    "spinach": ("spinach", AGENT),
    "saga": ("saga", AGENT),
    "ggc": ("ggc", {"mode": "all", "generate_max_tokens": 128, "correct_max_tokens": 128}),
    "desq": ("desq", {"train_limit": 20, "memory_limit": 100, "embedder": "hashing", "shots": 1,
                      "decompose_max_tokens": 128, "map_max_tokens": 128}),
    "genop": ("genop", {"evaluation": {"k": 2}, "propose_max_tokens": 24, "validate_max_tokens": 8}),
}
"""Row name → (method, options)."""


def method_options(options: dict[str, Any]) -> dict[str, Any]:
    """The options as the method takes them (the few-shot ids looked up)."""
    if "few_shot_ids" in options:
        return {**options, "few_shot_ids": tuple(q.id for q in load("metaqa-1hop", "train")[:3])}
    return options


def measure(row: str, server, kg, limit: int, root: Path) -> dict[str, Any]:
    """One method's run over ``limit`` questions against ``server``; its costs and outcomes per question."""
    method, options = METHODS[row]
    config = RunConfig(experiment=f"real-{row}", kg="movies", model=server.name, model_url=server.url, cache="off",
                       progress=False, concurrency=1, output_root=str(root))
    questions = None
    if method == "genop":  # generative queries, not questions: the movie example's query, asked limit times
        questions = [Question(f"genop-{i}", "related genres of Ridley Scott's films",
                              metadata={"query": MOVIE_QUERY}) for i in range(limit)]
    else:
        config = config.replace(dataset="metaqa-1hop", split="test", limit=limit)
    started = time.perf_counter()
    result = run(make_method(method, **method_options(options)), questions, config, kg=kg)
    wall = time.perf_counter() - started
    metrics = json.loads((result.run_dir / "metrics.json").read_text(encoding="utf-8"))
    n = metrics["n_done"]
    tokens = metrics["usage"]["tokens"]
    return {
        "method": row, "questions": n, "calls_per_q": metrics["usage"]["model_calls"]["total"] / n,
        "prompt_tokens_per_q": tokens.get("prompt", 0) / n,
        "completion_tokens_per_q": tokens.get("completion", 0) / n,
        "s_per_q": wall / n, "error_types": metrics["error_types"],
        "error_categories": {k: v for k, v in metrics["error_categories"].items() if k != "none"},
        "reply_outcomes": metrics["reply_outcomes"]["total"], "tokens_estimated": metrics["tokens_estimated"],
        "model_is_standin": metrics["model_is_standin"],
    }


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as the Markdown table of docs/performance.md."""
    def counts(values: dict[str, int]) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(values.items())) or "—"

    lines = ["| method | questions | calls / q | prompt tok / q | completion tok / q | s / q | outcomes "
             "(error_types) | error categories | truncated replies |",
             "|---|---:|---:|---:|---:|---:|---|---|---:|"]
    for r in rows:
        lines.append(f"| {r['method']} | {r['questions']} | {r['calls_per_q']:.1f} "
                     f"| {r['prompt_tokens_per_q']:,.0f} | {r['completion_tokens_per_q']:,.0f} "
                     f"| {r['s_per_q']:.1f} | {counts(r['error_types'])} "
                     f"| {counts(r['error_categories'])} | {r['reply_outcomes'].get('truncated', 0)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=5, help="questions per method (default 5)")
    parser.add_argument("--threads", type=int, default=None, help="the server's threads (default: every core)")
    parser.add_argument("--only", nargs="+", choices=sorted(METHODS), default=None, help="these rows only")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    args = parser.parse_args(argv)
    rows = []
    with start_llama_server(n_threads=args.threads) as server, tempfile.TemporaryDirectory() as root, \
            open_kg("movies", cache=False) as kg:
        print(f"{server.name} on {server.identity['engine']} {server.identity['engine_version']} "
              f"(n_ctx {server.identity['n_ctx']}, {args.threads or 'all'} threads)", file=sys.stderr)
        for row in args.only or METHODS:
            rows.append(measure(row, server, kg, args.limit, Path(root)))
            print(f"{row}: {rows[-1]['s_per_q']:.1f} s/question", file=sys.stderr)
    print(json.dumps(rows, indent=1) if args.json else table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
