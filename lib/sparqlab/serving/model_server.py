"""An OpenAI-compatible HTTP server for any model behind the chat interface (stand-ins included), so that the
HTTP path of the client, the runner's concurrency and notebooks can be exercised without a GPU.

Endpoints: ``GET /v1/models``, ``GET /v1/models/{id}``, ``POST /v1/chat/completions`` (non-streaming, ``n=1``)
and ``GET /health``. Like vLLM (:class:`Limits`): ``max_tokens`` cuts a reply with ``finish_reason: "length"``; a
served ``max_model_len`` (reported by ``/v1/models``) answers a longer prompt with a 400 carrying vLLM's
context-length message, and without ``max_tokens`` leaves the rest of the context as the budget; a reasoning model's
reasoning is returned apart (``reasoning`` and ``reasoning_content``); ``usage.prompt_tokens_details.cached_tokens``
reports the prompt tokens vLLM's prefix cache would have held (:mod:`sparqlab.llm.prefix_cache` over the requests
served so far); ``tools`` and ``tool_choice`` reach the model,
whose function calls come back as ``message.tool_calls`` with ``finish_reason: "tool_calls"`` (a tool-calling
stand-in such as ``standin-agent`` or ``standin-script`` makes them, like vLLM's ``--enable-auto-tool-choice``); over ``max_in_flight`` concurrent requests
the server answers 429 (or 503) with ``Retry-After``. Every error, on every route, uses OpenAI's body ``{"error": {"message", "type", "param",
"code"}}``: 404 for an unknown model name or path, 405 for a wrong method, 400 for a malformed request (invalid
JSON or UTF-8, JSON nested too deeply, a lone surrogate in a string), 413 for a body over
:data:`MAX_BODY_BYTES` or a request line and headers over :data:`MAX_HEAD_BYTES`; ``max_tokens`` over
:data:`MAX_TOKENS_LIMIT` or a ``seed`` outside a signed 64-bit integer are malformed. A request's body must
arrive within ``read_timeout_s`` (default :data:`READ_TIMEOUT_S`) of its headers, and open connections are bounded
(:mod:`sparqlab.serving.guard`, uvicorn's settings). Requests are
handled on one event loop, so a model that awaits (e.g. ``standin-latency``'s sleep) serves many requests at once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect

from sparqlab.core.processes import stop_process
from sparqlab.core.text import lone_surrogate
from sparqlab.llm.base import ChatModel, ChatRequest, estimate_tokens
from sparqlab.llm.errors import ModelError
from sparqlab.llm.factory import get_model
from sparqlab.llm.prefix_cache import PrefixCacheModel
from sparqlab.llm.standins import LatencyStandin
from sparqlab.serving.guard import ConnectionLimits, guarded_server, listen_socket

ROLES = ("system", "developer", "user", "assistant", "tool")
REASONING_EFFORTS = ("low", "medium", "high")

MAX_BODY_BYTES = 16 * 2**20
"""Largest request body accepted (16 MiB: a 128k-token prompt is well under 1 MiB)."""

READ_TIMEOUT_S = 30.0
"""Default time a request's body has to arrive once its headers have."""

MAX_HEAD_BYTES = 64 * 1024
"""Largest request line plus headers accepted (413 beyond; the body has its own limit, :data:`MAX_BODY_BYTES`)."""

MAX_TOKENS_LIMIT = 2**20
"""Largest ``max_tokens`` accepted: no served model has a longer context (vLLM refuses more than its own)."""

SEED_RANGE = (-(2**63), 2**63 - 1)
"""``seed`` must fit a signed 64-bit integer, as vLLM's and OpenAI's do."""


@dataclass(frozen=True)
class Limits:
    """What a vLLM deployment imposes that changes a client's life.

    - ``max_model_len``: context length in (estimated) tokens, prompt plus completion; ``None``: unlimited.
    - ``max_in_flight``: concurrent requests served; more are refused with ``overload_status`` (429 as a rate
      limiter or router answers, 503 as an overloaded server does) and ``Retry-After: retry_after_s``.
    """

    max_model_len: int | None = None
    max_in_flight: int | None = None
    overload_status: int = 429
    retry_after_s: int = 1

    def __post_init__(self) -> None:
        if self.overload_status not in (429, 503):
            raise ValueError(f"overload_status must be 429 or 503 (got {self.overload_status})")
        if (self.max_model_len is not None and self.max_model_len < 1) or \
                (self.max_in_flight is not None and self.max_in_flight < 1):
            raise ValueError("max_model_len and max_in_flight must be >= 1")


