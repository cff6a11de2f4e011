"""`sparqlab train sft|gate|data|serve|export|tiny`: fine-tune generators/correctors with LoRA, train the GGC
encoder gate, build training data, serve a fine-tuned adapter locally or export it to GGUF for llama.cpp, and write
tiny offline models for pipeline checks."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sparqlab.core.extras import require


def register(subparsers) -> None:
    """Add ``train`` with its actions."""
    from sparqlab.train.sft import SFTConfig

    train = subparsers.add_parser("train", help="fine-tuning: LoRA SFT, the GGC encoder gate, training data")
    actions = train.add_subparsers(dest="train_command", metavar="ACTION", required=True)

    defaults = SFTConfig(base="", data="", out="")
    sft = actions.add_parser(
        "sft", help="LoRA supervised fine-tuning of a chat model (loss on the response tokens only)",
        description="Fine-tune a local chat model with LoRA on instruction/response JSONL records (chat 'messages' "
                    "or Alpaca instruction/input/output). Writes OUT/adapter (LoRA weights + tokenizer), "
                    "OUT/checkpoints (resumed when the same command runs again), OUT/training.json (settings, "
                    "data sha256, losses) and OUT/loss_curve.png. Defaults: GGC appendix A.2.")
    sft.add_argument("--base", required=True, help="base chat model folder (e.g. a local Llama-3.2-3B-Instruct; a hub name only with "
                          "HF_HUB_OFFLINE=0 and network)")
    sft.add_argument("--data", required=True, help="training records, JSON Lines")
    sft.add_argument("--out", required=True, help="output folder")
    sft.add_argument("--lora-r", type=int, default=defaults.lora_r, help=f"LoRA rank (default {defaults.lora_r})")
    sft.add_argument("--lora-alpha", type=int, default=defaults.lora_alpha,
                     help=f"LoRA alpha (default {defaults.lora_alpha})")
    sft.add_argument("--lora-dropout", type=float, default=defaults.lora_dropout, help="LoRA dropout (default 0)")
    sft.add_argument("--target-modules", default=defaults.target_modules,
                     help="modules given adapters: all-linear (default) or a comma list such as q_proj,v_proj")
    sft.add_argument("--epochs", type=float, default=defaults.epochs, help="epochs (default 1)")
    sft.add_argument("--max-steps", type=int, default=defaults.max_steps,
                     help="optimiser steps; overrides --epochs when > 0 (default -1: by epochs)")
    sft.add_argument("--lr", type=float, default=defaults.learning_rate, help="learning rate (default 2e-4)")
    sft.add_argument("--batch-size", type=int, default=defaults.batch_size, help="per-device batch (default 2)")
    sft.add_argument("--grad-accum", type=int, default=defaults.grad_accum,
                     help="gradient-accumulation steps (default 4)")
    sft.add_argument("--weight-decay", type=float, default=defaults.weight_decay, help="weight decay (default 0.01)")
    sft.add_argument("--max-length", type=int, default=defaults.max_length,
                     help="tokens per conversation (default 2048)")
    sft.add_argument("--eval-fraction", type=float, default=defaults.eval_fraction,
                     help="share of records held out for the evaluation loss (default 0.05; 0: none)")
    sft.add_argument("--eval-steps", type=int, default=0, help="evaluate every N steps (default: once per epoch)")
    sft.add_argument("--save-steps", type=int, default=0, help="checkpoint every N steps (default: once per epoch)")
    sft.add_argument("--seed", type=int, default=defaults.seed, help="seed (default 3407)")
    sft.add_argument("--4bit", dest="load_4bit", action="store_true",
                     help="QLoRA: load the base in 4 bit with bitsandbytes (CUDA only)")
    sft.add_argument("--optim", default=defaults.optim,
                     help="Trainer optimiser (default adamw_torch; adamw_8bit on CUDA as in the paper)")
    sft.add_argument("--threads", type=int, default=0, help="PyTorch CPU threads (default: PyTorch's choice)")
    sft.add_argument("--no-progress", action="store_true", help="no progress bars")
    sft.add_argument("--init-adapter", default=None,
                     help="continue training this LoRA adapter (OUT/adapter of an earlier run on the same base) "
                          "instead of a fresh one: continual learning, e.g. QALD-10 from LC-QuAD 2.0 weights "
                          "(DeSQ section 4); the adapter's LoRA settings are used")
    sft.set_defaults(handler=_sft)

    gate = actions.add_parser(
        "gate", help="train the GGC gate and report P/R/F1/FPR on a validation slice (the one gate-training door)",
        description="Train the GGC gate on labelled (question, initial query) pairs — a `train data --builder "
                    "ggc-gate` file (--data), generator-only run folders (--runs), or, with neither, a generator run "
                    "over the gate's questions of a training split made here (the first --limit of the gate portion GGC section 4.1 "
                    "leaves beside the generator's, `-o generator_share=S`) — and report precision, recall, F1 and FPR of 'correction "
                    "required' on a stratified validation slice. The gate goes to OUT/gate (use it with `sparqlab "
                    "run ggc -o gate_path=OUT/gate`), the summary to OUT/training.json. The gate flags are "
                    "GateSettings' fields. This is the one command that trains a gate (beside `train sft` and "
                    "`train data`); `sparqlab ggc train-gate` is its old spelling.")
    add_gate_arguments(gate)
    gate.set_defaults(handler=handle_gate)

    data = actions.add_parser(
        "data", help="write fine-tuning records (JSONL + manifest) from a dataset split or GGC generator runs",
        description="Builders are registered by the method packages (`sparqlab train builders` lists them with "
                    "what each needs): generic, ggc-generator, desq (from --dataset), ggc-corrector (--out is a "
                    "folder; `sparqlab ggc build-data` is its old spelling), ggc-gate (from --runs). Each writes a "
                    "manifest with counts, sources and the sha256.")
    add_data_arguments(data)
    data.set_defaults(handler=handle_data)

    builders = actions.add_parser("builders", help="list the registered training-data builders")
    builders.set_defaults(handler=_builders)

    serve = actions.add_parser(
        "serve", help="serve a local model (with an optional LoRA adapter) as an OpenAI-compatible endpoint (CPU)",
        description="Serve a transformers model folder, with a fine-tuned adapter, through the project's model "
                    "server, e.g. to use it as a role: `sparqlab run ggc --model-roles corrector=NAME@URL`. For "
                    "real models use vLLM (docs/methods.md).")
    serve.add_argument("--base", required=True, help="base model folder, or a GGUF model (smollm2-135m, FILE.gguf) "
                       "converted once into the cache")
    serve.add_argument("--adapter", default=None, help="LoRA adapter folder (OUT/adapter of `train sft`)")
    serve.add_argument("--name", default=None, help="served model name (default: the adapter folder's name)")
    serve.add_argument("--host", default="127.0.0.1", help="address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port; 0 picks a free one (default 8000)")
    serve.set_defaults(handler=_serve)

    export = actions.add_parser(
        "export", help="merge a LoRA adapter into its GGUF base and write a GGUF file llama.cpp serves",
        description="Merge OUT/adapter of `train sft` into its base (a model converted from GGUF: smollm2-135m, "
                    "a FILE.gguf or its converted folder) and write FILE.gguf with the source file's tokenizer, "
                    "chat template and metadata; serve it with `sparqlab model serve FILE.gguf`. Llama "
                    "architecture only (SmolLM2, Llama 3.x).")
    export.add_argument("--base", required=True, help="the base the adapter was trained on (as given to train sft)")
    export.add_argument("--adapter", default=None, help="LoRA adapter folder (default: none, the base alone)")
    export.add_argument("--out", required=True, help="GGUF file to write")
    export.add_argument("--type", dest="tensor_type", default="q8_0", choices=("q8_0", "f16", "f32"),
                        help="matrices' type (default q8_0; norms stay f32)")
    export.set_defaults(handler=_export)

    tiny = actions.add_parser(
        "tiny", help="write a tiny random decoder or encoder with a tokenizer trained on a data file (offline "
                     "pipeline checks only)")
    tiny.add_argument("kind", choices=["decoder", "encoder"], help="decoder (Llama-style) or encoder (RoBERTa-style)")
    tiny.add_argument("--out", required=True, help="model folder to write")
    tiny.add_argument("--data", default=None, help="JSONL whose text trains the tokenizer")
    tiny.set_defaults(handler=_tiny)


def add_gate_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``train gate`` (and of its old spelling ``ggc train-gate``): the examples' source, the
    generator run that makes them (the run flags, :func:`sparqlab.cli.run_options.add_ggc_run_options`), the gate
    flags generated from :class:`~sparqlab.methods.ggc.gate.GateSettings`, the method's ``--kg-feedback`` and the
    validation."""
    from sparqlab.cli.config_options import add_config_arguments
    from sparqlab.cli.run_options import add_ggc_run_options
    from sparqlab.methods.ggc.gate import GateSettings

    source = parser.add_mutually_exclusive_group()
    source.add_argument("--data", help="gate examples, JSON Lines {question, sparql, label}")
    source.add_argument("--runs", nargs="+", help="generator-only run folders to label (on --kg)")
    add_ggc_run_options(parser, split="train", limit=1000, skip=("seed",))  # --seed: the gate's
    add_config_arguments(parser, GateSettings)
    parser.add_argument("--kg-feedback", action="store_true", help="the gate also reads the KG execution "
                        "feedback of each initial query (GGC's kg_feedback; not with --data)")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--val-fraction", type=float, default=0.2, help="validation share per class (default 0.2)")
    parser.add_argument("--validation-threshold", type=float, default=0.5,
                        help="the τ at which the validation metrics are computed (default 0.5); not the run's gate "
                             "threshold, which is `sparqlab run ggc -o threshold=...`")


