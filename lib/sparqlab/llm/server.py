"""An OpenAI-compatible HTTP server for any model behind the chat interface (stand-ins included), so that the
HTTP path of the client, the runner's concurrency and notebooks can be exercised without a GPU.

Endpoints: ``GET /v1/models``, ``GET /v1/models/{id}``, ``POST /v1/chat/completions`` (non-streaming, ``n=1``)
and ``GET /health``. Errors use OpenAI's body ``{"error": {"message", "type", "param", "code"}}``: 404 for an
unknown model name, 400 for a malformed request. Requests are handled on one event loop, so a model that awaits
(e.g. ``standin-latency``'s sleep) serves many requests at once.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from sparqlab.core.processes import stop_process
from sparqlab.llm.base import ChatModel, ChatRequest
from sparqlab.llm.errors import ModelError
from sparqlab.llm.factory import get_model
from sparqlab.llm.standins import LatencyStandin

ROLES = ("system", "developer", "user", "assistant", "tool")


class InvalidRequest(ValueError):
    """A request body that does not describe a chat completion; ``param`` names the offending field."""

    def __init__(self, message: str, param: str | None = None):
        super().__init__(message)
        self.param = param


def _number(body: dict[str, Any], key: str, low: float, high: float, default: float) -> float:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise InvalidRequest(f"'{key}' must be a number between {low:g} and {high:g} (got {value!r})", key)
    return float(value)


def _integer(body: dict[str, Any], key: str, minimum: int | None = None) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or (minimum is not None and value < minimum):
        bound = f" >= {minimum}" if minimum is not None else ""
        raise InvalidRequest(f"'{key}' must be an integer{bound} (got {value!r})", key)
    return value


def _content(message: dict[str, Any], index: int) -> str:
    """A message's text: a string, or OpenAI's list of ``{"type": "text", "text": ...}`` parts."""
    content = message.get("content")
    if content is None and message.get("role") == "assistant":
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text"
                                         and isinstance(p.get("text"), str) for p in content):
        return "".join(part["text"] for part in content)
    raise InvalidRequest(f"messages[{index}].content must be a string or a list of text parts", "messages")


def parse_chat_request(body: Any) -> ChatRequest:
    """A :class:`ChatRequest` from a ``/v1/chat/completions`` body; :class:`InvalidRequest` if malformed.
    Fields this server does not model (``user``, ``logprobs`` ...) are ignored."""
    if not isinstance(body, dict):
        raise InvalidRequest("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise InvalidRequest("'model' is required and must be a string", "model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidRequest("'messages' is required and must be a non-empty list", "messages")
    parsed = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise InvalidRequest(f"messages[{index}] must be an object with a role in {', '.join(ROLES)}",
                                 "messages")
        parsed.append({"role": message["role"], "content": _content(message, index)})
    if body.get("stream"):
        raise InvalidRequest("streaming is not supported by this server", "stream")
    if _integer(body, "n", minimum=1) not in (None, 1):
        raise InvalidRequest("only n=1 is supported", "n")
    stop = body.get("stop")
    if stop is not None and not (isinstance(stop, str) or (isinstance(stop, list)
                                                           and all(isinstance(s, str) for s in stop))):
        raise InvalidRequest("'stop' must be a string or a list of strings", "stop")
    max_tokens = _integer(body, "max_completion_tokens", minimum=1)
    if max_tokens is None:
        max_tokens = _integer(body, "max_tokens", minimum=1)
    return ChatRequest.build(
        model,
        parsed,
        temperature=_number(body, "temperature", 0.0, 2.0, 0.0),
        top_p=_number(body, "top_p", 0.0, 1.0, 1.0),
        max_tokens=max_tokens,
        stop=stop,
        seed=_integer(body, "seed"),
    )


def create_app(model: ChatModel) -> FastAPI:
    """The FastAPI application serving ``model`` under its name."""
    app = FastAPI(title=f"sparqlab model server: {model.name}")
    created = int(time.time())
    card = {"id": model.name, "object": "model", "created": created, "owned_by": "sparqlab",
            "root": getattr(model, "root", None) or model.name}  # vLLM's field: what is served under the name

    def error(status: int, message: str, kind: str, param: str | None = None, code: str | None = None):
        return JSONResponse({"error": {"message": message, "type": kind, "param": param, "code": code}},
                            status_code=status)

    def unknown_model(name: str):
        return error(404, f"The model `{name}` does not exist; this server serves `{model.name}`.",
                     "invalid_request_error", "model", "model_not_found")

    @app.get("/health")
    async def health():
        return {"status": "ok", "model": model.name}

    @app.get("/v1/models")
    async def list_models():
        return {"object": "list", "data": [card]}

    @app.get("/v1/models/{name:path}")
    async def retrieve_model(name: str):
        return card if name == model.name else unknown_model(name)

    @app.post("/v1/chat/completions")
    async def chat_completions(raw: Request):
        try:
            body = await raw.json()
        except ValueError:
            return error(400, "the request body is not valid JSON", "invalid_request_error")
        if isinstance(body, dict) and isinstance(body.get("model"), str) and body["model"] != model.name:
            return unknown_model(body["model"])
        try:
            request = parse_chat_request(body)
        except InvalidRequest as invalid:
            return error(400, str(invalid), "invalid_request_error", invalid.param)
        try:
            response = await model.acomplete(request)
        except ModelError as failure:
            return error(502, f"{type(failure).__name__}: {failure}", "server_error", code=failure.kind)
        message = {"role": "assistant", "content": response.text}
        if response.reasoning is not None:
            message["reasoning"] = response.reasoning
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model.name,
            "choices": [{"index": 0, "message": message, "finish_reason": response.finish_reason,
                         "logprobs": None}],
            "usage": {"prompt_tokens": response.usage.prompt_tokens,
                      "completion_tokens": response.usage.completion_tokens,
                      "total_tokens": response.usage.total_tokens},
        }

    return app


def model_for_serving(model: ChatModel | str, delay_ms: float | None = None) -> ChatModel:
    """The model ``serve-model`` serves: ``get_model(model)``, with a fixed delay added when ``delay_ms`` is
    given (the delay of ``standin-latency`` itself; for another stand-in, a latency wrapper keeping its name)."""
    if delay_ms is None:
        return get_model(model)
    if model == LatencyStandin.name:
        return get_model(model, delay_ms=delay_ms)
    inner = get_model(model)
    return LatencyStandin(inner, delay_ms=delay_ms, name=inner.name)


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket; connections made before the server starts wait in the backlog instead of failing."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family, backlog=2048)
    # Accepted connections inherit TCP_NODELAY; without it every reply on a kept-alive connection waits ~40 ms
    # for delayed ACKs (asyncio only sets it on sockets it creates itself).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _uvicorn_server(model: ChatModel, log_level: str) -> uvicorn.Server:
    config = uvicorn.Config(create_app(model), log_level=log_level, access_log=False, timeout_keep_alive=30)
    return uvicorn.Server(config)


def _base_url(host: str, sock: socket.socket) -> str:
    port = sock.getsockname()[1]
    return f"http://[{host}]:{port}/v1" if ":" in host else f"http://{host}:{port}/v1"


def serve(model: ChatModel, host: str = "127.0.0.1", port: int = 8000, log_level: str = "warning") -> None:
    """Serve until interrupted. Prints ``serving NAME at URL`` once listening (``port=0`` picks a free port)."""
    sock = _listen(host, port)
    print(f"serving {model.name} at {_base_url(host, sock)}", flush=True)
    _uvicorn_server(model, log_level).run(sockets=[sock])


@contextlib.contextmanager
def serve_in_background(
    model: ChatModel | str,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    delay_ms: float | None = None,
    process: bool = False,
    startup_timeout_s: float = 60.0,
) -> Iterator[str]:
    """Serve a model while the block runs and yield its base URL (``http://127.0.0.1:PORT/v1``).

    By default the server runs on a thread of this process (``model`` may be a ready model); with
    ``process=True`` it is a ``sparqlab serve-model`` subprocess (``model`` must be a name), which keeps the
    server's work off this interpreter, as benchmarks want.
    """
    if process:
        if not isinstance(model, str):
            raise TypeError("process=True serves a model by name; pass the name, not a model object")
        with _serve_process(model, host, port, delay_ms, startup_timeout_s) as url:
            yield url
        return
    served = model_for_serving(model, delay_ms)
    sock = _listen(host, port)
    server = _uvicorn_server(served, "warning")
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True,
                              name=f"serve-{served.name}")
    thread.start()
    deadline = time.monotonic() + startup_timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            sock.close()
            raise RuntimeError(f"the model server for {served.name!r} did not start")
        time.sleep(0.01)
    try:
        yield _base_url(host, sock)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@contextlib.contextmanager
def _serve_process(name: str, host: str, port: int, delay_ms: float | None, timeout_s: float) -> Iterator[str]:
    command = [sys.executable, "-m", "sparqlab", "serve-model", "--model", name, "--host", host, "--port", str(port)]
    if delay_ms is not None:
        command += ["--delay-ms", str(delay_ms)]
    with tempfile.TemporaryFile("w+") as stderr:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True)
        try:
            line = _read_line(proc, timeout_s)
            if not line.startswith("serving "):
                stderr.seek(0)
                raise RuntimeError(f"`sparqlab serve-model --model {name}` did not start: {stderr.read().strip()}")
            yield line.rsplit(" ", 1)[-1].strip()
        finally:
            stop_process(proc, timeout_s=15)
            proc.stdout.close()


def _read_line(proc: subprocess.Popen, timeout_s: float) -> str:
    """The server's first stdout line (its URL), or "" if it exits or stays silent for ``timeout_s``."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout_s)
    return lines[0] if lines else ""
