"""The chat-model interface every backend and stand-in implements.

A call is described completely by a :class:`ChatRequest` (model, messages, sampling parameters); its canonical
JSON is the response-cache key. A :class:`ChatResponse` carries the text and its cost: tokens, latency and why
generation stopped.
"""

from __future__ import annotations

import asyncio
import math
import weakref
from collections.abc import Coroutine
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from sparqlab.core.event_loops import run_sync
from sparqlab.core.text import scrub

Message = dict[str, str]
"""``{"role": "system" | "user" | "assistant", "content": "..."}``"""

T = TypeVar("T")

SAMPLING_PARAMETERS = ("temperature", "top_p", "max_tokens", "stop", "seed", "reasoning_effort", "extra")
"""The parameters :meth:`ChatRequest.build` accepts besides the model, the messages and the offered tools
(``reasoning_effort``, a reasoning model's ``low`` / ``medium`` / ``high``, is sent as a request field of
``extra``)."""


@dataclass(frozen=True)
class ChatRequest:
    """Everything that determines a response; its canonical JSON is the cache key.

    ``extra`` holds further request fields passed through to the server unchanged (sorted ``(name, value)``
    pairs, e.g. ``(("reasoning_effort", "low"),)`` for gpt-oss); being part of the request, they are part of the
    cache key too.

    ``tools`` are the functions offered to the model in OpenAI's chat-completions schema (``{"type": "function",
    "function": {"name", "description", "parameters"}}``) and ``tool_choice`` OpenAI's choice (``"auto"``,
    ``"required"``, ``"none"`` or one named function); the model answers with ``ChatResponse.tool_calls``. Both
    enter the cache key only when set, so requests without tools keep the keys they always had.
    """

    model: str
    messages: tuple[tuple[str, str], ...]
    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    extra: tuple[tuple[str, Any], ...] = ()
    tools: tuple[dict[str, Any], ...] = ()
    tool_choice: str | dict[str, Any] | None = None

    def __post_init__(self) -> None:
        # ``temperature=0`` and ``temperature=0.0`` are one request: store floats so both get one cache key.
        for name in ("temperature", "top_p"):
            value = getattr(self, name)
            if isinstance(value, int) and not isinstance(value, bool):
                object.__setattr__(self, name, float(value))

    @classmethod
    def build(cls, model: str, messages: list[Message] | str, *, tools: list[dict[str, Any]] | None = None,
              tool_choice: str | dict[str, Any] | None = None, **params: Any) -> ChatRequest:
        """From OpenAI-style message dicts (or one string, taken as a single user message), the functions offered
        (``tools``, ``tool_choice``) and sampling parameters.

        An unknown parameter name raises ``TypeError`` naming the known ones; server-specific fields go in
        ``extra={...}``.
        """
        unknown = sorted(set(params) - set(SAMPLING_PARAMETERS))
        if unknown:
            raise TypeError(f"unknown chat parameter(s) {', '.join(unknown)}: the interface takes "
                            f"{', '.join(SAMPLING_PARAMETERS)}; pass server-specific request fields as "
                            f"extra={{{unknown[0]!r}: ...}}")
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        tools = tools or ()
        if not isinstance(tools, list | tuple) or not all(isinstance(tool, dict) for tool in tools):
            raise TypeError(f"tools must be a list of function definitions (dicts), not {type(tools).__name__}")
        stop = params.pop("stop", None) or ()
        if isinstance(stop, str):
            stop = (stop,)
        extra = dict(params.pop("extra", None) or {})
        effort = params.pop("reasoning_effort", None)
        if effort is not None:
            extra.setdefault("reasoning_effort", effort)
        return cls(
            model,
            tuple((m["role"], m["content"]) for m in messages),
            stop=tuple(stop),
            tools=tuple(tools),
            tool_choice=tool_choice,
            extra=tuple(sorted(dict(extra).items())),
            **params,
        )

    @property
    def message_dicts(self) -> list[Message]:
        return [{"role": role, "content": content} for role, content in self.messages]

    @property
    def last_user_message(self) -> str:
        """The content of the last ``user`` message ("" if there is none)."""
        return next((content for role, content in reversed(self.messages) if role == "user"), "")

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["messages"] = self.message_dicts
        data["stop"] = list(self.stop)
        data["extra"] = dict(self.extra)
        data["tools"] = list(self.tools)
        for name in ("tools", "tool_choice"):  # absent when unset: the keys of requests without tools stay as they were
            if not data[name]:
                del data[name]
        return data


def estimate_tokens(text: str) -> int:
    """A deterministic token-count *estimate* (no tokenizer): about four characters per token, and at least one
    per whitespace-separated word. Used where no server reports real counts; such usage is marked ``estimated``."""
    if not text:
        return 0
    return max(len(text.split()), math.ceil(len(text) / 4))


