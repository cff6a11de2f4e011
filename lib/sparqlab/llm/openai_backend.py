"""Any OpenAI-compatible chat endpoint (vLLM, SGLang, llama.cpp server, OpenAI) through the official ``openai``
client.

Retries are the client's own: on connection errors, timeouts, 408, 409, 429 and 5xx it retries up to
``max_retries`` times with exponential backoff (0.5 s doubling up to 8 s, with jitter, honouring ``Retry-After``).
Errors that retrying cannot fix become typed :mod:`sparqlab.llm.errors` with a message that says what to do.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import time
from collections.abc import AsyncGenerator
from typing import Any
from urllib.parse import urlsplit

import httpx2
import openai

from sparqlab.core.environment import api_key as default_api_key
from sparqlab.core.environment import model_defaults
from sparqlab.core.http import ReplyRefused, check_origin, read_capped, tls_context
from sparqlab.llm.base import ChatModel, ChatRequest, ChatResponse, InFlightLimit, Usage
from sparqlab.llm.errors import (
    ContextOverflow,
    ModelAccessRefused,
    ModelError,
    ModelOverloaded,
    ModelReplyInvalid,
    ModelRequestError,
    ModelUnavailable,
    UnknownModel,
)
from sparqlab.llm.standins import STANDIN_PREFIX, standin_names

CONTEXT_OVERFLOW = re.compile(r"maximum context length|longer than the maximum model length|context length exceeded",
                              re.IGNORECASE)
"""How vLLM (and OpenAI) word a request that does not fit the model's context."""

PLACEHOLDER_API_KEY = "EMPTY"
"""Sent when no key is configured: local servers (vLLM without ``--api-key``) accept any key."""


def normalise_base_url(url: str) -> str:
    """Add the ``/v1`` that OpenAI-compatible servers expect when the URL has no path (``http://host:8000``)."""
    url = url.rstrip("/")
    return url + "/v1" if urlsplit(url).path in ("", "/") else url


def model_endpoint(name: str, base_url: str | None) -> str:
    """The /v1 URL serving model ``name``: ``base_url`` (``SPARQLAB_MODEL_URL`` already applied by the caller's
    :func:`~sparqlab.core.environment.model_defaults`). None is an error, never a silent guess at a local default
    port; the one rule and message of the Python API and the CLI."""
    if not base_url:
        raise ValueError(
            f"model {name!r} is served by an OpenAI-compatible server, but no endpoint is given: pass its URL "
            "(--model-url http://HOST:PORT/v1 on the command line, base_url= or model_url= in Python) or set "
            f"SPARQLAB_MODEL_URL; offline, use a stand-in ({', '.join(standin_names())})")
    return normalise_base_url(base_url)


HTTP_TRANSPORTS = {"aiohttp": openai.DefaultAioHttpClient, "httpx": openai.DefaultAsyncHttpxClient}
"""The HTTP clients under ``openai.AsyncOpenAI`` that :class:`OpenAIModel` can use, with the SDK's defaults: its
aiohttp transport (the default here: at 32 calls in flight the client's CPU per call is about half of that on
HTTPX2, whose connection pool walks every connection on each request and response; docs/performance.md section 5)
or HTTPX2's own."""

MAX_REPLY_BYTES = 16 * 2**20
"""Default cap of one reply's body (16 MiB, far over any completion's ``max_tokens``): a larger one is refused
while it arrives, so a runaway server cannot fill the memory, the traces and the cache."""


class RefusedReply(openai.OpenAIError):
    """A reply refused by :class:`_BoundedAttempts` (over the byte cap, or from another origin after a redirect);
    an ``OpenAIError``, so the SDK passes it on without retrying it."""


class ForeignRedirect(RefusedReply):
    """The endpoint redirected to another origin: every later request would be, so the run stops."""


