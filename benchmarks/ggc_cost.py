"""Benchmark of GGC's cost shape: inference time of generator-only, correct-all and gated settings.

One gated run at τ = 0 (the corrector on every question) gives, from the same records, the stage times of all
three settings: generator-only = Σ generator; correct-all = Σ (generator + gate + corrector); gated at τ = Σ
(generator + gate) + Σ corrector over the questions with P ≥ τ. Measuring all three in one run keeps the ratios
free of the machine-load drift between separate runs. The paper reports gated ≈ 1.1 × generator-only and
≈ 0.55 × correct-all (with LLM generator and corrector); with the stand-ins the ratios describe their costs.

``--latency-ms D`` measures wall time instead: generator and corrector are the same stand-ins
behind ``standin-latency`` (each call answers after D ms, awaited, so concurrent calls overlap as on a batching
server), the gate is real, and in one run of the script side by side: a generator-only run, a gated run at τ
with the gate's calls batched (default) and unbatched (``gate_batch=False``, the path before), and a 5-τ sweep
(:func:`threshold_sweep`), each in a fresh runs folder at ``--concurrency`` questions in flight. Target:
gated / generator-only <= 1 + trigger rate x (corrector / generator) + 0.03, sweep <= 1.2 x gated.

Usage: python benchmarks/ggc_cost.py [--limit 120] [--train-limit 400] [--gate tfidf] [--threshold 0.5]
       [--kg-feedback] [--repeats 3] [--json OUT]
       python benchmarks/ggc_cost.py --latency-ms 1000 --limit 96 --concurrency 16 [--gate sbert]
       [--sweep 0.3 0.4 0.5 0.6 0.7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=120, help="test questions (default 120)")
    parser.add_argument("--train-limit", type=int, default=400, help="gate training questions (default 400)")
    parser.add_argument("--gate", default="tfidf", choices=("tfidf", "sbert"), help="gate backend")
    parser.add_argument("--threshold", type=float, default=0.5, help="τ of the gated setting (default 0.5)")
    parser.add_argument("--kg-feedback", action="store_true", help="gate and corrector with KG feedback")
    parser.add_argument("--repeats", type=int, default=3, help="independent τ=0 runs (fresh runs folders)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--latency-ms", type=float, help="wall-time mode: each model call answers after this delay")
    parser.add_argument("--concurrency", type=int, default=16, help="questions in flight (wall-time mode)")
    parser.add_argument("--sweep", type=float, nargs="+", default=[0.3, 0.4, 0.5, 0.6, 0.7],
                        help="thresholds of the sweep (wall-time mode)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.latency_ms is not None:
        return wall_times(args)

    from sparqlab.experiments.ggc import MODE_LABELS, run_modes
    from sparqlab.kg import open_kg
    from sparqlab.methods.ggc import pipeline_metrics, stage_frame

    ratios = []
    with open_kg("movies") as kg:
        gate = trained_gate(args, kg)
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory() as root:
                os.environ["SPARQLAB_RUNS"] = root  # a fresh folder: the run is executed, not resumed
                config = pipeline_config(experiment="ggc-cost", split="test", limit=args.limit)
                results = run_modes(config, gate.folder, ["gated"], kg=kg, threshold=0.0,
                                    kg_feedback=args.kg_feedback)
                frame = stage_frame(results[MODE_LABELS["gated"]].run_dir, kg)
            generator = float(frame["t_generator_s"].sum())
            gated = pipeline_metrics(frame, args.threshold)
            every = pipeline_metrics(frame, 0.0)
            ratios.append({"generator_s": generator, "gated_s": gated["time_s"], "correct_all_s": every["time_s"],
                           "gated/generator": gated["time_s"] / generator,
                           "gated/correct_all": gated["time_s"] / every["time_s"],
                           "correct_all/generator": every["time_s"] / generator,
                           "trigger_rate": gated["gate_trigger_rate"]})
    summary = {key: round(statistics.median(r[key] for r in ratios), 4) for key in ratios[0]}
    print(json.dumps({"settings": vars(args) | {"json": str(args.json) if args.json else None},
                      "median": summary, "runs": ratios}, indent=2))
    if args.json:
        args.json.write_text(json.dumps({"median": summary, "runs": ratios}, indent=2) + "\n", encoding="utf-8")


def pipeline_config(**settings):
    """The run settings both modes share: GGC's stand-ins (memory train[2500:]) on mcqa-movies, with
    ``settings``."""
    from sparqlab.experiments.ggc import GGC_RUN_DEFAULTS, with_memory_slice
    from sparqlab.runs import RunConfig

    config = RunConfig(**{**GGC_RUN_DEFAULTS, "model_roles": {"corrector": "standin-corrector"}, **settings})
    return with_memory_slice(config, start=2500)


def trained_gate(args, kg):
    """The ``args.gate`` gate trained on a generator pass over the first ``args.train_limit`` training questions
    (the gate reads the method's KG feedback, so ``kg_feedback`` goes to the run, not to ``GateSettings``)."""
    from sparqlab.experiments.ggc import gate_from_generator_run
    from sparqlab.methods.ggc import GateSettings

    return gate_from_generator_run(GateSettings(args.gate),
                                   pipeline_config(experiment="ggc-gate-data", split="train",
                                                   limit=args.train_limit),
                                   kg_feedback=args.kg_feedback, kg=kg)


def latency_config(config, delay_ms: float, concurrency: int):
    """``config`` with generator and corrector wrapped in ``standin-latency`` (same inner stand-ins and memory)."""
    corrector = config.model_roles["corrector"]
    roles = {"corrector": corrector.replace(model="standin-latency", options={
        "inner": corrector.model, "delay_ms": delay_ms, **corrector.options})}
    return config.replace(model="standin-latency", concurrency=concurrency, model_roles=roles,
                          model_options={"inner": config.model, "delay_ms": delay_ms, **config.model_options})


def wall_times(args) -> None:
    """Wall time of generator-only, gated (batched and unbatched gate) and a 5-τ sweep, side by side."""
    from sparqlab.experiments.ggc import threshold_sweep
    from sparqlab.kg import open_kg
    from sparqlab.methods.ggc import GGC
    from sparqlab.runs import run

    rows = []
    with open_kg("movies") as kg:
        gate = trained_gate(args, kg)
        config = latency_config(pipeline_config(experiment="ggc-wall", split="test", limit=args.limit),
                                args.latency_ms, args.concurrency)
        options = dict(gate_path=str(gate.folder), kg_feedback=args.kg_feedback)
        settings = {
            "generator only": lambda: run(GGC(mode="none"), config=config, kg=kg),
            "gated": lambda: run(GGC(mode="gated", threshold=args.threshold, **options), config=config, kg=kg),
            "gated, unbatched gate": lambda: run(GGC(mode="gated", threshold=args.threshold, gate_batch=False,
                                                     **options), config=config, kg=kg),
            "sweep": lambda: threshold_sweep(config, gate.folder, args.sweep, kg=kg, kg_feedback=args.kg_feedback),
        }
        with tempfile.TemporaryDirectory() as root:  # warm-up, untimed: stand-in memories, imports, KG caches
            os.environ["SPARQLAB_RUNS"] = root
            settings["gated"]()
        for _ in range(args.repeats):
            row = {}
            for name, call in settings.items():
                with tempfile.TemporaryDirectory() as root:
                    os.environ["SPARQLAB_RUNS"] = root  # a fresh folder: the run is executed, not resumed
                    start = time.perf_counter()
                    result = call()
                    row[name + " s"] = time.perf_counter() - start
                    if name == "sweep":
                        row["sweep trigger rates"] = dict(zip(args.sweep, result[1]["gate_trigger_rate"].round(3).tolist(),
                                                              strict=True))
                    if name == "gated":
                        predictions = result.predictions()
                        row["trigger_rate"] = float(predictions["extra"].map(lambda e: e["triggered"]).mean())
                        row["gate s (mean per call)"] = float(predictions["extra"].map(lambda e: e["t_gate_s"]).mean())
            row["bound"] = 1 + row["trigger_rate"] + 0.03  # corrector / generator = 1 (same delay)
            row["gated/generator"] = row["gated s"] / row["generator only s"]
            row["unbatched/generator"] = row["gated, unbatched gate s"] / row["generator only s"]
            row["sweep/gated"] = row["sweep s"] / row["gated s"]
            rows.append(row)
            print(json.dumps(row))
    summary = {key: round(statistics.median(r[key] for r in rows), 4) for key in rows[0]
               if key != "sweep trigger rates"}
    print(json.dumps({"settings": vars(args) | {"json": str(args.json) if args.json else None},
                      "median": summary}, indent=2))
    if args.json:
        args.json.write_text(json.dumps({"median": summary, "runs": rows}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