@dataclass
class Usage:
    """Tokens one call cost. ``estimated`` is true when the counts come from :func:`estimate_tokens` (stand-ins,
    servers that report no usage) rather than from the model's tokenizer. ``cached_tokens`` are the prompt tokens
    the server says it took from its prefix cache instead of computing them (vLLM's and OpenAI's
    ``usage.prompt_tokens_details.cached_tokens``, llama-server's ``timings.cache_n``); ``None`` when it does not
    say."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False
    cached_tokens: int | None = None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @classmethod
    def estimate(cls, request: ChatRequest, text: str) -> Usage:
        prompt = sum(estimate_tokens(content) for _, content in request.messages)
        return cls(prompt, estimate_tokens(text), estimated=True)


@dataclass
class ChatResponse:
    """A model's answer with its cost: tokens, latency (0 for a cache hit) and why generation stopped.

    ``text`` is the final answer (the message ``content``); ``reasoning`` is a reasoning model's separate chain of
    thought when the server returns one (vLLM's ``reasoning`` / ``reasoning_content``), else ``None``;
    ``retries`` is how many times the client retried the call (429, 5xx, timeouts) before this answer.
    ``tool_calls`` are the functions the model called (OpenAI's ``message.tool_calls``: ``{"id", "type":
    "function", "function": {"name", "arguments"}}`` with the arguments a JSON *string*, as the model wrote it),
    ``None`` when it called none; such a reply ends with ``finish_reason="tool_calls"``.
    """

    text: str
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    finish_reason: str = "stop"
    model: str = ""
    cached: bool = False
    reasoning: str | None = None
    retries: int = 0
    prompt_recomputed: int | None = None
    tool_calls: list[dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        # Model text enters the workbench here, from every backend and from the cache: a lone surrogate (valid in
        # JSON, not in UTF-8) would make every later write of it fail, so it becomes U+FFFD once, here.
        self.text = scrub(self.text)
        if self.reasoning is not None:
            self.reasoning = scrub(self.reasoning)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChatResponse:
        data = dict(data)
        data["usage"] = Usage(**data.get("usage", {}))
        return cls(**data)


class InFlightLimit:
    """At most ``slots`` requests at once to one endpoint, shared by every model that calls it: a semaphore per
    event loop (a semaphore belongs to the loop it first waited on; blocking calls each run in a loop of their
    own)."""

    def __init__(self, slots: int):
        if slots < 1:
            raise ValueError(f"an endpoint serves at least 1 request at once; got {slots}")
        self.slots = slots
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = \
            weakref.WeakKeyDictionary()

    def slot(self) -> asyncio.Semaphore:
        """The running loop's semaphore: ``async with limit.slot(): ...`` holds one slot."""
        loop = asyncio.get_running_loop()
        semaphore = self._semaphores.get(loop)
        if semaphore is None:
            semaphore = self._semaphores[loop] = asyncio.Semaphore(self.slots)
        return semaphore


class ChatModel:
    """A chat model. Subclasses implement :meth:`acomplete`; the other methods are conveniences over it.

    ``name`` is what gets recorded in configs and manifests; ``is_standin`` marks deterministic offline
    baselines, which must never be reported as LLM results.
    """

    name: str = "model"
    is_standin: bool = False

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        raise NotImplementedError

    async def aclose(self) -> None:
        """Release what this model holds on the running event loop (HTTP connections). Call it before the loop
        ends when driving the model asynchronously (``asyncio.run(...)``); the blocking methods do it for you."""

    def _blocking(self, coroutine: Coroutine[Any, Any, T]) -> T:
        async def once() -> T:
            try:
                return await coroutine
            finally:
                await self.aclose()

        return run_sync(once())

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Blocking call, for scripts and notebooks (works inside a running event loop too)."""
        return self._blocking(self.acomplete(request))

    async def chat(self, messages: list[Message] | str, **params: Any) -> ChatResponse:
        """``await model.chat([{"role": "user", "content": "..."}], temperature=0, max_tokens=256)``"""
        return await self.acomplete(ChatRequest.build(self.name, messages, **params))

    def chat_sync(self, messages: list[Message] | str, **params: Any) -> ChatResponse:
        """Blocking :meth:`chat`."""
        return self._blocking(self.chat(messages, **params))

    async def served_identity(self) -> dict[str, Any] | None:
        """What a server reports about the model it serves under :attr:`name` (vLLM's ``/v1/models`` entry:
        ``root`` weights, ``max_model_len``), so the response cache can tell two models served under one name
        apart. ``None`` for in-process models, whose identity is their code."""
        return None

    def endpoints(self) -> list[ChatModel]:
        """The models that call an endpoint over HTTP on this one's behalf (each with ``base_url``, ``slots`` and
        ``in_flight_limit``): none for a model in process."""
        return []

    def describe(self) -> dict[str, Any]:
        """What a manifest records about this model (no secrets)."""
        return {"name": self.name, "standin": self.is_standin, "backend": type(self).__name__}