class _BoundedAttempts:
    """Mixin over the SDK's HTTP clients: each attempt (sending, the headers and the whole body) ends within
    ``attempt_timeout_s`` however slowly the bytes come (the SDK's own timeout bounds each read, so a reply
    dripping a byte a second never trips it), a body over ``max_reply_bytes`` is refused while it arrives, and so
    is a reply that a redirect brought from another origin (scheme, host, port) than the one asked: the run
    records the endpoint it was given. A late attempt is the transport's read timeout, which the SDK retries like
    any other."""

    def __init__(self, *, attempt_timeout_s: float, max_reply_bytes: int, **kwargs: Any):
        super().__init__(**kwargs)
        self.attempt_timeout_s = attempt_timeout_s
        self.max_reply_bytes = max_reply_bytes

    async def send(self, request: httpx2.Request, *, stream: bool = False, **kwargs: Any) -> httpx2.Response:
        try:
            async with asyncio.timeout(self.attempt_timeout_s):
                response = await super().send(request, stream=True, **kwargs)  # type: ignore[misc]
                try:
                    await check_origin(request.url, response)
                except ReplyRefused as refused:
                    raise ForeignRedirect(str(refused)) from None
                return response if stream else await self._read(request, response)
        except TimeoutError:
            raise httpx2.ReadTimeout(f"no complete reply within {self.attempt_timeout_s:g} s",
                                     request=request) from None

    async def _read(self, request: httpx2.Request, response: httpx2.Response) -> httpx2.Response:
        """``response`` with its whole body read (:func:`~sparqlab.core.http.read_capped`), or
        :class:`RefusedReply`."""
        try:
            content = await read_capped(response, self.max_reply_bytes, "lower max_tokens, or raise max_reply_bytes")
        except ReplyRefused as refused:
            raise RefusedReply(str(refused)) from None
        headers = [(name, value) for name, value in response.headers.multi_items()
                   if name.lower() not in ("content-encoding", "content-length")]  # the body is decoded here
        return httpx2.Response(response.status_code, headers=headers, content=content, request=request,
                               extensions=response.extensions)


BOUNDED_TRANSPORTS = {name: type(f"Bounded{client.__name__}", (_BoundedAttempts, client), {})
                      for name, client in HTTP_TRANSPORTS.items()}
""":data:`HTTP_TRANSPORTS` with :class:`_BoundedAttempts`: what :class:`OpenAIModel` uses."""

WITHOUT_PLATFORM_HEADERS = {name: openai.omit for name in (
    "X-Stainless-Lang", "X-Stainless-Package-Version", "X-Stainless-OS", "X-Stainless-Arch", "X-Stainless-Runtime",
    "X-Stainless-Runtime-Version", "X-Stainless-Async")}
"""The client's ``default_headers``: the SDK would describe this machine (OS, architecture, Python and SDK
versions, its async library) to every endpoint in seven headers; a run sends an endpoint what determines the
reply, and each header left out is one less that the HTTP stack copies, normalises and searches on every
request."""

RETRY_COUNT_HEADER = "x-stainless-retry-count"
"""The request header in which the ``openai`` client numbers its attempts at a call (0, 1, ...)."""


def connection_failure(error: BaseException) -> bool:
    """Whether a connection could not be made or was lost (refused, reset, closed by the server) somewhere in
    ``error``'s causes, as opposed to a server that took too long. The SDK's aiohttp transport reports every
    aiohttp connection error as a connect *timeout*; the cause it chains says what really happened."""
    import aiohttp

    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, OSError | aiohttp.ClientConnectionError) and not isinstance(cause, TimeoutError):
            return True
        cause = cause.__cause__
    return False


async def _closed_with_loop(client: openai.AsyncOpenAI) -> AsyncGenerator[None]:
    """Closes ``client`` when closed itself. Started on the client's loop, it is one of the loop's async generators,
    which ``asyncio.run`` (hence :func:`~sparqlab.core.event_loops.run_sync`) closes before closing the loop: a
    model used in ``asyncio.run(...)`` without :meth:`ChatModel.aclose` leaves no open connection (aiohttp logs an
    error for each session it finds unclosed)."""
    try:
        yield
    finally:
        await client.close()


