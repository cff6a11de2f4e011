"""Format robustness: each method's F1 when its model's replies come wrapped in realistic shapes.

Every method runs on a fixed sample with its offline stand-in behind ``noisy:`` at noise rates 0, 0.1, 0.3 and
0.6 (:mod:`sparqlab.llm.noise`: reasoning apart or inline, fences, prose, Markdown). The content of every reply is
the same at every rate — only its wrapping changes — so a method whose parsers read real models' replies keeps its
rate-0 F1 (target: >= 95 % of it at rate 0.3). SPINACH / SAGA (standin-agent, MetaQA 1-hop), GGC correct-all
(standin-knn + standin-corrector, MCQA movies), DeSQ (standin-desq, MCQA movies), the direct baseline
(standin-keyword-rules, MCQA movies) run through the runner; GenOp runs its worked examples with the scripted
oracle, scored as the F1 of each example's rows against its rows at rate 0.

Usage: python benchmarks/format_robustness.py [--limit 20] [--rates 0,0.1,0.3,0.6] [--seed 0] [--json OUT]
       [--no-figure]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any


def _runner_methods(limit: int) -> dict[str, dict[str, Any]]:
    """Method name -> (method factory arguments, RunConfig fields) of the runner-driven methods."""
    movies = {"kg": "movies", "dataset": "mcqa-movies", "split": "test", "limit": limit}
    return {
        "spinach": {"method": ("spinach", {}), "run": {"kg": "movies", "dataset": "metaqa-1hop", "split": "test",
                                                       "limit": limit}, "model": "standin-agent"},
        "saga": {"method": ("saga", {}), "run": {"kg": "movies", "dataset": "metaqa-1hop", "split": "test",
                                                 "limit": limit}, "model": "standin-agent"},
        "ggc": {"method": ("ggc", {"mode": "all"}), "run": movies, "model": "standin-knn",
                "options": {"start": 2500}, "roles": {"corrector": ("standin-corrector", {"start": 2500})}},
        "desq": {"method": ("desq", {"train_limit": 400, "embedder": "hashing"}), "run": movies,
                 "model": "standin-desq"},
        "direct": {"method": ("direct", {}), "run": movies, "model": "standin-keyword-rules"},
    }


def run_method(spec: dict[str, Any], rate: float, seed: int) -> float:
    """F1 of one runner-driven method at one noise rate."""
    from sparqlab.methods import make_method
    from sparqlab.runs import RunConfig, run

    noise = {"rate": rate, "seed": seed}
    roles = {role: {"model": f"noisy:{name}", "options": {**options, **noise}}
             for role, (name, options) in spec.get("roles", {}).items()}
    config = RunConfig(experiment="format-robustness", model=f"noisy:{spec['model']}",
                       model_options={**spec.get("options", {}), **noise}, model_roles=roles, cache="off",
                       progress=False, **spec["run"])
    name, options = spec["method"]
    return float(run(make_method(name, **options), config=config).metrics["f1"] or 0.0)


def run_genop(rate: float, seed: int, reference: dict[str, set] | None) -> tuple[float, dict[str, set]]:
    """GenOp over its worked examples: mean F1 of each example's rows against the rows at rate 0 (``reference``;
    ``None`` computes it, F1 = 1)."""
    from sparqlab.eval.metrics import set_scores
    from sparqlab.kg import open_kg
    from sparqlab.llm.noise import NoisyModel
    from sparqlab.methods.genop import EvalSettings, Oracle, ScriptedModel, run_genop
    from sparqlab.methods.genop.examples import EXAMPLES, MOVIE_QUERY, MOVIE_SCRIPT, write_example_files

    folder = Path(tempfile.mkdtemp(prefix="genop-examples-"))
    paths = write_example_files(folder)
    rows: dict[str, set] = {}
    with open_kg(paths["graph"], cache=False) as paper_kg, open_kg("movies") as movies_kg:
        cases = {name: (example["query"], example["script"], paper_kg) for name, example in EXAMPLES.items()}
        cases["movies"] = (MOVIE_QUERY, MOVIE_SCRIPT, movies_kg)
        for name, (query, script, kg) in cases.items():
            oracle = Oracle.for_model(NoisyModel(ScriptedModel(script), rate=rate, seed=seed))
            result = run_genop(query, kg, oracle, EvalSettings())
            rows[name] = {json.dumps(sorted((k, str(v)) for k, v in row.items())) for row in
                          result.to_query_result().rows}
    reference = reference or rows
    return statistics.fmean(set_scores(rows[n], reference[n]).f1 for n in reference), rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=20, help="questions per method (default 20)")
    parser.add_argument("--rates", default="0,0.1,0.3,0.6", help="noise rates (default 0,0.1,0.3,0.6)")
    parser.add_argument("--seed", type=int, default=0, help="noise seed (default 0)")
    parser.add_argument("--methods", default="spinach,saga,ggc,desq,direct,genop")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--no-figure", action="store_true", help="skip the figure")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    rates = [float(r) for r in args.rates.split(",")]
    methods = args.methods.split(",")
    specs = _runner_methods(args.limit)
    table: dict[str, dict[float, float]] = {}
    with tempfile.TemporaryDirectory() as root:
        os.environ["SPARQLAB_RUNS"] = root  # fresh runs: executed, not resumed from an earlier benchmark
        for method in methods:
            reference = None
            for rate in rates:
                if method == "genop":
                    f1, rows = run_genop(rate, args.seed, reference)
                    reference = reference or rows
                else:
                    f1 = run_method(specs[method], rate, args.seed)
                table.setdefault(method, {})[rate] = round(f1, 4)
                print(f"{method:8s} rate {rate:.1f}: F1 {f1:.4f}", flush=True)
    report = {"limit": args.limit, "seed": args.seed, "f1": table,
              "kept_at_0.3": {m: (round(v[0.3] / v[0.0], 4) if v.get(0.0) else None)
                              for m, v in table.items() if 0.3 in v and 0.0 in v}}
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    if not args.no_figure:
        from sparqlab import plots

        fig, ax = plots.subplots(1, 1, figsize=(5.5, 3.2))
        for method, values in table.items():
            ax.plot(list(values), list(values.values()), marker="o", label=method)
        ax.set_xlabel("noise rate (replies re-wrapped, content unchanged)")
        ax.set_ylabel("F1")
        ax.set_ylim(0, 1.05)
        ax.set_title(f"format robustness, {args.limit} questions per method [standin]", fontsize=9)
        ax.legend(fontsize=7, ncol=3, loc="lower center")
        paths = plots.save_figure(fig, "format_robustness", experiment="replies",
                                  params={"limit": args.limit, "seed": args.seed})
        print("figure:", *paths)


if __name__ == "__main__":
    main()
