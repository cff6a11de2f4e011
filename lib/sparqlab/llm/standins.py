"""Stand-in models: deterministic, offline models behind the chat interface, for CI, for demos without a GPU and
as non-LLM baselines. Their names start with ``standin-`` (enforced) and they are marked ``is_standin``, so that a
stand-in is never reported as an LLM result. Their token counts are estimates (``Usage.estimated``).

Adding one (e.g. in a method's module, registered when the module is imported)::

    from sparqlab.llm import StandinModel, register_standin

    @register_standin("standin-template")
    class TemplateStandin(StandinModel):
        '''Fills a fixed SPARQL template with the question's entity.'''

        name = "standin-template"

        def respond(self, request):          # deterministic: same request, same text
            return "SELECT ..."

A stand-in with several candidate replies may draw among them at a temperature above 0 with the request's seed
(:func:`sampled`): the same request still gets the same reply, and the repeats of a run (seeds seed, seed+1, …)
differ reproducibly, a seeded draw that is never a model's variance.

``get_model("standin-template", **kwargs)`` then calls ``TemplateStandin(**kwargs)``; any callable returning a
stand-in works as the factory. Its module in the ``sparqlab.plugins`` group (:mod:`sparqlab.core.plugins`: a
line of sparqlab's own table, or an entry point of a third party's package) is imported when the name is first
asked for, so
``sparqlab serve-model --model standin-template`` and ``sparqlab models list`` know it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import inspect
import json
import math
import random
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from sparqlab.core.hashing import stable_hash
from sparqlab.core.registry import Registry
from sparqlab.llm.base import ChatModel, ChatRequest, ChatResponse, Usage, estimate_tokens

STANDIN_PREFIX = "standin-"

StandinFactory = Callable[..., ChatModel]

STANDINS: Registry[StandinFactory] = Registry("stand-in model")
"""Stand-in factories by ``standin-*`` name."""


def check_standin_name(name: str) -> str:
    """``name`` if it is a valid stand-in name, else ``ValueError``."""
    if not isinstance(name, str) or not name.startswith(STANDIN_PREFIX) or name == STANDIN_PREFIX:
        raise ValueError(f"stand-in names must start with {STANDIN_PREFIX!r} (got {name!r}), so that a stand-in "
                         f"can never be mistaken for an LLM")
    return name


def register_standin(name: str, factory: StandinFactory | None = None):
    """Register ``factory(**kwargs) -> ChatModel`` under ``name`` (``standin-*``).

    Usable as a call or as a class/function decorator. Registering the same factory again is a no-op (module
    reloads); a different factory under a taken name is an error.
    """
    check_standin_name(name)
    if factory is None:
        return lambda decorated: register_standin(name, decorated)
    return STANDINS.register(name, factory)


def standin_names() -> list[str]:
    """Names of every stand-in, the method packages' included (their plug-ins are loaded first), sorted."""
    return STANDINS.names()


def standin_factory(name: str) -> StandinFactory:
    """The registered factory of ``name`` (declared plug-ins are loaded on a miss); ``ValueError`` naming the
    registered ones if there is none."""
    return STANDINS.get(name)


def create_standin(name: str, **kwargs: Any) -> ChatModel:
    """Instantiate a registered stand-in, checking that it is one (``is_standin`` and a ``standin-*`` name)."""
    model = standin_factory(check_standin_name(name))(**kwargs)
    if not getattr(model, "is_standin", False):
        raise TypeError(f"the factory registered as {name!r} returned {model!r}, which is not marked is_standin")
    check_standin_name(model.name)
    if kwargs and isinstance(model, StandinModel):
        model.options = dict(kwargs)
    return model


def apply_limits(text: str, request: ChatRequest) -> tuple[str, str]:
    """Cut ``text`` as a server would: at the first stop sequence, then to the longest run of whole words whose
    token estimate fits ``max_tokens``. Returns the text and the finish reason (``stop`` or ``length``)."""
    cuts = [text.find(stop) for stop in request.stop if stop and stop in text]
    if cuts:
        text = text[: min(cuts)]
    limit = request.max_tokens
    if limit is None or estimate_tokens(text) <= limit:
        return text, "stop"
    kept: list[str] = []
    for word in text.split():
        if estimate_tokens(" ".join([*kept, word])) > limit:
            break
        kept.append(word)
    return (" ".join(kept) if kept else text[: 4 * limit]), "length"


