"""A real fine-tune on this machine, start to end, through the workbench's own commands (docs/real-models.md):
SmolLM2-135M-Instruct (the bundled GGUF) converted for the trainer, generic question → query records of a KG's
training questions, LoRA SFT, the adapter merged and exported to GGUF, and `sparqlab run direct` on a 100-question
sample before (the bundled model, 3-shot with the method's KG prompt) and after (the tuned model, asked with the
prompt it was trained on), each model served by llama.cpp with ``--threads`` threads (default 2).

    .venv/bin/python benchmarks/real_finetune.py metaqa-1hop [--records 200] [--epochs 2] [--lr 5e-4] [--out DIR]

MetaQA ships only its test split: its records come from the rest of it, without the scored sample's questions and
topic entities (``--exclude-sample``). MCQA-movies trains on its train split and is scored on its test split.
Prints one JSON object: the steps' wall times, the training summary (loss, tokens, steps) and F1/EM with 95 %
intervals before and after, with each step's peak resident memory. Minutes-long: run it on an otherwise idle
machine and note the load beside the times. Resumable: started again with the same arguments, it skips the steps
whose outputs exist (the training resumes from its checkpoints; an evaluation's scores are kept in
``DATASET-before.json`` / ``DATASET-after.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPLITS = {"metaqa-1hop": ("test", "test"), "mcqa-movies": ("train", "test")}
"""Dataset → (the split its training records come from, the scored split)."""
FEW_SHOT = ("-o", "few_shot_dataset=mcqa-movies", "-o", "few_shot_ids=train_0,train_1,train_2")
"""The base model's worked examples: three MCQA-movies training questions (the movie KG's training set)."""
TRAINED = ("-o", "prompt=trained")
"""The tuned model is asked with the short system prompt its records carry."""
SAMPLE, SAMPLE_SEED = 100, 0


def sparqlab(*args: str) -> tuple[str, int]:
    """Run one ``sparqlab`` command; its standard output and peak resident memory in MB (``wait4``'s usage of
    that one child)."""
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        child = subprocess.Popen([sys.executable, "-m", "sparqlab", *args], stdout=stdout, stderr=stderr)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0), stderr.seek(0)
        if child.returncode:
            raise subprocess.CalledProcessError(child.returncode, child.args, stdout.read(), stderr.read())
        return stdout.read(), usage.ru_maxrss // 1024


def timed(label: str, times: dict[str, float], memory: dict[str, int], *args: str) -> str:
    """Run one ``sparqlab`` command, noting its wall time and peak memory under ``label``."""
    started = time.monotonic()
    output, memory[label] = sparqlab(*args)
    times[label] = round(time.monotonic() - started, 1)
    return output


def evaluate(model: str, dataset: str, split: str, out: Path, threads: int, *options: str) -> dict:
    """`sparqlab run direct` on the scored sample with ``model`` served by llama.cpp; the run's F1/EM summary."""
    from sparqlab.serving.llama_cpp import start_llama_server

    with start_llama_server(model, n_ctx=4096, n_threads=threads) as server:
        printed, _ = sparqlab("run", "direct", "-d", dataset, "--split", split, "--sample", str(SAMPLE),
                           "--sample-seed", str(SAMPLE_SEED), "-m", server.name, "--model-url", server.url,
                           "-e", "real-finetune", "--output-root", str(out), "--max-tokens", "192",
                           "--concurrency", "1", "--progress", "false", *options)
    return scores(Path(printed.splitlines()[0]))


def scores(run_dir: Path) -> dict:
    """Mean F1 and EM of a run folder's predictions with 95 % percentile-bootstrap intervals, and its no-query
    share."""
    from sparqlab.eval.paired import bootstrap_ci

    rows = [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    f1, em = [r["f1"] for r in rows], [float(r["em"]) for r in rows]
    return {"run": run_dir.name, "n": len(rows), "f1": sum(f1) / len(rows), "f1_ci95": bootstrap_ci(f1),
            "em": sum(em) / len(rows), "em_ci95": bootstrap_ci(em),
            "no_query": sum(r["predicted_sparql"] is None for r in rows) / len(rows)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", choices=sorted(SPLITS))
    parser.add_argument("--records", type=int, default=200, help="training records (default 200)")
    parser.add_argument("--epochs", type=float, default=2, help="epochs (default 2)")
    parser.add_argument("--lr", default="5e-4", help="learning rate (default 5e-4)")
    parser.add_argument("--threads", type=int, default=2, help="llama.cpp threads per server (default 2)")
    parser.add_argument("--out", default="runs/real-finetune", help="output folder (default runs/real-finetune)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    train_split, scored_split = SPLITS[args.dataset]
    data, tuned_dir = out / f"{args.dataset}.jsonl", out / f"sft-{args.dataset}"
    tuned = out / f"{args.dataset}.gguf"
    times: dict[str, float] = {}
    memory: dict[str, int] = {}
    timed("convert", times, memory, "model", "convert", "smollm2-135m")
    held_out = (["--allow-test", "--exclude-sample", str(SAMPLE), "--exclude-seed", str(SAMPLE_SEED)]
                if train_split == scored_split else [])
    timed("data", times, memory, "train", "data", "--builder", "generic", "--dataset", args.dataset, "--split",
          train_split, *held_out, "--order-seed", "0", "--limit", str(args.records), "--out", str(data))
    if not (tuned_dir / "training.json").exists():
        timed("sft", times, memory, "train", "sft", "--base", "smollm2-135m", "--data", str(data), "--out",
              str(tuned_dir), "--epochs", str(args.epochs), "--lr", args.lr, "--batch-size", "4", "--grad-accum",
              "2", "--max-length", "384", "--save-steps", "12", "--no-progress")
    if not tuned.exists():
        timed("export", times, memory, "train", "export", "--base", "smollm2-135m", "--adapter",
              str(tuned_dir / "adapter"), "--out", str(tuned))
    training = json.loads((tuned_dir / "training.json").read_text(encoding="utf-8"))
    results = {}
    for side, model, options in (("before", "smollm2-135m", FEW_SHOT), ("after", str(tuned), TRAINED)):
        kept = out / f"{args.dataset}-{side}.json"
        if not kept.exists():
            started = time.monotonic()
            summary = evaluate(model, args.dataset, scored_split, out, args.threads, *options)
            summary["wall_s"] = round(time.monotonic() - started, 1)
            kept.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        results[side] = json.loads(kept.read_text(encoding="utf-8"))
    keys = ("steps", "train_runtime_s", "first_train_loss", "last_train_loss", "initial_eval_loss",
            "final_eval_loss")
    print(json.dumps({"dataset": args.dataset, "records": args.records, "epochs": args.epochs, "lr": args.lr,
                      "times_s": times, "peak_memory_mb": memory, "load_average": os.getloadavg(),
                      "training": {**{k: training[k] for k in keys}, "tokens": training["data"]["train_tokens"]},
                      **results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