def add_data_arguments(parser: argparse.ArgumentParser, builder: str | None = None) -> None:
    """The options of ``train data``; ``builder``: the builder a shortcut (``ggc build-data``) fixes."""
    from sparqlab.cli.config_options import add_config_arguments
    from sparqlab.methods.ggc.prompts import PromptAdditions

    if builder is None:
        parser.add_argument("--builder", required=True, help="a registered builder (`sparqlab train builders`)")
    parser.add_argument("--out", required=True, help="output JSONL file (a folder for ggc-corrector)")
    parser.add_argument("--dataset", help="dataset name (generic, ggc-generator, desq)")
    parser.add_argument("--split", default="train", help="dataset split (default train)")
    parser.add_argument("--limit", type=int, default=None, help="first N questions of the split")
    parser.add_argument("--runs", nargs="+", help="generator-only run folders (ggc-corrector, ggc-gate)")
    parser.add_argument("--kg", default=None,
                        help="KG name/URL (needed by ggc-generator, desq, ggc-corrector; optional for generic)")
    parser.add_argument("--variant", default=None, help="GGC prompt conventions: a registered KG profile's name "
                        "(default: the KG's own)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the corrector compositions (default 0)")
    parser.add_argument("--kg-feedback", action="store_true", help="ggc-corrector: put the execution feedback "
                        "into the prompts")
    parser.add_argument("--compositions", type=lambda text: [n.strip() for n in text.split(",") if n.strip()],
                        help="ggc-corrector: comma-separated composition names (default: W1.0,W1.0+C0.2,W1.0+C0.5,"
                        "W1.0+C0.8)")
    parser.add_argument("--composition-basis", dest="basis", choices=("composed", "wrong"), default=None,
                        help="ggc-corrector: C0.x means x of the composed set (default, our reading of GGC section "
                        "4.3) or x times the wrong samples")
    parser.add_argument("--allow-test", action="store_true", help="allow building from a test split")
    add_config_arguments(parser, PromptAdditions)  # ggc-generator, ggc-corrector: GGC's prompt additions
    parser.add_argument("--generator-share", type=float, default=None, help="ggc-generator: the share of the "
                        "split that is the generator's (a seeded draw; GGC section 4.1, default 0.5); "
                        "--limit counts within it. GGC's gate (-o generator_share) takes its questions from the rest")
    parser.add_argument("--split-seed", type=int, default=None, help="ggc-generator: the seed of that draw "
                        "(default 0; GGC's -o split_seed)")
    parser.add_argument("--exclude-sample", type=int, default=None, help="generic: leave out the questions, and "
                        "every question sharing a topic entity with them, of the scored sample `sparqlab run "
                        "--sample N --sample-seed S` draws from this split (training on the rest of a test split, "
                        "e.g. MetaQA's)")
    parser.add_argument("--exclude-seed", type=int, default=None, help="generic: that sample's --sample-seed "
                        "(default 0)")
    parser.add_argument("--order-seed", type=int, default=None, help="generic: take --limit from the questions in "
                        "this seeded random order (default: file order, which is sorted by question type)")
    parser.add_argument("--generator-data", help="ggc-corrector, ggc-gate: the generator's training JSONL; the "
                        "labelled questions must not be in it (GGC section 4.1: the generator is trained on one "
                        "portion of the training split, gate and corrector data come from the rest)")
    if builder is not None:
        parser.set_defaults(builder=builder, kg="movies")  # the old `ggc build-data` read the movie KG by default


