"""The response cache: every chat call keyed by its full request, so that a rerun of a finished configuration
makes zero model calls and notebooks re-execute on a laptop from a GPU run's cache (replay).

The key is a hash of the request's canonical JSON (model name, messages, temperature, top_p, max_tokens, stop,
seed, extra fields) and nothing else: not the endpoint URL, so a cache filled against one server replays
anywhere. Note that with ``temperature > 0`` a cached request returns its *first* response on every rerun:
reproducibility wins over diversity. To draw several samples, vary ``seed`` (it is part of the key).

Modes: ``read_write`` (serve hits, call and store misses), ``off`` (always call, store nothing), ``replay``
(serve hits; a miss raises :class:`~sparqlab.llm.errors.ReplayMiss`).

A model name alone does not say what is served: another model (or other weights, another chat template) served under
the same name would get the old responses. Outside replay, :class:`CachedModel` therefore asks the server once what
it serves under the name (:meth:`ChatModel.served_identity`: vLLM's ``root`` and ``max_model_len``; for a server
that names only an alias, as llama.cpp's do, the endpoint URL and the server's ``/props`` self-description) and
stores that identity with each response; a stored response whose identity differs from the server's current one is
a miss. A name the server does not serve stops the caller with :class:`~sparqlab.llm.errors.UnknownModel`. Replay
never contacts the endpoint (so a laptop replays a GPU run's cache), and says so in :meth:`CachedModel.stats`; so
does a read-write run whose endpoint could not be reached.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal, get_args

from sparqlab.core.cache import JsonCache
from sparqlab.core.hashing import stable_hash
from sparqlab.core.paths import cache_dir
from sparqlab.llm.base import ChatModel, ChatRequest, ChatResponse
from sparqlab.llm.errors import ModelError, ReplayMiss, UnknownModel
from sparqlab.llm.prefix_cache import PrefixCacheModel
from sparqlab.llm.replicas import ReplicaModel

CacheMode = Literal["read_write", "off", "replay"]
CACHE_MODES = get_args(CacheMode)
NAMESPACE = "chat"
"""The :class:`JsonCache` namespace of chat responses (one file may hold other caches too)."""


def default_cache_path() -> Path:
    """``cache_dir()/responses.sqlite``; a run may choose a path inside its results folder instead."""
    return cache_dir() / "responses.sqlite"


def request_key(request: ChatRequest) -> str:
    """The cache key of a request: a hash of its canonical JSON."""
    return stable_hash(request.to_dict(), length=32)


def prompt_excerpt(request: ChatRequest, length: int = 120) -> str:
    """The start of the last user message on one line, for error messages."""
    text = re.sub(r"\s+", " ", request.last_user_message).strip()
    return text if len(text) <= length else text[: length - 1] + "…"


class CachedModel(ChatModel):
    """Wraps a model with the response cache, and counts what happened: ``calls`` (real calls to the wrapped
    model, failed ones included) and ``hits`` (responses served from the cache). A hit has ``cached=True`` and
    ``latency_s=0``; its token counts are those of the original call, so metrics do not depend on whether the
    cache was warm. Failed calls are not stored, so a rerun retries them."""

    def __init__(self, inner: ChatModel, path: str | Path | None = None, mode: str = "read_write"):
        if mode not in CACHE_MODES:
            raise ValueError(f"unknown cache mode {mode!r}; use one of {', '.join(CACHE_MODES)}")
        self.inner = inner
        self.name = inner.name
        self.mode = mode
        self.path = None if mode == "off" else Path(path or default_cache_path())
        self.cache = None if self.path is None else JsonCache(self.path)
        self.calls = 0
        self.hits = 0
        self.identity: dict[str, Any] | None = None
        self.endpoint_note: str | None = None
        self._identity_checked = False
        self.prefix_cache = PrefixCacheModel()

    @property
    def is_standin(self) -> bool:
        """The wrapped model's, which asking the server what it serves may set."""
        return self.inner.is_standin

    @property
    def root(self) -> str | None:
        """What a server serving this wrapper reports (a stand-in's code and data)."""
        return getattr(self.inner, "root", None)

    async def check_identity(self) -> dict[str, Any] | None:
        """Ask the server once what it serves under this model's name (never in replay, which must work without
        the endpoint). A server that does not serve the name raises :class:`UnknownModel`, whatever the cache
        mode: a run must not record a name nothing answers to. An unreachable endpoint is noted (cached responses
        are still served; a miss then fails on its own)."""
        if self._identity_checked:
            return self.identity
        if self.mode == "replay":
            self.endpoint_note = "replay: the model endpoint was not contacted; responses came from the cache"
        else:
            try:
                self.identity = await self.inner.served_identity()
            except UnknownModel:
                raise
            except ModelError as error:
                self.endpoint_note = (f"the model endpoint could not be asked what it serves ({error}); cached "
                                      "responses were served without contacting it")
        self._identity_checked = True
        return self.identity

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        """The response (cached or from the model), with the prompt tokens a vLLM server with prefix caching
        would have recomputed for it after this model's earlier requests (``prompt_recomputed``)."""
        response = await self._respond(request)
        response.prompt_recomputed = self.prefix_cache.recomputed(request, response.text,
                                                                  response.usage.prompt_tokens)
        return response

    async def _respond(self, request: ChatRequest) -> ChatResponse:
        if self.cache is None:
            return await self._call(request)
        await self.check_identity()
        key = request_key(request)
        stored = self.cache.get(NAMESPACE, key)
        if stored is not None and self.identity is not None and stored.get("served") not in (None, self.identity):
            stored = None  # filled by another model served under this name: ask the current one
        if stored is not None:
            self.hits += 1
            response = ChatResponse.from_dict(stored["response"])
            response.cached = True
            response.latency_s = 0.0
            response.retries = 0
            return response
        if self.mode == "replay":
            raise ReplayMiss(
                f"replay mode: no cached response in {self.path} for model {request.model!r} and the prompt "
                f"{prompt_excerpt(request)!r} (the cache holds {self.cache.count(NAMESPACE)} responses). Replay "
                f"needs the cache of a run with the same model, messages and parameters; fill it by running "
                f"in read_write mode (the default: RunConfig(cache='read_write'), make_model(cache_mode=...)) "
                f"against a live endpoint."
            )
        response = await self._call(request)
        self.cache.put(NAMESPACE, key, {"request": request.to_dict(), "response": response.to_dict(),
                                        "served": self.identity})
        return response

    async def _call(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        return await self.inner.acomplete(request)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def endpoints(self) -> list[ChatModel]:
        return self.inner.endpoints()

    def stats(self) -> dict[str, Any]:
        """Calls and hits so far, with the mode, file, served identity, a note when the endpoint was not
        contacted, and for a replica set each replica's calls, failures and latencies keyed by its URL."""
        stats = {"mode": self.mode, "path": None if self.path is None else str(self.path),
                 "calls": self.calls, "hits": self.hits, "served": self.identity, "endpoint_note": self.endpoint_note}
        if isinstance(self.inner, ReplicaModel):
            stats["replicas"] = self.inner.replica_stats()
        return stats

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "served": self.identity,
                "cache": {"mode": self.mode, "path": None if self.path is None else str(self.path)}}
