"""Benchmark of GGC's cost shape: inference time of generator-only, correct-all and gated settings.

One gated run at τ = 0 (the corrector on every question) gives, from the same records, the stage times of all
three settings: generator-only = Σ generator; correct-all = Σ (generator + gate + corrector); gated at τ = Σ
(generator + gate) + Σ corrector over the questions with P ≥ τ. Measuring all three in one run keeps the ratios
free of the machine-load drift between separate runs. The paper reports gated ≈ 1.1 × generator-only and
≈ 0.55 × correct-all (with LLM generator and corrector); with the stand-ins the ratios describe their costs.

Usage: python benchmarks/ggc_cost.py [--limit 120] [--train-limit 400] [--gate tfidf] [--threshold 0.5]
       [--kg-feedback] [--repeats 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
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
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from sparqlab.experiments.ggc import MODE_LABELS, gate_from_generator_run, pipeline_config, run_modes
    from sparqlab.kg import open_kg
    from sparqlab.methods.ggc import GateSettings, pipeline_metrics, stage_frame

    shared = dict(dataset="mcqa-movies", generator="standin-knn", corrector="standin-corrector", memory_start=2500)
    ratios = []
    with open_kg("movies") as kg:
        gate = gate_from_generator_run(GateSettings(args.gate),
                                       pipeline_config(experiment="ggc-gate-data", split="train",
                                                       limit=args.train_limit, **shared),
                                       kg_feedback=args.kg_feedback, kg=kg)
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory() as root:
                os.environ["SPARQLAB_RUNS"] = root  # a fresh folder: the run is executed, not resumed
                config = pipeline_config(experiment="ggc-cost", split="test", limit=args.limit, **shared)
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
                           "trigger_rate": gated["trigger_rate"]})
    summary = {key: round(statistics.median(r[key] for r in ratios), 4) for key in ratios[0]}
    print(json.dumps({"settings": vars(args) | {"json": str(args.json) if args.json else None},
                      "median": summary, "runs": ratios}, indent=2))
    if args.json:
        args.json.write_text(json.dumps({"median": summary, "runs": ratios}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
