"""``sparqlab ggc``: train a gate, build corrector SFT data, sweep the gate threshold (Generator–Gate–Corrector)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(subparsers) -> None:
    """Add ``sparqlab ggc train-gate|build-data|sweep``."""
    parser = subparsers.add_parser("ggc", help="Generator-Gate-Corrector: gates, corrector data, threshold sweeps",
                                   description=__doc__)
    commands = parser.add_subparsers(dest="ggc_command", metavar="SUBCOMMAND")
    parser.set_defaults(handler=lambda args: parser.print_help() or 2)

    train = commands.add_parser(
        "train-gate", help="train and save a gate on the generator's labelled output",
        description="Run the generator over a training split (an ordinary run folder; skipped with --runs), label "
                    "each initial query by query-level accuracy, train a gate and save it; prints its folder and "
                    "digest (pass the folder as -o gate_path=... to `sparqlab run ggc`).")
    _generator_options(train, default_split="train", default_limit=1000)
    train.add_argument("--runs", nargs="+", type=Path, help="use these generator-only run folders instead of "
                       "running the generator")
    train.add_argument("--gate", default="encoder", choices=("encoder", "tfidf", "sbert"), help="backend "
                       "(default: encoder, the paper's fine-tuned encoder, needs --encoder-path; tfidf and sbert are "
                       "offline substitutes)")
    train.add_argument("--kg-feedback", action="store_true", help="add KG execution feedback features")
    train.add_argument("--encoder-path", help="local Hugging Face encoder folder (--gate encoder)")
    train.add_argument("--c", type=float, default=1.0, help="inverse regularisation of the tfidf/sbert head")
    add_gate_training_options(train)
    train.add_argument("--out", type=Path, help="gate folder (default: a content-keyed folder in the cache)")
    train.set_defaults(handler=handle_train_gate)

    build = commands.add_parser(
        "build-data", help="write corrector SFT JSONL for the W1.0 / W1.0+C0.2 / +C0.5 / +C0.8 compositions",
        description="Label the initial queries of generator-only run folders and write one instruction/response "
                    "JSONL per composition (Alpaca columns for LLaMA-Factory with dataset_info.json, and chat "
                    "'messages' for TRL), plus manifest.json.")
    build.add_argument("--runs", nargs="+", type=Path, required=True, help="generator-only run folders")
    build.add_argument("--out", type=Path, required=True, help="output folder")
    build.add_argument("--kg", default="movies", help="the runs' KG (default: movies)")
    build.add_argument("--variant", default="movies", choices=("movies", "wikidata", "freebase"), help="prompt variant")
    build.add_argument("--kg-feedback", action="store_true", help="put execution feedback into the prompts")
    build.add_argument("--compositions", default="W1.0,W1.0+C0.2,W1.0+C0.5,W1.0+C0.8",
                       help="comma-separated composition names (default: all four)")
    build.add_argument("--seed", type=int, default=0, help="seed of the correct-sample choice (default: 0)")
    build.add_argument("--composition-basis", default="composed", choices=("composed", "wrong"),
                       help="C0.x means x of the composed set (default, our reading of section 4.3) or x times the "
                       "wrong samples")
    build.set_defaults(handler=handle_build_data)

    sweep = commands.add_parser(
        "sweep", help="pipeline and gate metrics for several thresholds from one gated run",
        description="One gated run at the smallest threshold (generator outputs and gate probabilities computed "
                    "once, the corrector called once per question any threshold triggers), then every "
                    "threshold's metrics from its records.")
    _generator_options(sweep, default_split="test", default_limit=None)
    sweep.add_argument("--gate-path", type=Path, required=True, help="trained gate folder")
    sweep.add_argument("--thresholds", default="0.1,0.25,0.5,0.75,0.9", help="comma-separated τ values")
    sweep.add_argument("--kg-feedback", action="store_true", help="use KG feedback (the gate must be trained so)")
    sweep.add_argument("--out", type=Path, help="also write the table as CSV here")
    sweep.set_defaults(handler=handle_sweep)


GATE_TRAINING_OPTIONS = ("epochs", "learning_rate", "batch_size", "max_length", "seed", "mask_entities",
                         "class_weights")
"""The :class:`~sparqlab.methods.ggc.gate.GateSettings` fields set by :func:`add_gate_training_options`."""


def add_gate_training_options(parser: argparse.ArgumentParser) -> None:
    """The gate-training hyper-parameters of ``ggc train-gate`` and ``train gate``; left out, they take the
    :class:`~sparqlab.methods.ggc.gate.GateSettings` defaults (:func:`gate_settings`)."""
    parser.add_argument("--epochs", type=int, help="encoder fine-tuning epochs (default: 3, appendix A.2)")
    parser.add_argument("--learning-rate", "--lr", type=float, help="encoder learning rate (default: 2e-5)")
    parser.add_argument("--batch-size", type=int, help="encoder batch size (default: 8)")
    parser.add_argument("--max-length", type=int, help="encoder tokens per (question, query) pair (default: 256)")
    parser.add_argument("--seed", type=int, help="training seed, also of the tfidf/sbert heads (default: 42)")
    parser.add_argument("--mask-entities", action="store_true", default=None, help="train on entity-masked, "
                        "PREFIX-free inputs (default: the raw [q; s(0)], as the paper)")
    parser.add_argument("--class-weights", choices=("none", "balanced"), help="class weighting of the training "
                        "loss (default: none, as the paper)")


def gate_settings(args: argparse.Namespace, **fields):
    """:class:`~sparqlab.methods.ggc.gate.GateSettings` from ``fields`` and the options of
    :func:`add_gate_training_options` that were given."""
    from sparqlab.methods.ggc.gate import GateSettings

    given = {name: getattr(args, name) for name in GATE_TRAINING_OPTIONS if getattr(args, name) is not None}
    return GateSettings(**fields, **given)


def _generator_options(parser: argparse.ArgumentParser, default_split: str, default_limit: int | None) -> None:
    parser.add_argument("-m", "--model", default="standin-knn", help="generator model (default: standin-knn)")
    parser.add_argument("--model-url", help="OpenAI-compatible endpoint of the generator")
    parser.add_argument("-d", "--dataset", default="mcqa-movies", help="dataset (default: mcqa-movies)")
    parser.add_argument("--split", default=default_split, help=f"split (default: {default_split})")
    parser.add_argument("--limit", type=int, default=default_limit, help=f"first N questions (default: "
                        f"{default_limit or 'all'})")
    parser.add_argument("--kg", default="movies", help="KG (default: movies)")
    parser.add_argument("--variant", default="movies", choices=("movies", "wikidata", "freebase"), help="prompt variant")
    parser.add_argument("--experiment", default="ggc", help="experiment folder of the runs (default: ggc)")
    parser.add_argument("--concurrency", type=int, default=1, help="questions in flight (default: 1, so the "
                        "per-stage times are not interleaved)")
    parser.add_argument("--cache", default="off", choices=("off", "read_write", "replay"),
                        help="model response cache (default: off, so times measure the models)")
    parser.add_argument("--memory-start", type=int, help="GGC stand-ins: first remembered training question")
    parser.add_argument("--memory-stop", type=int, help="GGC stand-ins: end of the remembered slice")
    parser.add_argument("--corrector", help="corrector model (default: the generator model)")
    parser.add_argument("--corrector-url", help="corrector endpoint")


def _run_config(args: argparse.Namespace):
    from sparqlab.experiments.ggc import pipeline_config

    return pipeline_config(experiment=args.experiment, dataset=args.dataset, split=args.split, limit=args.limit,
                           generator=args.model, generator_url=args.model_url, corrector=args.corrector,
                           corrector_url=args.corrector_url, kg=args.kg, memory_start=args.memory_start,
                           memory_stop=args.memory_stop, concurrency=args.concurrency, cache=args.cache)


def handle_train_gate(args: argparse.Namespace) -> int:
    from sparqlab.experiments.ggc import gate_from_generator_run
    from sparqlab.kg import open_kg
    from sparqlab.methods.ggc.data import gate_from_runs

    settings = gate_settings(args, backend=args.gate, kg_feedback=args.kg_feedback, c=args.c,
                             encoder_path=args.encoder_path)
    with open_kg(args.kg) as kg:
        if args.runs:
            if not args.out:
                raise ValueError("--runs needs --out (where to save the gate)")
            gate = gate_from_runs(args.runs, kg, settings)
            folder, digest = args.out, gate.save(args.out)
        else:
            trained = gate_from_generator_run(settings, _run_config(args), variant=args.variant, folder=args.out, kg=kg)
            gate, folder, digest = trained.gate, trained.folder, trained.digest
            print(f"generator run: {trained.data_run}")
    print(f"gate: {folder}\ndigest: {digest}\ntrained on {gate.training['n']} initial queries, "
          f"{gate.training['n_positive']} wrong")
    return 0


def handle_build_data(args: argparse.Namespace) -> int:
    from sparqlab.kg import open_kg
    from sparqlab.methods.ggc import COMPOSITIONS, labelled_queries, write_corrector_data

    names = [n.strip() for n in args.compositions.split(",") if n.strip()]
    unknown = [n for n in names if n not in COMPOSITIONS]
    if unknown:
        raise ValueError(f"unknown compositions {unknown}; known: {', '.join(COMPOSITIONS)}")
    with open_kg(args.kg) as kg:
        queries = labelled_queries(args.runs, kg, args.kg_feedback)
        manifest = write_corrector_data(queries, args.out, kg, variant=args.variant, kg_feedback=args.kg_feedback,
                                        compositions={n: COMPOSITIONS[n] for n in names}, seed=args.seed,
                                        sources=[str(r) for r in args.runs], basis=args.composition_basis)
    print(json.dumps(manifest["sizes"], indent=2))
    print(f"written to {args.out}")
    return 0


def handle_sweep(args: argparse.Namespace) -> int:
    import pandas as pd

    from sparqlab.experiments.ggc import threshold_sweep
    from sparqlab.kg import open_kg

    thresholds = [float(t) for t in args.thresholds.split(",") if t.strip()]
    with open_kg(args.kg) as kg:
        result, table = threshold_sweep(_run_config(args), args.gate_path, thresholds, kg=kg,
                                        kg_feedback=args.kg_feedback, variant=args.variant)
    columns = ["threshold", "trigger_rate", "gate_precision", "gate_recall", "gate_f1", "gate_fpr", "accuracy",
               "item_f1", "corrector_calls", "time_s"]
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(table[columns].round(4).to_string(index=False))
    print(f"run: {result.run_dir}")
    if args.out:
        table.to_csv(args.out, index=False)
    return 0