def request_body(request: ChatRequest) -> dict[str, Any]:
    """The ``/chat/completions`` JSON body of ``request``: the fields ``chat.completions.create`` would send for
    the same parameters, with ``extra`` merged in at the top level (the SDK's ``extra_body``)."""
    body: dict[str, Any] = {
        "model": request.model,
        "messages": request.message_dicts,
        "temperature": request.temperature,
        "top_p": request.top_p,
    }
    if request.max_tokens is not None:
        body["max_tokens"] = request.max_tokens
    if request.stop:
        body["stop"] = list(request.stop)
    if request.seed is not None:
        body["seed"] = request.seed
    if request.tools:
        body["tools"] = list(request.tools)
    if request.tool_choice is not None:
        body["tool_choice"] = request.tool_choice
    body.update(request.extra)
    return body


def _field(mapping: dict[str, Any], key: str, kind: type, where: str) -> Any:
    """``mapping[key]`` if it is a ``kind`` (a bool is no number), ``None`` if absent or null; else ValueError."""
    value = mapping.get(key)
    if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
        raise ValueError(f"{where}.{key} is {type(value).__name__}, not {kind.__name__}")
    return value


BODY_EXCERPT_CHARS = 300
"""At most this much of a body that is not a completion is quoted in the error."""


def body_message(content: bytes) -> str:
    """What a body that is not a completion says, for the error: the server's own message (``error.message``,
    ``error``, ``detail`` or ``message`` of a JSON object, e.g. "CUDA out of memory"), else the start of its
    text; ``""`` for an empty body."""
    text = content.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict):
        said = data.get("error") or data.get("detail") or data.get("message")
        if isinstance(said, dict):
            said = said.get("message")
        if isinstance(said, str) and said.strip():
            text = said
    text = " ".join(text.split())
    if not text:
        return ""
    cut = text[:BODY_EXCERPT_CHARS] + (" ..." if len(text) > BODY_EXCERPT_CHARS else "")
    return f": the server said {cut!r}"


def read_tool_calls(message: dict[str, Any]) -> list[dict[str, Any]] | None:
    """``message.tool_calls`` in OpenAI's shape, ``None`` when absent or empty: each call an object with an ``id``
    and a ``function`` object naming the function, whose ``arguments`` stay the string the model wrote (read
    later, as untrusted text; an object some servers send instead is written back as JSON). Any other shape is a
    ``ValueError``."""
    calls = _field(message, "tool_calls", list, "message")
    if not calls:
        return None
    read = []
    for index, call in enumerate(calls):
        where = f"message.tool_calls[{index}]"
        function = _field(call, "function", dict, where) if isinstance(call, dict) else None
        if function is None or not isinstance(function.get("name"), str):
            raise ValueError(f"{where} is not an object with a function name")
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            arguments = json.dumps(arguments, ensure_ascii=False)
        elif arguments is None:
            arguments = ""
        elif not isinstance(arguments, str):
            raise ValueError(f"{where}.function.arguments is {type(arguments).__name__}, not a string")
        read.append({"id": str(call.get("id") or f"call_{index}"), "type": "function",
                     "function": {"name": function["name"], "arguments": arguments}})
    return read


MAX_TOKEN_COUNT = 10**9
"""The largest token count a reply's ``usage`` may report: no context holds more, and a larger (or negative)
number is a broken server whose counts must not reach the metrics."""


def _token_count(usage: dict[str, Any], key: str) -> int:
    """``usage[key]`` (0 when absent) if it is a whole number from 0 to :data:`MAX_TOKEN_COUNT`; else ValueError."""
    value = _field(usage, key, int, "usage") or 0
    if not 0 <= value <= MAX_TOKEN_COUNT:
        shown = str(value) if abs(value) < 10**30 else f"a {len(str(abs(value)))}-digit number"
        raise ValueError(f"usage.{key} is {shown}, not a token count (0 to {MAX_TOKEN_COUNT:,})")
    return value


