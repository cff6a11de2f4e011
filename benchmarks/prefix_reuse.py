"""What a question costs on the GPU, per method: prompt and completion tokens per question, and the share of the
prompt tokens a vLLM server with automatic prefix caching would reuse (the block-hash model of
sparqlab.llm.prefix_cache over each run's request log; `prefix_cache` in metrics.json), for every method of
experiments/all_methods.yaml plus SAGA with `prompt_layout=state_last`.

    .venv/bin/python benchmarks/prefix_reuse.py [--dataset metaqa-2hop --sample 8 --output benchmarks/prefix_reuse.md]

The models are the grid's stand-ins (standin-*: NOT LLMs): the prompts are the methods' real prompts, the replies
(hence how many steps an agent takes) the stand-ins'. Runs go to a temporary folder, with no response cache.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import tempfile
from pathlib import Path

from sparqlab.core.paths import PROJECT_ROOT
from sparqlab.core.text import markdown_table
from sparqlab.core.yaml_loader import load_yaml
from sparqlab.experiments.executors import run_local
from sparqlab.experiments.grid import expand_grid
from sparqlab.experiments.sweep import grid_status

GRID = PROJECT_ROOT / "experiments" / "all_methods.yaml"


def reuse_grid(dataset: str, sample: int) -> dict:
    document = load_yaml(GRID.read_text(encoding="utf-8"))
    document = {key: copy.deepcopy(document[key]) for key in ("run", "methods", "datasets")}
    document["run"].update(sample=sample, cache="off", concurrency=1)
    document["methods"]["saga-state-last"] = {**document["methods"]["saga"],
                                              "options": {"prompt_layout": "state_last"}}
    document["datasets"] = {dataset: document["datasets"][dataset]}
    document["name"] = "prefix_reuse"
    return document


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="metaqa-2hop", help="a dataset label of experiments/all_methods.yaml")
    parser.add_argument("--sample", type=int, default=8, help="questions per method")
    parser.add_argument("--output", default=None, help="also write the table (Markdown) to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as runs:
        os.environ["SPARQLAB_RUNS"] = runs
        grid = expand_grid(reuse_grid(args.dataset, args.sample), base=GRID.parent)
        failed = [o for o in run_local(grid, grid.cells, workers=0) if o.outcome != "ran"]
        if failed:
            raise SystemExit(f"cells failed: {[(o.cell.key, o.reason) for o in failed]}")
        rows = []
        for status in grid_status(grid):
            metrics = json.loads((status.run_dir / "metrics.json").read_text())
            cache, tokens, done = metrics["prefix_cache"]["simulated"], metrics["usage"]["tokens"], metrics["n_done"]
            rows.append({"method": status.cell.row, "questions": done,
                         "calls_per_q": round(metrics["usage"]["model_calls"]["total"] / done, 2),
                         "prompt_per_q": round(tokens["prompt"] / done), "completion_per_q": round(tokens["completion"] / done),
                         "recomputed_per_q": round(cache["recomputed_prompt_tokens"] / done),
                         "reused_share": cache["reused_share"]})
    header = ["method", "questions", "calls_per_q", "prompt_per_q", "completion_per_q", "recomputed_per_q",
              "reused_share"]
    lines = [f"Prefix-cache reuse on {args.dataset} ({args.sample} questions per method, stand-in models, "
             "vLLM block-hash model with 16-token blocks, no eviction)", "",
             markdown_table(header, [[row[key] for key in header] for row in rows])]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
