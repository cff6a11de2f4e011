"""A real SPARQL 1.1 endpoint on 127.0.0.1: ``oxigraph serve-read-only`` over a store folder, for ``sparqlab kg
serve``, the tests and checks of the endpoint backend (the KG counterpart of
:func:`sparqlab.serving.model_server.serve_in_background`)."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from sparqlab.core.processes import free_port, stop_process, wait_until_answering


def oxigraph_binary() -> str:
    """The ``oxigraph`` server program beside this interpreter (the venv's) or on ``PATH``."""
    local = Path(sys.executable).with_name("oxigraph")
    found = str(local) if local.exists() else shutil.which("oxigraph")
    if not found:
        raise FileNotFoundError("the oxigraph server is not installed (pip install -r requirements-dev.txt)")
    return found


@contextlib.contextmanager
def serve_store(store: str | Path, timeout_s: float | None = None, startup_timeout_s: float = 30.0) -> Iterator[str]:
    """Run ``oxigraph serve-read-only`` over ``store`` on a free local port while the block runs; yields the query
    URL. ``timeout_s``: the server's own per-query limit (``--timeout-s``); ``startup_timeout_s``: how long it may
    take to answer a first ``ASK {}``. Raises :class:`RuntimeError` when it exits or does not answer in time."""
    port = free_port()
    command = [oxigraph_binary(), "serve-read-only", "--location", str(store), "--bind", f"127.0.0.1:{port}"]
    if timeout_s:
        command += ["--timeout-s", str(timeout_s)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/query"
    try:
        wait_until_answering(url, process, "oxigraph server", startup_timeout_s,
                             lambda: process.stderr.read().decode(errors="replace"))
        yield url
    finally:
        stop_process(process)
        process.stderr.close()