def cached_prompt_tokens(data: dict[str, Any], usage: dict[str, Any]) -> int | None:
    """The prompt tokens a completion says came from the server's prefix cache: ``usage.prompt_tokens_details.
    cached_tokens`` (vLLM, OpenAI, the project's server), else llama-server's ``timings.cache_n``; ``None`` when
    neither is there (llama-cpp-python 0.3's server reports neither). A count that is not one is a ValueError."""
    details = _field(usage, "prompt_tokens_details", dict, "usage")
    if details is not None and details.get("cached_tokens") is not None:
        return _token_count(details, "cached_tokens")
    timings = _field(data, "timings", dict, "completion")
    if timings is not None and timings.get("cache_n") is not None:
        return _token_count(timings, "cache_n")
    return None


def completion_response(content: bytes, request: ChatRequest, latency_s: float, retries: int,
                        base_url: str) -> ChatResponse:
    """A :class:`ChatResponse` from the JSON of a chat completion (OpenAI's ``chat.completion`` object): the first
    choice's ``message.content`` as text, vLLM's ``reasoning`` (or the older ``reasoning_content``) as reasoning,
    its ``tool_calls`` (:func:`read_tool_calls`), ``finish_reason`` (``stop`` when absent), the served ``model``
    name and the reported ``usage`` (with the prompt tokens served from the server's cache where it says so:
    :func:`cached_prompt_tokens`), estimated (:meth:`Usage.estimate`) when the server reports none. A body that
    is not such an object (token counts that are not whole numbers from 0 to :data:`MAX_TOKEN_COUNT` included, a
    body nested too deeply to read) is a :class:`ModelReplyInvalid` (the server is broken: the run stops), quoting
    the body's own message."""
    try:
        data = json.loads(content)
        if not isinstance(data, dict):
            raise ValueError(f"the body is a JSON {type(data).__name__}, not an object")
        choices = data.get("choices")
        if not choices or not isinstance(choices, list):
            raise ValueError(f"it has no choices for {request.model!r}")
        choice = choices[0]
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise ValueError("choices[0].message is not an object")
        text = _field(message, "content", str, "message") or ""
        reasoning = (_field(message, "reasoning", str, "message")
                     or _field(message, "reasoning_content", str, "message"))
        tool_calls = read_tool_calls(message)
        finish_reason = _field(choice, "finish_reason", str, "choices[0]") or "stop"
        model = _field(data, "model", str, "completion") or request.model
        reported = _field(data, "usage", dict, "completion")
        if reported is None:
            usage = Usage.estimate(request, text)
        else:
            usage = Usage(_token_count(reported, "prompt_tokens"), _token_count(reported, "completion_tokens"),
                          cached_tokens=cached_prompt_tokens(data, reported))
    except RecursionError:
        raise ModelReplyInvalid(f"the model endpoint {base_url}/chat/completions answered with a body nested too "
                                "deeply to be a completion; check the server's log and rerun: the same call "
                                "resumes") from None
    except ValueError as error:  # json.JSONDecodeError and UnicodeDecodeError are ValueErrors too
        raise ModelReplyInvalid(f"the model endpoint {base_url}/chat/completions answered with a body that is not a "
                                f"completion ({error}){body_message(content)}; check the server's log and "
                                "rerun: the same call resumes") from None
    return ChatResponse(text=text, usage=usage, latency_s=latency_s, finish_reason=finish_reason, model=model,
                        reasoning=reasoning, retries=retries, tool_calls=tool_calls)


IDENTIFIED_BY_ROOT = "vllm_root"
"""``identified_by``: the server named the weights it serves (vLLM's ``root`` / ``max_model_len``)."""
IDENTIFIED_BY_PROPS = "llama_cpp_props"
"""``identified_by``: the endpoint URL and the server's ``/props`` self-description (llama.cpp)."""
IDENTIFIED_BY_FILE = "served_file_sha256"
"""``identified_by``: the ``/props`` self-description with the served file's SHA-256 (sparqlab's launcher), without
the endpoint URL: the same file served again on another port (each ``reproduce --real``) keeps its cached replies."""
IDENTIFIED_BY_ENDPOINT = "endpoint_only"
"""``identified_by``: the endpoint URL alone (the server described neither its weights nor itself)."""