def context_length_message(limit: int, prompt_tokens: int, max_tokens: int | None) -> str:
    """vLLM's message for a request that does not fit the context (the client recognises it as an overflow)."""
    if max_tokens is None:
        return (f"This model's maximum context length is {limit} tokens. However, your request has {prompt_tokens} "
                f"input tokens. Please reduce the length of the input messages.")
    return (f"This model's maximum context length is {limit} tokens. However, you requested "
            f"{prompt_tokens + max_tokens} tokens ({prompt_tokens} in the messages, {max_tokens} in the completion). "
            f"Please reduce the length of the messages or completion.")


class InvalidRequest(ValueError):
    """A request body that does not describe a chat completion; ``param`` names the offending field, ``status``
    is the HTTP status to answer with."""

    def __init__(self, message: str, param: str | None = None, status: int = 400):
        super().__init__(message)
        self.param = param
        self.status = status


def _number(body: dict[str, Any], key: str, low: float, high: float, default: float) -> float:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise InvalidRequest(f"'{key}' must be a number between {low:g} and {high:g} (got {value!r})", key)
    return float(value)


def _integer(body: dict[str, Any], key: str, minimum: int | None = None, maximum: int | None = None) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or (minimum is not None and value < minimum) \
            or (maximum is not None and value > maximum):
        bound = (f" from {minimum} to {maximum}" if minimum is not None and maximum is not None else
                 f" >= {minimum}" if minimum is not None else "")
        shown = repr(value) if len(repr(value)) <= 40 else f"{repr(value)[:20]}... ({len(repr(value))} digits)"
        raise InvalidRequest(f"'{key}' must be an integer{bound} (got {shown})", key)
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


TOOL_CHOICES = ("none", "auto", "required")


def _tools(body: dict[str, Any]) -> tuple[list[dict[str, Any]] | None, str | dict[str, Any] | None]:
    """``tools`` and ``tool_choice`` checked against OpenAI's schema: a list of ``{"type": "function",
    "function": {"name": ..., ...}}`` and one of :data:`TOOL_CHOICES` or ``{"type": "function", "function":
    {"name": ...}}`` naming an offered function."""
    tools, choice = body.get("tools"), body.get("tool_choice")
    functions = all(isinstance(tool, dict) and tool.get("type") == "function" and isinstance(tool.get("function"), dict)
                    and isinstance(tool["function"].get("name"), str) for tool in tools or ())
    if tools is not None and not (isinstance(tools, list) and functions):
        raise InvalidRequest("'tools' must be a list of {\"type\": \"function\", \"function\": {\"name\": ...}}",
                             "tools")
    if choice is None or choice in TOOL_CHOICES:
        return tools, choice
    offered = {tool["function"]["name"] for tool in tools or ()}
    function = choice.get("function") if isinstance(choice, dict) else None
    named = function.get("name") if isinstance(function, dict) else None
    if not (isinstance(choice, dict) and choice.get("type") == "function" and named in offered):
        raise InvalidRequest(f"'tool_choice' must be one of {', '.join(TOOL_CHOICES)} or name an offered function "
                             "as {\"type\": \"function\", \"function\": {\"name\": ...}}", "tool_choice")
    return tools, choice


def parse_chat_request(body: Any) -> ChatRequest:
    """A :class:`ChatRequest` from a ``/v1/chat/completions`` body; :class:`InvalidRequest` if malformed.
    Fields this server does not model (``user``, ``logprobs`` ...) are ignored; so are the ``tool_calls`` of
    earlier assistant messages and the ``tool_call_id`` of tool messages (their text content is kept)."""
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
    max_tokens = _integer(body, "max_completion_tokens", minimum=1, maximum=MAX_TOKENS_LIMIT)
    if max_tokens is None:
        max_tokens = _integer(body, "max_tokens", minimum=1, maximum=MAX_TOKENS_LIMIT)
    effort = body.get("reasoning_effort")
    if effort is not None and effort not in REASONING_EFFORTS:
        raise InvalidRequest(f"'reasoning_effort' must be one of {', '.join(REASONING_EFFORTS)}", "reasoning_effort")
    tools, tool_choice = _tools(body)
    return ChatRequest.build(
        model,
        parsed,
        tools=tools,
        tool_choice=tool_choice,
        temperature=_number(body, "temperature", 0.0, 2.0, 0.0),
        top_p=_number(body, "top_p", 0.0, 1.0, 1.0),
        max_tokens=max_tokens,
        stop=stop,
        seed=_integer(body, "seed", *SEED_RANGE),
        reasoning_effort=effort,
    )