@functools.cache
def code_digest(cls: type) -> str:
    """Digest of the source files of the modules that define ``cls`` and its base classes (builtins aside); a
    class defined where no file exists (a notebook cell) contributes its source if Python can find it, else its
    name."""
    digest = hashlib.sha256()
    for module_name in sorted({base.__module__ for base in cls.__mro__} - {"builtins", "abc"}):
        file = getattr(sys.modules.get(module_name), "__file__", None)
        if file and Path(file).is_file():
            digest.update(Path(file).read_bytes())
        else:
            try:
                digest.update(inspect.getsource(cls).encode())
            except (OSError, TypeError):
                digest.update(f"{module_name}.{cls.__qualname__}".encode())
    return digest.hexdigest()[:12]


@dataclasses.dataclass(frozen=True)
class RunBinding:
    """What a run tells its stand-ins before the first request (:meth:`StandinModel.bind`): the run's KG object
    and where the run's training questions come from (``(dataset, split)`` or ``None``), for stand-ins whose data
    defaults to the run's own (GGC's template memories, DeSQ's label lookup)."""

    kg: Any
    training: tuple[str, str] | None


class StandinModel(ChatModel):
    """Base class of deterministic stand-ins: implement :meth:`respond`, which must be quick (it runs on the
    event loop) and depend on the request and the stand-in's data only. Stop sequences and ``max_tokens`` are
    applied for you."""

    is_standin = True
    options: dict[str, Any] = {}
    """The options it was created with by :func:`create_standin` (a run's ``model_options``); part of :attr:`root`."""

    def __init__(self, name: str | None = None):
        if name is not None:
            self.name = name
        check_standin_name(self.name)

    @property
    def root(self) -> str:
        """What is served under the name, as vLLM's ``root`` field says it: the name plus a digest of the code of
        the modules defining this stand-in, so an edited stand-in misses the response cache (in-process and
        through the project's server) instead of replaying the old code's answers; likewise a stand-in created
        with other options (e.g. another retrieval memory) does not replay the answers of the first."""
        root = f"{self.name}@{code_digest(type(self))}"
        return f"{root}/{stable_hash(self.options, 8)}" if self.options else root

    async def served_identity(self) -> dict[str, Any] | None:
        return {"root": self.root}

    def bind(self, binding: RunBinding) -> None:
        """Take the run's KG and training source (called by the runner before the first request); a no-op for
        stand-ins that need neither (a wrapping stand-in passes it to its ``inner`` one). What a stand-in takes
        from here must show in :meth:`describe` and :attr:`options` (so in its response-cache identity)."""
        inner = getattr(self, "inner", None)
        if isinstance(inner, StandinModel):
            inner.bind(binding)

    def respond(self, request: ChatRequest) -> str:
        raise NotImplementedError

    def respond_with_tools(self, request: ChatRequest) -> tuple[str, list[dict[str, Any]] | None]:
        """The reply's text and the functions it calls (OpenAI's ``tool_calls``, :func:`tool_call`), for a
        stand-in that calls tools when the request offers them; by default :meth:`respond`'s text and no call."""
        return self.respond(request), None

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        start = time.perf_counter()
        text, calls = self.respond_with_tools(request)
        text, finish_reason = apply_limits(text, request)
        if calls and finish_reason == "stop":  # a reply cut by max_tokens loses its calls, as on a server
            usage = Usage.estimate(request, text + "".join(call["function"]["arguments"] for call in calls))
            return ChatResponse(text, usage, time.perf_counter() - start, "tool_calls", self.name, tool_calls=calls)
        return ChatResponse(text, Usage.estimate(request, text), time.perf_counter() - start, finish_reason,
                            self.name)


def sampled(candidates: Sequence[str], request: ChatRequest) -> str:
    """A stand-in's reply among its ``candidates`` (best first): the first at temperature 0; above, candidate
    ``i`` with probability proportional to exp(−i / temperature), drawn by a generator seeded with the request's
    seed and messages, so the same request always gets the same reply and another seed may get another. This
    is how a stand-in varies between the repeats of a run: a seeded draw, never a model's variance."""
    if request.temperature <= 0 or len(candidates) == 1:
        return candidates[0]
    draw = random.Random(stable_hash([request.seed, request.messages], 16))
    weights = [math.exp(-index / request.temperature) for index in range(len(candidates))]
    return draw.choices(list(candidates), weights)[0]