PROPS_FIELDS = ("model_path", "build_info")
"""Text fields of llama-server's ``/props`` that say what answers (kept as they are)."""


def props_identity(props: dict[str, Any]) -> dict[str, Any]:
    """What of a llama.cpp server's ``/props`` says what answers: ``model_path``, ``build_info``, the context size
    (``default_generation_settings.n_ctx``), the chat template's SHA-256 (the template itself is long and may
    change only in whitespace that still matters) and sparqlab's launcher's ``identity`` object; fields that are
    missing or of another type are left out (other servers describe themselves differently). Slots are not
    identity: they change how many requests run at once, not what they answer."""
    described: dict[str, Any] = {key: props[key] for key in PROPS_FIELDS if isinstance(props.get(key), str)}
    settings = props.get("default_generation_settings")
    if isinstance(settings, dict) and isinstance(settings.get("n_ctx"), int):
        described["n_ctx"] = settings["n_ctx"]
    if isinstance(props.get("chat_template"), str):
        described["chat_template_sha256"] = hashlib.sha256(props["chat_template"].encode("utf-8")).hexdigest()
    if isinstance(props.get("identity"), dict):
        described["identity"] = {key: value for key, value in props["identity"].items()
                                 if isinstance(value, str | int | float | bool) or value is None}
    return described