async def read_body(raw: Request, limit: int = MAX_BODY_BYTES) -> Any:
    """The request's JSON body, read up to ``limit`` bytes; :class:`InvalidRequest` (with an HTTP status) when
    it is too large, not UTF-8, not JSON, nested too deeply, or holds a lone surrogate."""
    declared = raw.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise InvalidRequest(f"the request body is {int(declared):,} bytes, over the limit of {limit:,}", status=413)
    chunks, size = [], 0
    async for chunk in raw.stream():
        size += len(chunk)
        if size > limit:
            raise InvalidRequest(f"the request body is over the limit of {limit:,} bytes", status=413)
        chunks.append(chunk)
    try:
        body = json.loads(b"".join(chunks))
    except RecursionError:
        raise InvalidRequest("the request body is JSON nested too deeply") from None
    except ValueError:  # invalid JSON, or bytes that are not UTF-8
        raise InvalidRequest("the request body is not valid JSON in UTF-8") from None
    surrogate = lone_surrogate(body)
    if surrogate:
        raise InvalidRequest(f"{surrogate} is a lone UTF-16 surrogate, which is not text")
    return body


def create_app(model: ChatModel, limits: Limits | None = None) -> FastAPI:
    """The FastAPI application serving ``model`` under its name, within ``limits`` (default: none)."""
    limits = limits or Limits()
    app = FastAPI(title=f"sparqlab model server: {model.name}")
    created = int(time.time())
    card = {"id": model.name, "object": "model", "created": created, "owned_by": "sparqlab",
            "root": getattr(model, "root", None) or model.name}  # vLLM's field: what is served under the name
    if model.is_standin:  # a client marks its runs (a tiny random decoder served under any name)
        card["standin"] = True
    if limits.max_model_len is not None:
        card["max_model_len"] = limits.max_model_len
    in_flight = [0]
    prefix_cache = PrefixCacheModel()  # what a vLLM server would have kept: its cached_tokens

    def error(status: int, message: str, kind: str, param: str | None = None, code: str | None = None,
              headers: dict[str, str] | None = None):
        return JSONResponse({"error": {"message": message, "type": kind, "param": param, "code": code}},
                            status_code=status, headers=headers)

    def unknown_model(name: str):
        return error(404, f"The model `{name}` does not exist; this server serves `{model.name}`.",
                     "invalid_request_error", "model", "model_not_found")

    @app.exception_handler(HTTPException)
    async def http_error(raw: Request, failure: HTTPException):
        codes = {404: "not_found", 405: "method_not_allowed"}
        message = (f"no route {raw.method} {raw.url.path}; this server serves GET /v1/models, GET /health and "
                   "POST /v1/chat/completions" if failure.status_code in codes else str(failure.detail))
        return error(failure.status_code, message, "invalid_request_error", code=codes.get(failure.status_code))

    @app.exception_handler(RequestValidationError)
    async def validation_error(raw: Request, failure: RequestValidationError):
        return error(400, f"invalid request: {failure.errors()!r:.300}", "invalid_request_error")

    @app.exception_handler(Exception)
    async def server_error(raw: Request, failure: Exception):
        return error(500, f"{type(failure).__name__}: {failure}", "server_error")

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
            body = await read_body(raw)
        except InvalidRequest as invalid:
            return error(invalid.status, str(invalid), "invalid_request_error")
        except ClientDisconnect:
            return error(400, "the client closed the connection before sending the whole body",
                         "invalid_request_error")
        if isinstance(body, dict) and isinstance(body.get("model"), str) and body["model"] != model.name:
            return unknown_model(body["model"])
        try:
            request = parse_chat_request(body)
        except InvalidRequest as invalid:
            return error(400, str(invalid), "invalid_request_error", invalid.param)
        if limits.max_in_flight is not None and in_flight[0] >= limits.max_in_flight:
            return error(limits.overload_status, f"the server is serving {in_flight[0]} requests, its limit; retry "
                         f"after {limits.retry_after_s} s", "rate_limit_error" if limits.overload_status == 429
                         else "server_error", headers={"Retry-After": str(limits.retry_after_s)})
        if limits.max_model_len is not None:
            prompt = sum(estimate_tokens(content) for _, content in request.messages)
            wanted = prompt + (request.max_tokens or 0)
            if prompt >= limits.max_model_len or wanted > limits.max_model_len:
                return error(400, context_length_message(limits.max_model_len, prompt, request.max_tokens),
                             "BadRequestError", "messages")
            if request.max_tokens is None:  # vLLM: the rest of the context is the budget
                request = dataclasses.replace(request, max_tokens=limits.max_model_len - prompt)
        in_flight[0] += 1
        try:
            response = await model.acomplete(request)
        except ModelError as failure:
            return error(502, f"{type(failure).__name__}: {failure}", "server_error", code=failure.kind)
        finally:
            in_flight[0] -= 1
        recomputed = prefix_cache.recomputed(request, response.text, response.usage.prompt_tokens)
        message = {"role": "assistant", "content": response.text}
        if response.tool_calls:  # OpenAI's shape: arguments a JSON string; no text is a null content
            message["tool_calls"] = response.tool_calls
            message["content"] = response.text or None
        if response.reasoning is not None:  # vLLM's reasoning parser: ``reasoning`` (and the older name)
            message["reasoning"] = message["reasoning_content"] = response.reasoning
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model.name,
            "choices": [{"index": 0, "message": message, "finish_reason": response.finish_reason,
                         "logprobs": None}],
            "usage": {"prompt_tokens": response.usage.prompt_tokens,
                      "completion_tokens": response.usage.completion_tokens,
                      "total_tokens": response.usage.total_tokens,
                      "prompt_tokens_details": {"cached_tokens": response.usage.prompt_tokens - recomputed}},
        }

    return app


