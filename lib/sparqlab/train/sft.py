"""LoRA supervised fine-tuning of a chat model on instruction/response records (GGC, section 4.1 and appendix
A.2: Llama-3.2-3B-Instruct, LoRA, 4-bit loading, loss on the response only; DeSQ, section 3: the generator
fine-tuned on its two-part structured output).

:func:`train_sft` runs transformers' ``Trainer`` on a peft LoRA model. An output folder holds::

    adapter/         the LoRA adapter and the tokenizer (what vLLM's --lora-modules and the local server load)
    checkpoints/     Trainer checkpoints (resumed from when the same training is started again)
    training.json    the configuration, the data file's sha256 and counts, the base model, library versions,
                     the loss history and the final/initial evaluation losses
    loss_curve.png   training and held-out loss by step (also saved through sparqlab.plots with the figures)

Defaults are the paper's appendix A.2 hyper-parameters (r = α = 16, dropout 0, lr 2e-4, batch 2 × 4 accumulation,
one epoch, weight decay 0.01, seed 3407, 2048 tokens). The paper's 8-bit AdamW needs bitsandbytes and CUDA; on
CPU the optimiser is PyTorch's AdamW (``optim``).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import random
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from sparqlab.core.extras import require
from sparqlab.core.hashing import file_digest
from sparqlab.train.convert import base_folder, source_of
from sparqlab.train.data import manifest_path
from sparqlab.train.records import Encoded, collate, encode, read_records

ADAPTER_DIR = "adapter"
CHECKPOINT_DIR = "checkpoints"
TRAINING_FILE = "training.json"

RESUME_KEYS = ("base", "init_adapter", "data_sha256", "lora_r", "lora_alpha", "lora_dropout", "target_modules", "learning_rate",
               "batch_size", "grad_accum", "weight_decay", "max_length", "eval_fraction", "seed", "load_4bit", "optim")
"""What must match for a second start in the same folder to resume its checkpoints (the length of training,
``epochs``/``max_steps``, may change)."""


@dataclass(frozen=True)
class SFTConfig:
    """One fine-tuning job.

    ``base``: local folder (or hub name, when a hub is reachable) of the base chat model, or a GGUF chat model
    (``smollm2-135m``, ``FILE.gguf``) converted once into the cache (:mod:`sparqlab.train.convert`); ``data``: JSONL records
    (:mod:`sparqlab.train.records`); ``out``: output folder. ``lora_r``, ``lora_alpha``, ``lora_dropout``: LoRA
    rank, scale and dropout; ``target_modules``: modules given adapters (``all-linear``: every linear layer but the
    output head, or a comma-separated list such as ``q_proj,v_proj``). ``epochs``; ``max_steps`` (> 0 overrides
    epochs); ``learning_rate``; ``batch_size`` per device; ``grad_accum`` gradient-accumulation steps;
    ``weight_decay``; ``max_length`` tokens per conversation; ``eval_fraction`` of the records held out for the
    evaluation loss (0: none); ``eval_steps``/``save_steps``/``logging_steps`` (0: once per epoch for eval/save,
    every step for logging); ``save_total_limit`` checkpoints kept; ``seed`` (split, initialisation, order);
    ``init_adapter``: a LoRA adapter folder (``OUT/adapter`` of an earlier run on the same base) whose weights
    training continues from instead of a fresh adapter — continual learning, as DeSQ trains QALD-10 from its
    LC-QuAD 2.0 weights (section 4); the adapter's own rank, scale, dropout and target modules are then used.
    ``load_4bit``: QLoRA loading through bitsandbytes (CUDA only); ``optim``: Trainer optimiser name
    (``adamw_torch``; ``adamw_8bit`` as in the paper on CUDA with bitsandbytes); ``threads``: CPU threads for
    PyTorch (0: its default; 1 is fastest for tiny models on a shared machine); ``progress``: tqdm bars.
    """

    base: str
    data: str
    out: str
    lora_r: int = 16
    lora_alpha: int = 16
    lora_dropout: float = 0.0
    target_modules: str = "all-linear"
    epochs: float = 1.0
    max_steps: int = -1
    learning_rate: float = 2e-4
    batch_size: int = 2
    grad_accum: int = 4
    weight_decay: float = 0.01
    max_length: int = 2048
    eval_fraction: float = 0.05
    eval_steps: int = 0
    save_steps: int = 0
    logging_steps: int = 1
    save_total_limit: int = 2
    seed: int = 3407
    load_4bit: bool = False
    optim: str = "adamw_torch"
    threads: int = 0
    progress: bool = True
    init_adapter: str | None = None

    def __post_init__(self) -> None:
        problems = [name for name, ok in (
            ("lora_r", self.lora_r >= 1), ("lora_alpha", self.lora_alpha > 0),
            ("lora_dropout", 0 <= self.lora_dropout < 1), ("epochs", self.epochs > 0),
            ("learning_rate", self.learning_rate > 0), ("batch_size", self.batch_size >= 1),
            ("grad_accum", self.grad_accum >= 1), ("weight_decay", self.weight_decay >= 0),
            ("max_length", self.max_length >= 16), ("eval_fraction", 0 <= self.eval_fraction < 1),
            ("eval_steps", self.eval_steps >= 0), ("save_steps", self.save_steps >= 0),
            ("logging_steps", self.logging_steps >= 1), ("save_total_limit", self.save_total_limit >= 1),
            ("max_steps", self.max_steps == -1 or self.max_steps >= 1), ("threads", self.threads >= 0)) if not ok]
        if problems:
            raise ValueError(f"invalid fine-tuning settings: {', '.join(f'{p}={getattr(self, p)!r}' for p in problems)}")
        if self.init_adapter is not None and not (Path(self.init_adapter) / "adapter_config.json").is_file():
            raise ValueError(f"init_adapter {self.init_adapter!r} is not a LoRA adapter folder (no "
                             "adapter_config.json; use OUT/adapter of `sparqlab train sft`)")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class SFTResult:
    """What :func:`train_sft` produced: the output folder, its adapter folder and the ``training.json`` content."""

    out: Path
    adapter: Path
    summary: dict[str, Any]

    @property
    def history(self) -> list[dict[str, Any]]:
        return self.summary["history"]


def split_records(records: list[dict[str, Any]], eval_fraction: float, seed: int) -> tuple[list, list]:
    """A seeded held-out slice: ``round(eval_fraction · n)`` records (at least one when the fraction is positive
    and two or more records exist) for the evaluation loss, the rest for training."""
    order = list(range(len(records)))
    random.Random(seed).shuffle(order)
    n_eval = round(eval_fraction * len(records))
    if eval_fraction > 0 and len(records) >= 2:
        n_eval = min(max(n_eval, 1), len(records) - 1)
    held = set(order[:n_eval])
    return ([r for i, r in enumerate(records) if i not in held], [r for i, r in enumerate(records) if i in held])


def _encode_all(tokenizer: Any, records: list[dict[str, Any]], max_length: int) -> tuple[list[Encoded], int]:
    encoded = [encode(tokenizer, r, max_length) for r in records]
    kept = [e for e in encoded if e is not None]
    return kept, len(encoded) - len(kept)


def load_base(base: str, load_4bit: bool = False) -> tuple[Any, Any]:
    """Tokenizer and causal LM from ``base`` (a folder, a hub name, or a GGUF model converted once:
    :func:`sparqlab.train.convert.base_folder`); 4-bit (bitsandbytes NF4) only on CUDA, with a clear error
    elsewhere."""
    require("train", what="training a model")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    options: dict[str, Any] = {}
    if load_4bit:
        if not torch.cuda.is_available():
            raise RuntimeError("--4bit (QLoRA) needs a CUDA GPU and bitsandbytes; train without it on this machine")
        if importlib.util.find_spec("bitsandbytes") is None:
            raise RuntimeError("--4bit (QLoRA) needs bitsandbytes, which is installed only on CUDA machines: "
                               "pip install bitsandbytes")
        from transformers import BitsAndBytesConfig

        options["quantization_config"] = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                                             bnb_4bit_compute_dtype=torch.bfloat16)
        options["device_map"] = "auto"
    base = base_folder(base)
    tokenizer = AutoTokenizer.from_pretrained(base)
    if tokenizer.chat_template is None:
        raise ValueError(f"{base} has no chat template; fine-tune an instruct/chat model (e.g. "
                         "Llama-3.2-3B-Instruct) whose tokenizer defines one")
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    if not torch.cuda.is_available():
        options["dtype"] = torch.float32  # a half-precision folder (sparqlab.train.convert) trains in float32 on CPU
    model = AutoModelForCausalLM.from_pretrained(base, **options)
    return tokenizer, model


def _lora_model(model: Any, config: SFTConfig) -> Any:
    """A fresh LoRA adapter on ``model``, or ``config.init_adapter`` loaded trainable (continual learning)."""
    from peft import LoraConfig, PeftModel, get_peft_model, prepare_model_for_kbit_training

    if config.load_4bit:
        model = prepare_model_for_kbit_training(model)
    if config.init_adapter is not None:
        return PeftModel.from_pretrained(model, config.init_adapter, is_trainable=True)
    targets: str | list[str] = config.target_modules
    if targets != "all-linear":
        targets = [t.strip() for t in targets.split(",") if t.strip()]
    lora = LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout,
                      target_modules=targets, task_type="CAUSAL_LM")
    return get_peft_model(model, lora)


def _check_resumable(out: Path, identity: dict[str, Any]) -> bool:
    """True when ``out`` has checkpoints of the same training (resume); refuse checkpoints of another one."""
    checkpoints = list((out / CHECKPOINT_DIR).glob("checkpoint-*"))
    if not checkpoints:
        return False
    marker = out / CHECKPOINT_DIR / "identity.json"
    saved = json.loads(marker.read_text(encoding="utf-8")) if marker.is_file() else None
    if saved != identity:
        changed = sorted(k for k in identity if saved is None or saved.get(k) != identity[k])
        raise ValueError(f"{out} holds checkpoints of a different training (changed: {', '.join(changed)}); "
                         "use another --out folder or delete its checkpoints/")
    return True


def train_sft(config: SFTConfig, *, figure: bool = True) -> SFTResult:
    """Fine-tune ``config.base`` with LoRA on ``config.data``; resume from the output folder's checkpoints when
    the same training was interrupted. ``figure``: also save the loss curve through :mod:`sparqlab.plots`."""
    require("train", what="training a model")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import peft
    import torch
    import transformers
    from transformers import Trainer, TrainingArguments

    started = time.monotonic()
    out = Path(config.out)
    records = read_records(config.data)
    digest = file_digest(config.data)
    identity = {**{k: getattr(config, k) for k in RESUME_KEYS if k != "data_sha256"}, "data_sha256": digest}
    resume = _check_resumable(out, identity)
    (out / CHECKPOINT_DIR).mkdir(parents=True, exist_ok=True)
    (out / CHECKPOINT_DIR / "identity.json").write_text(json.dumps(identity, indent=2) + "\n", encoding="utf-8")

    if config.threads:
        torch.set_num_threads(config.threads)
    transformers.set_seed(config.seed)
    tokenizer, model = load_base(config.base, config.load_4bit)
    train_records, eval_records = split_records(records, config.eval_fraction, config.seed)
    train_set, skipped_train = _encode_all(tokenizer, train_records, config.max_length)
    eval_set, skipped_eval = _encode_all(tokenizer, eval_records, config.max_length)
    if not train_set:
        raise ValueError(f"every training record's prompt is longer than max_length={config.max_length} tokens")
    model = _lora_model(model, config)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())

    per_epoch = max(1, -(-len(train_set) // (config.batch_size * config.grad_accum)))
    cuda = torch.cuda.is_available()
    args = TrainingArguments(
        output_dir=str(out / CHECKPOINT_DIR), num_train_epochs=config.epochs, max_steps=config.max_steps,
        per_device_train_batch_size=config.batch_size, per_device_eval_batch_size=config.batch_size,
        gradient_accumulation_steps=config.grad_accum, learning_rate=config.learning_rate,
        weight_decay=config.weight_decay, lr_scheduler_type="linear", optim=config.optim,
        logging_steps=config.logging_steps, eval_strategy="steps" if eval_set else "no",
        eval_steps=config.eval_steps or per_epoch, save_strategy="steps", save_steps=config.save_steps or per_epoch,
        save_total_limit=config.save_total_limit, seed=config.seed, data_seed=config.seed, report_to=[],
        disable_tqdm=not config.progress, use_cpu=not cuda, bf16=cuda and torch.cuda.is_bf16_supported(),
        remove_unused_columns=False, dataloader_num_workers=0)
    trainer = Trainer(model=model, args=args, train_dataset=train_set, eval_dataset=eval_set or None,
                      data_collator=partial(collate, pad_id=tokenizer.pad_token_id))
    initial_eval = trainer.evaluate()["eval_loss"] if eval_set and not resume else None
    output = trainer.train(resume_from_checkpoint=True if resume else None)
    final_eval = trainer.evaluate()["eval_loss"] if eval_set else None

    adapter = out / ADAPTER_DIR
    model.save_pretrained(adapter)
    tokenizer.save_pretrained(adapter)
    history = [dict(entry) for entry in trainer.state.log_history]
    train_losses = [e["loss"] for e in history if "loss" in e]
    summary = {
        "config": config.to_dict(),
        "data": {"path": str(Path(config.data).resolve()), "sha256": digest, "records": len(records),
                 "train": len(train_set), "eval": len(eval_set), "skipped_too_long": skipped_train + skipped_eval,
                 "train_response_tokens": sum(e.response_tokens for e in train_set),
                 "train_tokens": sum(len(e.input_ids) for e in train_set)},
        "base": {"path": config.base, "folder": base_folder(config.base), "converted_from":
                 source_of(base_folder(config.base)), "model_type": model.base_model.model.config.model_type,
                 "parameters": total, "trainable_parameters": trainable},
        "data_manifest": _manifest(config.data),
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "peft": peft.__version__},
        "device": "cuda" if cuda else "cpu", "resumed": resume, "steps": trainer.state.global_step,
        "train_runtime_s": output.metrics.get("train_runtime"), "wall_s": round(time.monotonic() - started, 2),
        "first_train_loss": train_losses[0] if train_losses else None,
        "last_train_loss": train_losses[-1] if train_losses else None,
        "initial_eval_loss": initial_eval, "final_eval_loss": final_eval, "history": history,
    }
    (out / TRAINING_FILE).write_text(json.dumps(summary, indent=2, default=str) + "\n", encoding="utf-8")
    _loss_figure(out, history, figure, digest[:8])
    return SFTResult(out, adapter, summary)


def _manifest(data: str) -> dict[str, Any] | None:
    """The builder's manifest beside the data file (builder, sources, prompt), ``None`` for a hand-made file."""
    path = manifest_path(data)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _loss_figure(out: Path, history: list[dict[str, Any]], save_copy: bool, data: str) -> None:
    from sparqlab import plots

    ax = plots.loss_curves(history)
    ax.set_title(f"LoRA SFT: {out.name}")
    ax.figure.savefig(out / "loss_curve.png")
    if save_copy:
        plots.save_figure(ax.figure, "loss-curve", experiment="train-sft", params={"out": out.name, "data": data})
    import matplotlib.pyplot as plt

    plt.close(ax.figure)


def load_training(out: str | Path) -> dict[str, Any]:
    """The ``training.json`` of a finished fine-tuning folder."""
    path = Path(out) / TRAINING_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{out} is not a finished fine-tuning folder ({TRAINING_FILE} missing)")
    return json.loads(path.read_text(encoding="utf-8"))