def tool_call(name: str, arguments: dict[str, Any] | str, number: int = 0) -> dict[str, Any]:
    """One function call in OpenAI's shape, the arguments as a JSON string (a string is taken as written: a
    stand-in may script a malformed call); its id is deterministic, so a stand-in's reply stays reproducible."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {"id": f"call_{stable_hash([name, text, number], 12)}", "type": "function",
            "function": {"name": name, "arguments": text}}


@register_standin("standin-echo")
class EchoStandin(StandinModel):
    """Answers with the last user message: the smallest model that exercises every code path."""

    name = "standin-echo"

    def respond(self, request: ChatRequest) -> str:
        return request.last_user_message


@register_standin("standin-latency")
class LatencyStandin(StandinModel):
    """Another stand-in (``inner``, default ``standin-echo``) plus a fixed delay per call, for benchmarks.

    The delay is an ``asyncio.sleep``, so concurrent calls overlap, as they would on a batching server.
    ``name`` defaults to ``standin-latency``; pass the inner model's name to add latency to it transparently.
    """

    name = "standin-latency"

    def __init__(self, inner: str | ChatModel = "standin-echo", delay_ms: float = 100.0, name: str | None = None,
                 **inner_kwargs: Any):
        super().__init__(name)
        self.inner = inner if isinstance(inner, ChatModel) else create_standin(inner, **inner_kwargs)
        if not self.inner.is_standin:
            raise ValueError(f"standin-latency wraps stand-ins only, not {self.inner.name!r}")
        if delay_ms < 0:
            raise ValueError(f"delay_ms must be >= 0 (got {delay_ms})")
        self.delay_ms = delay_ms

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        start = time.perf_counter()
        await asyncio.sleep(self.delay_ms / 1000)
        response = await self.inner.acomplete(request)
        return dataclasses.replace(response, latency_s=time.perf_counter() - start, model=self.name)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "delay_ms": self.delay_ms, "inner": self.inner.describe()}


@register_standin("standin-script")
class ScriptStandin(StandinModel):
    """Scripted replies from a JSON file, function calls included, to test a tool-calling client offline; not an LLM.

    The file holds a list; entry *n* answers a conversation with *n* assistant messages so far (every later turn
    gets the last entry), so a scripted agent conversation replays the same whatever runs concurrently. An entry
    is the reply's text, or ``{"content": TEXT, "tool_calls": [{"name": FUNCTION, "arguments": {...}}]}`` (a
    string as ``arguments`` is sent as written, so a script can send malformed JSON). Served by
    ``sparqlab serve-model --model standin-script --option path=FILE``; the file's content is part of
    :attr:`root`, so an edited script misses the response cache."""

    name = "standin-script"

    def __init__(self, path: str | Path | None = None, name: str | None = None):
        super().__init__(name)
        if path is None:
            raise ValueError("standin-script needs its script: path=FILE (serve-model --option path=FILE)")
        self.path = Path(path)
        try:
            content = self.path.read_bytes()
            entries = json.loads(content)
        except (OSError, ValueError) as error:
            raise ValueError(f"standin-script: cannot read the script {self.path}: {error}") from None
        if not isinstance(entries, list) or not entries:
            raise ValueError(f"standin-script: {self.path} must hold a non-empty JSON list of replies")
        self.replies = [self._entry(entry, number) for number, entry in enumerate(entries)]
        self.digest = hashlib.sha256(content).hexdigest()[:12]

    def _entry(self, entry: Any, number: int) -> tuple[str, list[dict[str, Any]] | None]:
        where = f"standin-script: {self.path} entry {number}"
        if isinstance(entry, str):
            return entry, None
        if not isinstance(entry, dict) or not isinstance(entry.get("content", ""), str) \
                or not isinstance(entry.get("tool_calls", []), list):
            raise ValueError(f"{where} must be a string or an object with a string content and a list tool_calls")
        calls = []
        for call in entry.get("tool_calls", []):
            if not isinstance(call, dict) or not isinstance(call.get("name"), str) \
                    or not isinstance(call.get("arguments", {}), dict | str):
                raise ValueError(f"{where}: each tool call needs a name and arguments (an object or a string)")
            calls.append(tool_call(call["name"], call.get("arguments", {}), len(calls)))
        return entry.get("content", ""), calls or None

    @property
    def root(self) -> str:
        return f"{super().root}/{self.digest}"

    def respond_with_tools(self, request: ChatRequest) -> tuple[str, list[dict[str, Any]] | None]:
        turn = sum(role == "assistant" for role, _ in request.messages)
        return self.replies[min(turn, len(self.replies) - 1)]

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "script": str(self.path), "digest": self.digest}


REASONING_EFFORT_SCALE = {"low": 0.25, "medium": 1.0, "high": 4.0}
"""How ``reasoning_effort`` scales :class:`ReasoningStandin`'s reasoning length."""


