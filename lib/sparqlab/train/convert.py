"""Real weights for the trainer: a GGUF chat model (the bundled SmolLM2-135M-Instruct or any ``FILE.gguf``) turned
into a Hugging Face model folder with its tokenizer and chat template, the base ``sparqlab train sft`` and
``sparqlab train serve`` take.

transformers reads a GGUF file (dequantising it with the ``gguf`` package) but refuses ``save_pretrained`` on the
model it loaded that way, so the dequantised weights go into a fresh model of the same configuration (without the
GGUF quantisation entry, for which the trainer would refuse the model), which saves as safetensors (``dtype``:
bfloat16 by default, half the size of float32; the trainer computes in float32 on CPU).
:func:`converted_base` keeps one such folder per GGUF digest in the cache, so a base is converted once.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from sparqlab.core.extras import require
from sparqlab.core.hashing import file_digest
from sparqlab.core.paths import cache_dir
from sparqlab.serving.llama_cpp import BUNDLED_MODELS, model_file, served_name

SOURCE_FILE = "sparqlab_source.json"
"""Written into a converted folder: the model (a bundled name or the GGUF file's path), the file's name and sha256,
the dtype and the time the conversion took."""

DTYPES = ("bfloat16", "float16", "float32")


def convert_gguf(model: str, out: str | Path, *, dtype: str = "bfloat16") -> Path:
    """Write the Hugging Face folder of ``model`` (a bundled name such as ``smollm2-135m`` or a ``FILE.gguf``) to
    ``out``: config, safetensors weights in ``dtype``, tokenizer with the file's chat template, and
    :data:`SOURCE_FILE`. Written beside ``out`` first and renamed, so a folder that exists is complete."""
    require("train", what="converting a GGUF model")
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}; got {dtype!r}")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = model_file(model)
    out = Path(out)
    if out.exists():
        raise FileExistsError(f"{out} exists; choose another folder or delete it")
    started = time.monotonic()
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    if tokenizer.chat_template is None:
        raise ValueError(f"{path} holds no chat template (tokenizer.chat_template); convert a chat model")
    loaded = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    settings = {k: v for k, v in loaded.config.to_dict().items() if k != "quantization_config"}
    fresh = AutoModelForCausalLM.from_config(type(loaded.config).from_dict(settings), dtype=torch.float32)
    fresh.load_state_dict(loaded.state_dict())
    fresh.to(getattr(torch, dtype))
    fresh.config.dtype = dtype
    partial = out.with_name(f".{out.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    fresh.save_pretrained(partial, safe_serialization=True)
    tokenizer.save_pretrained(partial)
    source = {"model": model if model in BUNDLED_MODELS else str(path), "gguf_file": path.name,
              "gguf_sha256": file_digest(path), "dtype": dtype,
              "parameters": sum(p.numel() for p in fresh.parameters()),
              "convert_s": round(time.monotonic() - started, 1)}
    (partial / SOURCE_FILE).write_text(json.dumps(source, indent=2) + "\n", encoding="utf-8")
    partial.rename(out)
    return out


def converted_base(model: str) -> Path:
    """The cached Hugging Face folder of ``model`` (a bundled name or ``FILE.gguf``), converted on first use into
    ``cache/converted/<name>-<gguf sha256[:16]>``: a new file (another digest) gets its own folder."""
    path = model_file(model)
    folder = cache_dir() / "converted" / f"{served_name(model)}-{file_digest(path, 16)}"
    if not (folder / SOURCE_FILE).is_file():
        folder.parent.mkdir(parents=True, exist_ok=True)
        convert_gguf(model, folder)
    return folder


def base_folder(base: str) -> str:
    """The model folder of a ``--base``: a bundled GGUF name or ``FILE.gguf`` is converted once
    (:func:`converted_base`); a folder or hub name is returned unchanged."""
    if base.endswith(".gguf") or base in BUNDLED_MODELS:
        return str(converted_base(base))
    return base


def source_of(folder: str | Path) -> dict[str, Any] | None:
    """The conversion record of a converted folder (:data:`SOURCE_FILE`), ``None`` for any other folder."""
    record = Path(folder) / SOURCE_FILE
    return json.loads(record.read_text(encoding="utf-8")) if record.is_file() else None
