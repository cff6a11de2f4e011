"""GGC with a real fine-tuned generator, summarised from the runs that ``sparqlab reproduce --real --real-model
FILE.gguf 04_ggc_main 05_gate_threshold_sweep 06_error_categorisation`` left (docs/real-models.md, "GGC with the real
fine-tuned generator"): the generator's fine-tune (``training.json``), notebook 04's generator-only / correct-all /
gated table with 95 % intervals of the query accuracy, notebook 05's threshold sweep and its with-feedback row,
notebook 06's outcome counts and the gate-data run's.

    .venv/bin/python benchmarks/real_ggc.py --runs RUNS/real/MODEL --training FT_DIR --gguf FILE.gguf [--kg movies]

``--runs`` is the folder ``reproduce --real`` wrote the model's runs to (``runs/real/<model>``); of several runs of a
setting the newest is read. Prints one JSON object (``benchmarks/results/real-ggc/`` keeps the committed ones).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections import Counter
from pathlib import Path

import numpy as np

SUMMARY_COLUMNS = ("n", "accuracy", "item_precision", "item_recall", "item_f1", "gate_trigger_rate",
                   "gate_precision", "gate_recall", "gate_f1", "gate_fpr", "corrector_calls", "time_s")
"""The columns of notebook 04's table and notebook 05's sweep that the summary keeps."""
TRAINING_KEYS = ("steps", "train_runtime_s", "wall_s", "first_train_loss", "last_train_loss", "initial_eval_loss",
                 "final_eval_loss")


def newest_run(runs: Path, experiment: str, mode: str, kg_feedback: bool = False) -> Path:
    """The newest run folder of ``experiment`` whose GGC mode and feedback setting are these."""
    found = []
    for config_file in (runs / experiment).glob("*/config.json"):
        method = json.loads(config_file.read_text(encoding="utf-8"))["method"]["config"]
        if method["mode"] == mode and method["kg_feedback"] == kg_feedback:
            found.append(config_file.parent)
    if not found:
        raise FileNotFoundError(f"no {mode!r} GGC run (kg_feedback={kg_feedback}) under {runs / experiment}")
    return max(found, key=lambda folder: (folder / "predictions.jsonl").stat().st_mtime)


def setting_row(frame, threshold: float | None) -> dict:
    """:func:`pipeline_metrics` of one setting with a 95 % percentile-bootstrap interval of its query accuracy."""
    from sparqlab.eval.paired import bootstrap_ci
    from sparqlab.methods.ggc.metrics import pipeline_metrics, triggers

    metrics = pipeline_metrics(frame, threshold)
    chosen = triggers(frame, threshold)
    final = np.where(chosen, frame["corrected_correct"], frame["initial_correct"]).astype(float)
    row = {name: round(float(metrics[name]), 4) for name in SUMMARY_COLUMNS}
    return {**row, "threshold": threshold, "accuracy_ci95": [round(v, 4) for v in bootstrap_ci(final)]}


def outcomes(run_dir: Path) -> dict:
    """How many of a run's initial queries were right, and its error types."""
    rows = [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    return {"run": run_dir.name, "n": len(rows), "correct": sum(bool(r["em"]) for r in rows),
            "error_types": dict(Counter(r["error_type"] for r in rows))}


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Path, required=True, help="the model's runs folder (runs/real/<model>)")
    parser.add_argument("--training", type=Path, required=True, help="the generator's `train sft --out` folder")
    parser.add_argument("--gguf", type=Path, required=True, help="the served GGUF file (its sha256 is recorded)")
    parser.add_argument("--kg", default="movies", help="the KG the runs were scored on (default movies)")
    parser.add_argument("--thresholds", default="0.1,0.25,0.5,0.75,0.9", help="notebook 05's τ values")
    parser.add_argument("--threshold", type=float, default=0.5, help="notebook 04's τ (default 0.5)")
    parser.add_argument("--main-experiment", default="ggc-main",
                        help="notebook 04's experiment (its -p experiment; default ggc-main)")
    args = parser.parse_args()
    from sparqlab.kg import open_kg
    from sparqlab.methods.ggc.metrics import stage_frame

    graph = open_kg(args.kg)
    training = json.loads((args.training / "training.json").read_text(encoding="utf-8"))
    main_runs = {label: newest_run(args.runs, args.main_experiment, mode)
                 for label, mode in (("generator only", "none"), ("correct all", "all"), ("gated", "gated"))}
    table = {label: {"run": run.name, **setting_row(stage_frame(run, graph), None)}
             for label, run in main_runs.items()}
    sweep_run = newest_run(args.runs, "ggc-sweep", "gated")
    sweep_frame = stage_frame(sweep_run, graph)
    thresholds = [float(t) for t in args.thresholds.split(",")]
    feedback_run = newest_run(args.runs, "ggc-sweep", "gated", kg_feedback=True)
    gate_data = outcomes(newest_run(args.runs, "ggc-gate-data", "none"))
    errors = {label: outcomes(newest_run(args.runs, "ggc-errors", mode)) for label, mode in
              (("generator", "none"), ("after gated correction", "gated"))}
    print(json.dumps({
        "generator": {"gguf": args.gguf.name, "gguf_sha256": sha256(args.gguf), "base": training["base"]["converted_from"],
                      "data": {k: training["data"][k] for k in ("sha256", "records", "train", "eval", "train_tokens")},
                      "settings": {k: training["config"][k] for k in ("epochs", "learning_rate", "batch_size",
                                                                      "grad_accum", "max_length", "lora_r",
                                                                      "lora_alpha", "seed")},
                      "training": {k: training[k] for k in TRAINING_KEYS},
                      "tokens_per_s": round(training["data"]["train_tokens"] / training["train_runtime_s"], 1)},
        "gate_data": gate_data,
        "nb04_experiment": args.main_experiment, "nb04_threshold": args.threshold, "nb04": table,
        "nb05_sweep": {"run": sweep_run.name, "rows": [setting_row(sweep_frame, t) for t in thresholds],
                       "gate_probability_quantiles": {str(q): round(float(sweep_frame["gate_prob"].quantile(q)), 4)
                                                      for q in (0.0, 0.25, 0.5, 0.75, 1.0)}},
        "nb05_with_feedback": {"run": feedback_run.name,
                               **setting_row(stage_frame(feedback_run, graph), args.threshold)},
        "nb06_outcomes": errors, "load_average": os.getloadavg()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