@register_standin("standin-reasoning")
class ReasoningStandin(StandinModel):
    """A reasoning model's reply shape around another stand-in (``inner``, default ``standin-echo``): it first
    reasons ``reasoning_tokens`` tokens (``reasoning_effort`` ``low`` / ``medium`` / ``high`` in the request
    scales them by 0.25 / 1 / 4), returned apart as ``reasoning`` (what vLLM's reasoning parser does), then
    answers with the inner model's text. As on vLLM the reasoning counts against ``max_tokens``: a budget it
    uses up ends with ``finish_reason="length"``, the reasoning cut and an empty content."""

    name = "standin-reasoning"

    def __init__(self, inner: str | ChatModel = "standin-echo", reasoning_tokens: int = 200, name: str | None = None,
                 **inner_kwargs: Any):
        super().__init__(name)
        self.inner = inner if isinstance(inner, ChatModel) else create_standin(inner, **inner_kwargs)
        if reasoning_tokens < 0:
            raise ValueError(f"reasoning_tokens must be >= 0 (got {reasoning_tokens})")
        self.reasoning_tokens = reasoning_tokens
        self.options = {"inner": self.inner.name, "reasoning_tokens": reasoning_tokens, **inner_kwargs}

    def _reasoning_length(self, request: ChatRequest) -> int:
        effort = dict(request.extra).get("reasoning_effort", "medium")
        if effort not in REASONING_EFFORT_SCALE:
            raise ValueError(f"reasoning_effort must be one of {', '.join(REASONING_EFFORT_SCALE)} (got {effort!r})")
        return round(self.reasoning_tokens * REASONING_EFFORT_SCALE[effort])

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        start = time.perf_counter()
        wanted = self._reasoning_length(request)
        budget = request.max_tokens
        spent = wanted if budget is None else min(wanted, budget)
        reasoning = " ".join(["hm"] * spent)  # one estimated token per word
        calls = None
        if budget is not None and wanted >= budget:
            text, finish_reason = "", "length"
        else:
            answer = await self.inner.acomplete(dataclasses.replace(request, max_tokens=None))
            rest = dataclasses.replace(request, max_tokens=None if budget is None else budget - spent, stop=())
            text, finish_reason = apply_limits(answer.text, rest)
            if answer.tool_calls and finish_reason == "stop":  # the inner model's function calls, after reasoning
                calls, finish_reason = answer.tool_calls, "tool_calls"
        usage = Usage.estimate(request, text)
        usage.completion_tokens += spent
        return ChatResponse(text, usage, time.perf_counter() - start, finish_reason, self.name, reasoning=reasoning,
                            tool_calls=calls)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "reasoning_tokens": self.reasoning_tokens, "inner": self.inner.describe()}


def bind_standins(models: Iterable[ChatModel], binding: RunBinding) -> None:
    """:meth:`StandinModel.bind` every stand-in among ``models`` (also behind a wrapper: the response cache's
    ``inner``, any other wrapper's ``base``)."""
    for model in models:
        while not isinstance(model, StandinModel):
            wrapped = getattr(model, "inner", None) or getattr(model, "base", None)
            if wrapped is None:
                break
            model = wrapped
        if isinstance(model, StandinModel):
            model.bind(binding)