DATA_OPTIONS = ("variant", "seed", "generator_share", "split_seed", "generator_data", "kg_feedback", "compositions",
                "basis", "exclude_sample", "exclude_seed", "order_seed")
"""``train data`` flags passed on to a builder that takes them (left out when not given)."""


def _sft(args: argparse.Namespace) -> int:
    from sparqlab.train.sft import SFTConfig, train_sft

    require("train", what="sparqlab train sft")
    config = SFTConfig(base=args.base, data=args.data, out=args.out, lora_r=args.lora_r, lora_alpha=args.lora_alpha,
                       lora_dropout=args.lora_dropout, target_modules=args.target_modules, epochs=args.epochs,
                       max_steps=args.max_steps, learning_rate=args.lr, batch_size=args.batch_size,
                       grad_accum=args.grad_accum, weight_decay=args.weight_decay, max_length=args.max_length,
                       eval_fraction=args.eval_fraction, eval_steps=args.eval_steps, save_steps=args.save_steps,
                       seed=args.seed, load_4bit=args.load_4bit, optim=args.optim, threads=args.threads,
                       progress=not args.no_progress, init_adapter=args.init_adapter)
    summary = train_sft(config).summary
    keys = ("steps", "resumed", "first_train_loss", "last_train_loss", "initial_eval_loss", "final_eval_loss",
            "wall_s")
    print(json.dumps({"adapter": str(Path(args.out) / "adapter"), "records": summary["data"]["records"],
                      **{k: summary[k] for k in keys}}, indent=2))
    return 0


