"""The real small model the suite runs every method against: SmolLM2-135M-Instruct (the bundled GGUF) served by
llama-cpp-python on 127.0.0.1 (:mod:`sparqlab.serving.llama_cpp`), as Virtuoso is its real SPARQL engine.

One server per test process (each pytest-xdist worker starts its own, in about a second, when it first meets a test
that needs it), computing with one thread so that the suite's workers do not oversubscribe the cores. Where
llama-cpp-python's server or the model is not installed the test is skipped saying why — except in CI, where it
fails (:mod:`support.ci`). The trainer's conversion of the same GGUF (``converted_real_model``) is kept in the CI
cache, as the server's wheel is."""

from __future__ import annotations

from pathlib import Path

import pytest
from filelock import FileLock

from sparqlab.core.hashing import file_digest
from sparqlab.serving.llama_cpp import llama_server_missing, start_llama_server
from support.ci import ci_cache, require_program

REAL_MODEL_THREADS = 1
"""Threads of each worker's server: three workers on two cores already keep both busy."""


def require_real_model() -> None:
    """Skip (fail in CI) a test that needs the real model when its server or weights are not installed."""
    reason = llama_server_missing()
    require_program(reason is None, reason or "", "the real-model tests")


@pytest.fixture(scope="session")
def real_model():
    """The running :class:`~sparqlab.serving.llama_cpp.LlamaServer` of this test process (``.url``, ``.name``)."""
    require_real_model()
    with start_llama_server(n_threads=REAL_MODEL_THREADS) as server:
        yield server


@pytest.fixture
def converted_real_model(monkeypatch) -> Path:
    """The bundled SmolLM2-135M converted for the trainer (:func:`sparqlab.train.convert.converted_base`, a folder
    named by the GGUF's sha256) in ``<CI cache>/converted-<converter's sha256[:16]>``, the test's
    ``SPARQLAB_CACHE``: the two-minute conversion runs once per GGUF file and version of the converter, not in
    every fresh clone. A file lock keeps two runs from converting at once (each would write the same folder)."""
    require_real_model()
    from sparqlab.train import convert

    cache = ci_cache() / f"converted-{file_digest(convert.__file__, 16)}"
    cache.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("SPARQLAB_CACHE", str(cache))
    with FileLock(str(cache / "convert.lock")):
        return convert.converted_base("smollm2-135m")