def model_for_serving(model: ChatModel | str, delay_ms: float | None = None, **options: Any) -> ChatModel:
    """The model ``serve-model`` serves: ``get_model(model, **options)`` (a stand-in's options, e.g.
    ``standin-script``'s ``path``), with a fixed delay added when ``delay_ms`` is given (the delay of
    ``standin-latency`` itself; for another stand-in, a latency wrapper keeping its name)."""
    if delay_ms is None:
        return get_model(model, **options)
    if model == LatencyStandin.name:
        return get_model(model, delay_ms=delay_ms, **options)
    inner = get_model(model, **options)
    return LatencyStandin(inner, delay_ms=delay_ms, name=inner.name)


def openai_error_body(status: int, message: str) -> bytes:
    """OpenAI's error body, for the answers the connection layer gives itself (400, 408, 413)."""
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return json.dumps({"error": {"message": message, "type": kind, "param": None, "code": None}}).encode()


def _uvicorn_server(model: ChatModel, log_level: str, read_timeout_s: float = READ_TIMEOUT_S,
                    limits: Limits | None = None) -> uvicorn.Server:
    connection = ConnectionLimits(read_timeout_s=read_timeout_s, keep_alive_s=30, max_head_bytes=MAX_HEAD_BYTES)
    return guarded_server(create_app(model, limits), connection, log_level, error_body=openai_error_body)


def _base_url(host: str, sock: socket.socket) -> str:
    port = sock.getsockname()[1]
    return f"http://[{host}]:{port}/v1" if ":" in host else f"http://{host}:{port}/v1"


def serve(model: ChatModel, host: str = "127.0.0.1", port: int = 8000, log_level: str = "warning",
          limits: Limits | None = None) -> None:
    """Serve until interrupted. Prints ``serving NAME at URL`` once listening (``port=0`` picks a free port)."""
    sock = listen_socket(host, port)
    print(f"serving {model.name} at {_base_url(host, sock)}", flush=True)
    _uvicorn_server(model, log_level, limits=limits).run(sockets=[sock])


@contextlib.contextmanager
def serve_in_background(
    model: ChatModel | str,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    delay_ms: float | None = None,
    process: bool = False,
    startup_timeout_s: float = 60.0,
    read_timeout_s: float = READ_TIMEOUT_S,
    limits: Limits | None = None,
    options: dict[str, Any] | None = None,
) -> Iterator[str]:
    """Serve a model while the block runs and yield its base URL (``http://127.0.0.1:PORT/v1``).

    By default the server runs on a thread of this process (``model`` may be a ready model); with
    ``process=True`` it is a ``sparqlab serve-model`` subprocess (``model`` must be a name), which keeps the
    server's work off this interpreter, as benchmarks want. ``read_timeout_s`` (thread only) is the time a
    request's body has to arrive; ``limits`` (thread only) the vLLM-like limits (:class:`Limits`);
    ``options`` a named stand-in's options (``serve-model --option KEY=VALUE``).
    """
    if process:
        if not isinstance(model, str):
            raise TypeError("process=True serves a model by name; pass the name, not a model object")
        with _serve_process(model, host, port, delay_ms, startup_timeout_s, options or {}) as url:
            yield url
        return
    served = model_for_serving(model, delay_ms, **(options or {}))
    sock = listen_socket(host, port)
    server = _uvicorn_server(served, "warning", read_timeout_s, limits)
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
def _serve_process(name: str, host: str, port: int, delay_ms: float | None, timeout_s: float,
                   options: dict[str, Any]) -> Iterator[str]:
    command = [sys.executable, "-m", "sparqlab", "serve-model", "--model", name, "--host", host, "--port", str(port)]
    if delay_ms is not None:
        command += ["--delay-ms", str(delay_ms)]
    for key, value in options.items():
        command += ["--option", f"{key}={value}"]
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