def handle_gate(args: argparse.Namespace) -> int:
    """Train a gate from ``--data``, ``--runs`` or a generator run made here (:func:`add_gate_arguments`)."""
    from sparqlab.cli.config_options import config_from_arguments
    from sparqlab.cli.run_options import ggc_options, ggc_run_config
    from sparqlab.methods.ggc.gate import GateSettings
    from sparqlab.methods.ggc.gate_training import read_gate_examples, train_gate

    settings = config_from_arguments(GateSettings, args)
    settings.check_trainable()
    data_split = None  # the split of a generator run made here (GGC §4.1)
    if args.data:
        if args.kg_feedback:
            raise ValueError("--kg-feedback needs --runs or a generator run: a --data file holds no KG feedback")
        examples, sources = read_gate_examples(args.data), []
    else:
        from sparqlab.experiments.ggc import gate_data_run
        from sparqlab.methods.ggc.data import labelled_queries

        config = ggc_run_config(args)
        with _open_kg(config.kg) as kg:
            if args.runs:
                sources = list(args.runs)
            else:
                result, data_split = gate_data_run(config, kg=kg, **ggc_options(args, ("mode",)))
                sources = [str(result.run_dir)]
                print(f"generator run: {sources[0]}")
            examples = [q.gate_example() for q in labelled_queries(sources, kg, args.kg_feedback)]
    summary = train_gate(examples, settings, args.out, val_fraction=args.val_fraction,
                         validation_threshold=args.validation_threshold,
                         seed=settings.seed, data_file=args.data, sources=sources, kg_feedback=args.kg_feedback,
                         data_split=data_split)
    metrics = summary["validation"]
    print(f"gate: {Path(args.out) / 'gate'}\ndigest: {summary['gate_digest']}\nvalidation "
          f"n={summary['data']['validation']}: " + ", ".join(
              f"{k.removeprefix('gate_')}={metrics[k]:.3f}" for k in ("gate_precision", "gate_recall", "gate_f1",
                                                                      "gate_fpr")))
    return 0