class OpenAIModel(ChatModel):
    """A model behind an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    ``model``, ``base_url`` and ``api_key`` default to ``SPARQLAB_MODEL``, ``SPARQLAB_MODEL_URL`` (no default: without
    either, :func:`model_endpoint` refuses) and ``SPARQLAB_API_KEY`` (else a placeholder, fine for vLLM). ``timeout_s`` bounds
    one attempt as a whole (the reply's last byte included: :class:`_BoundedAttempts`), wherever the call is made
    (a question, a method's ``prepare``); reasoning models can take minutes for a long answer, hence the generous
    default. ``max_reply_bytes`` caps one reply's body (:data:`MAX_REPLY_BYTES`).
    A served stand-in (name ``standin-*``) stays marked ``is_standin``. ``http_transport`` picks the HTTP client
    under the SDK (:data:`HTTP_TRANSPORTS`). ``accept_unlisted_name`` accepts a name the endpoint's ``/v1/models``
    does not list (a server that serves one model under any name and lists something else), with a warning in
    :attr:`warnings` (recorded in environment.json); otherwise such a name is :class:`UnknownModel`.

    After :meth:`served_identity`: :attr:`identified_by` (what identified the served model, ``IDENTIFIED_BY_*``)
    and :attr:`slots` (requests the server serves at once, when its ``/props`` announces ``total_slots``).
    :attr:`in_flight_limit` (set by the runner, shared by every model calling the endpoint) holds back a request
    until the server has a free slot.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_retries: int = 4,
        timeout_s: float = 600.0,
        connect_timeout_s: float = 10.0,
        http_transport: str = "aiohttp",
        max_reply_bytes: int = MAX_REPLY_BYTES,
        accept_unlisted_name: bool = False,
    ):
        # every model of this backend is served over HTTP, a served stand-in too
        name, base_url = model_defaults(model, base_url, served_over_http=lambda _name: True)
        if not name:
            raise ValueError("no model name: pass model=... or set SPARQLAB_MODEL")
        self.name = name
        self.is_standin = name.startswith(STANDIN_PREFIX)
        self.base_url = model_endpoint(name, base_url)
        self._api_key = api_key or default_api_key() or PLACEHOLDER_API_KEY
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.max_reply_bytes = max_reply_bytes
        if http_transport not in HTTP_TRANSPORTS:
            raise ValueError(f"http_transport must be one of {', '.join(HTTP_TRANSPORTS)} (got {http_transport!r})")
        self.http_transport = http_transport
        self.accept_unlisted_name = accept_unlisted_name
        self.warnings: list[str] = []
        self.identified_by: str | None = None
        self.slots: int | None = None
        self.in_flight_limit: InFlightLimit | None = None
        self._clients: dict[asyncio.AbstractEventLoop, tuple[openai.AsyncOpenAI, AsyncGenerator[None]]] = {}

    def _client(self) -> openai.AsyncOpenAI:
        """The client of the running event loop: an async connection pool belongs to one loop, and blocking
        calls (``complete``, ``chat_sync``) each run in a fresh loop; every client shares the process's TLS context
        (:func:`~sparqlab.core.http.tls_context`). It is closed by :meth:`aclose`, else when the loop shuts down
        (:func:`_closed_with_loop`)."""
        loop = asyncio.get_running_loop()
        entry = self._clients.get(loop)
        if entry is None:
            for stale in [other for other in self._clients if other.is_closed()]:
                del self._clients[stale]  # a loop closed without shutting down: let its client go
            client = openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self._api_key,
                default_headers=WITHOUT_PLATFORM_HEADERS,
                max_retries=self.max_retries,
                timeout=openai.Timeout(self.timeout_s, connect=min(self.connect_timeout_s, self.timeout_s)),
                http_client=BOUNDED_TRANSPORTS[self.http_transport](attempt_timeout_s=self.timeout_s,
                                                                    max_reply_bytes=self.max_reply_bytes,
                                                                    verify=tls_context()),
            )
            closer = _closed_with_loop(client)
            with contextlib.suppress(StopIteration):
                closer.asend(None).send(None)  # run it to its yield: the loop now knows it, and will close it
            entry = self._clients[loop] = (client, closer)
        return entry[0]

    async def aclose(self) -> None:
        entry = self._clients.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[1].aclose()

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        """The call, once the endpoint has a free slot (:attr:`in_flight_limit`; the wait is not the call's
        latency)."""
        async with self.in_flight_limit.slot() if self.in_flight_limit else contextlib.nullcontext():
            return await self._post(request)

    async def _post(self, request: ChatRequest) -> ChatResponse:
        """One ``POST /chat/completions`` through the client's documented low-level ``post`` (retries, timeouts,
        auth and status errors are the client's own) with a plain JSON body, answered as the raw HTTP response and
        read by :func:`completion_response`: the SDK's typed path spent most of a call's client CPU transforming
        the parameters through their ``TypedDict`` annotations and parsing the reply into pydantic models (issue
        23 target 5, docs/performance.md section 5)."""
        start = time.perf_counter()
        try:
            raw = await self._client().post(self.completions_url, body=request_body(request), cast_to=httpx2.Response)
        except ForeignRedirect as error:
            raise ModelAccessRefused(str(error)) from None
        except RefusedReply as error:
            raise ModelRequestError(str(error)) from None
        except openai.APIError as error:
            raise await self._translate(error, request.model) from error
        latency = time.perf_counter() - start
        # the client numbers its attempts in this header of the request it finally sent (0: the first one)
        retries = int(raw.request.headers.get(RETRY_COUNT_HEADER, "0"))
        return completion_response(raw.content, request, latency, retries, self.base_url)

    async def _served_models(self) -> list[Any]:
        """The endpoint's ``/v1/models`` entries, without retries."""
        try:
            models = await self._client().with_options(max_retries=0).models.list()
            return [entry for entry in models.data if isinstance(entry.id, str)]
        except openai.APIError as error:
            raise await self._translate(error, self.name, diagnose=False) from error
        except (AttributeError, TypeError, ValueError, KeyError) as error:  # the SDK could not read the body
            raise ModelReplyInvalid(f"the model endpoint {self.base_url}/models answered with something that is "
                                    f"not a model list ({type(error).__name__}: {error}); is {self.base_url} an "
                                    "OpenAI-compatible /v1 URL?") from None

    async def list_models(self) -> list[str]:
        """The model names the endpoint serves (``GET /v1/models``), without retries."""
        return [entry.id for entry in await self._served_models()]

    async def served_identity(self) -> dict[str, Any]:
        """What answers under this model's name, as the response cache's identity; raises :class:`UnknownModel`
        when the endpoint does not list the name (llama.cpp's servers answer any name, so a misspelt one would
        be recorded as served) unless ``accept_unlisted_name`` (then a :attr:`warnings` entry says so), and
        :class:`ModelUnavailable` when the endpoint cannot be reached.

        A server that identifies its model in its ``/v1/models`` entry (vLLM: ``root``, the weights served under
        the name, and ``max_model_len``) gives ``{"id", "root", "max_model_len"}``, the identity responses were
        always stored with. Any other (llama.cpp) names only an alias, so the endpoint URL and the server's
        self-description (``GET /props``, :func:`props_identity`) enter the identity: two servers with other
        weights or chat templates under one alias do not share cached replies; when that description names the
        served file by its SHA-256 (sparqlab's launcher) the URL is left out, so a file served again on another
        port is the same model. :attr:`identified_by` says which case held. A server that says it serves a
        stand-in (``standin: true``, as ``sparqlab train serve`` of a tiny random model does) marks this model
        ``is_standin``."""
        entries = await self._served_models()
        entry = next((entry for entry in entries if entry.id == self.name), None)
        if entry is None and not self.accept_unlisted_name:
            raise UnknownModel(self._unknown_model_message(self.name, [entry.id for entry in entries]))
        if entry is None:
            listed = ", ".join(repr(entry.id) for entry in entries) or "no models"
            self.warnings.append(f"the endpoint {self.base_url} does not list the model {self.name!r} (it lists "
                                 f"{listed}); accepted because accept_unlisted_name is set: the name recorded is "
                                 "the one asked for, not one the server confirmed")
        extra = (entry.model_extra or {}) if entry is not None else {}
        self.is_standin = self.is_standin or bool(extra.get("standin"))
        if extra.get("root") is not None or extra.get("max_model_len") is not None:
            self.identified_by = IDENTIFIED_BY_ROOT
            return {"id": self.name, "root": extra.get("root"), "max_model_len": extra.get("max_model_len")}
        props = await self._props()
        slots = props.get("total_slots")
        self.slots = slots if isinstance(slots, int) and not isinstance(slots, bool) and slots >= 1 else None
        described = props_identity(props)
        if described.get("identity", {}).get("model_sha256"):
            self.identified_by = IDENTIFIED_BY_FILE
            return {"id": self.name, "props": described}
        self.identified_by = IDENTIFIED_BY_PROPS if described else IDENTIFIED_BY_ENDPOINT
        return {"id": self.name, "endpoint": self.base_url, **({"props": described} if described else {})}

    @property
    def completions_url(self) -> str:
        """Where chat completions are posted, as a whole URL: the client then takes it as it is instead of joining
        a relative path to its base URL (a URL copy and parse) on every call."""
        return f"{self.base_url}/chat/completions"

    @property
    def props_url(self) -> str:
        """Where a llama.cpp server describes itself: ``/props`` beside the ``/v1`` path."""
        return f"{self.base_url.removesuffix('/v1')}/props"

    async def _props(self) -> dict[str, Any]:
        """The endpoint's ``GET /props`` object (llama-server's shape), ``{}`` when it has none (404, another
        server's answer, a body that is not a JSON object)."""
        try:
            raw = await self._client().with_options(max_retries=0).get(self.props_url, cast_to=httpx2.Response)
            props = json.loads(raw.content)
        except openai.APIStatusError:
            return {}
        except openai.APIError as error:
            raise await self._translate(error, self.name, diagnose=False) from error
        except (ValueError, RecursionError):
            return {}
        return props if isinstance(props, dict) else {}

    async def check(self) -> None:
        """Fail fast, before a run: raise :class:`ModelUnavailable` or :class:`UnknownModel` unless the endpoint
        is up and serves this model."""
        served = await self.list_models()
        if self.name not in served:
            raise UnknownModel(self._unknown_model_message(self.name, served))

    def _unreachable_message(self, cause: str) -> str:
        if self.is_standin:
            start = f"`sparqlab serve-model --model {self.name} --port 8000`"
        else:
            start = (f"`vllm serve {self.name} --host 127.0.0.1 --port 8000`, or an offline stand-in with "
                     f"`sparqlab serve-model --model standin-echo --port 8000`")
        return (
            f"cannot reach the model endpoint {self.base_url} ({cause}). Start a server there, e.g. {start} "
            f"(SPARQLAB_MODEL_URL=http://127.0.0.1:8000/v1); or point SPARQLAB_MODEL_URL (base_url=...) at the "
            f"server's /v1 URL."
        )

    def _unknown_model_message(self, name: str, served: list[str]) -> str:
        offered = ", ".join(repr(model) for model in served) or "no models"
        return (
            f"the endpoint {self.base_url} does not serve the model {name!r}; it serves {offered}. "
            f"Set SPARQLAB_MODEL (or model=...) to one of these."
        )

    async def _translate(self, error: openai.APIError, name: str, diagnose: bool = True) -> ModelError:
        """The typed error for a failed call, after the client's retries are spent (or refused: a ``Retry-After``
        longer than the client waits is not retried; the message counts the attempts really made)."""
        made = int(error.request.headers.get(RETRY_COUNT_HEADER, "0")) + 1 if error.request is not None else 1
        attempts = f"after {made} attempt{'s' if made != 1 else ''}"
        response = getattr(error, "response", None)
        asked = response.headers.get("Retry-After") if response is not None else None
        if asked and made <= self.max_retries:
            attempts += f"; the server asked to wait Retry-After {asked[:40]}, more than the client waits"
        if isinstance(error, openai.APITimeoutError) and not connection_failure(error):
            return ModelOverloaded(
                f"the model endpoint {self.base_url} did not answer within {self.timeout_s:g} s ({attempts}); "
                f"raise timeout_s or max_retries (the client's retries), lower max_tokens or the concurrency, or "
                f"check the server's load"
            )
        if isinstance(error, openai.APIConnectionError):  # APITimeoutError is one too
            cause = str(error.__cause__ or error)
            return ModelUnavailable(self._unreachable_message(cause))
        if not isinstance(error, openai.APIStatusError):
            return ModelReplyInvalid(f"the model endpoint {self.base_url} sent a response that is not a valid "
                                     f"completion: {error}")
        status = error.status_code
        if status == 400 and CONTEXT_OVERFLOW.search(error.message or ""):
            return ContextOverflow(f"{self.base_url}: the request does not fit {name!r}'s context: {error.message}")
        if status in (408, 409, 429) or status >= 500:
            return ModelOverloaded(f"the model endpoint {self.base_url} kept failing with HTTP {status} "
                                   f"({attempts}): {error.message}. It is up but overloaded: lower the concurrency, "
                                   f"or raise max_retries (now {self.max_retries}; each retry waits 0.5 s doubling "
                                   f"up to 8 s, or the server's Retry-After) so the client waits longer")
        if diagnose and status in (400, 404):
            try:
                served = await self.list_models()
            except ModelError:
                served = None
            if served is not None and name not in served:
                return UnknownModel(self._unknown_model_message(name, served))
        hint = {401: " Check the API key (SPARQLAB_API_KEY or api_key=...).",
                403: " Check the API key (SPARQLAB_API_KEY or api_key=...) and its access to this model.",
                404: " Check that the base URL ends in /v1."}.get(status, "")
        refused = ModelAccessRefused if status in (401, 403, 404) else ModelRequestError
        return refused(f"{self.base_url} refused the request for {name!r} (HTTP {status}): {error.message}.{hint}")

    def endpoints(self) -> list[ChatModel]:
        return [self]

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "base_url": self.base_url,
            "max_retries": self.max_retries,
            "timeout_s": self.timeout_s,
            "http_transport": self.http_transport,
            "identified_by": self.identified_by,
            **({"slots": self.slots} if self.slots is not None else {}),
            **({"warnings": list(self.warnings)} if self.warnings else {}),
        }