def _open_kg(name: str):
    from sparqlab.kg import open_kg

    return open_kg(name)


def _builders(args: argparse.Namespace) -> int:
    from sparqlab.train import data

    for name in data.builder_names():
        builder = data.get_builder(name)
        needs = ("--dataset" if builder.source == "dataset" else "--runs") + (" --kg" if builder.needs_kg else "")
        options = f" [options: {', '.join(builder.options)}]" if builder.options else ""
        print(f"{name:15} {needs:18} {builder.description}{options}")
    return 0


def handle_data(args: argparse.Namespace) -> int:
    """Run the builder of ``train data`` (:func:`add_data_arguments`)."""
    from sparqlab.cli.config_options import config_from_arguments, given_arguments
    from sparqlab.methods.ggc.prompts import PromptAdditions
    from sparqlab.train import data

    builder = data.get_builder(args.builder)
    options = {name: getattr(args, name) for name in DATA_OPTIONS
               if name in builder.options and getattr(args, name) is not None}
    if given_arguments(PromptAdditions, args):
        if "prompt" not in builder.options:
            raise ValueError(f"the {args.builder} builder takes no GGC prompt additions")
        options["prompt"] = config_from_arguments(PromptAdditions, args)
    given = [f"--{name.replace('_', '-')}" for name in ("generator_share", "split_seed", "kg_feedback", "compositions",
                                                        "basis", "exclude_sample", "exclude_seed", "order_seed")
             if name not in builder.options and getattr(args, name) not in (None, False)]
    if given:
        raise ValueError(f"the {args.builder} builder takes no {', '.join(given)}")
    kg = _open_kg(args.kg) if args.kg else None
    if builder.source == "dataset":
        if not args.dataset:
            raise ValueError(f"--builder {args.builder} needs --dataset")
        manifest = data.build_from_dataset(args.builder, args.dataset, args.split, args.out, limit=args.limit,
                                           kg=kg, allow_test=args.allow_test, **options)
    else:
        if args.runs and "generator_data" in builder.options and args.generator_data is None:
            print("note: the labelled questions are not checked against the generator's training data (pass "
                  "--generator-data; GGC section 4.1 labels gate and corrector data on the rest of the training "
                  "split)", file=sys.stderr)
        manifest = data.build_from_runs(args.builder, args.runs or [], args.out, kg, **options)
    print(json.dumps(manifest, indent=2))
    return 0


def _serve(args: argparse.Namespace) -> int:
    require("train", what="sparqlab train serve")
    from sparqlab.llm.local_transformers import LocalTransformersModel
    from sparqlab.serving.model_server import serve
    from sparqlab.train.convert import base_folder

    serve(LocalTransformersModel(base_folder(args.base), args.adapter, args.name), host=args.host, port=args.port)
    return 0


def _export(args: argparse.Namespace) -> int:
    import time

    from sparqlab.train.export import export_gguf

    started = time.monotonic()
    path = export_gguf(args.base, args.adapter, args.out, tensor_type=args.tensor_type)
    print(json.dumps({"gguf": str(path), "bytes": path.stat().st_size,
                      "export_s": round(time.monotonic() - started, 1)}, indent=2))
    return 0


def _tiny(args: argparse.Namespace) -> int:
    require("train", what="sparqlab train tiny")
    from sparqlab.train.records import read_records, record_messages
    from sparqlab.train.tiny import build_tiny_decoder, build_tiny_encoder

    texts = []
    if args.data:
        for record in read_records(args.data):
            prompt, response = record_messages(record)
            texts += [m["content"] for m in prompt] + [response]
    build = build_tiny_decoder if args.kind == "decoder" else build_tiny_encoder
    print(f"tiny random {args.kind} (pipeline checks only) written to {build(args.out, texts)}")
    return 0
