"""One model served by several replicas (``--model-url A,B,C``): calls spread over them, least in flight first.

A replica that fails a call with :class:`~sparqlab.llm.errors.ModelUnavailable` (refused or lost connections,
timeouts, HTTP 429/5xx after its client's retries) is taken out for a back-off that doubles with each failure in a
row (``backoff_s`` up to ``max_backoff_s``) and the call is retried on another replica; a replica whose back-off
has passed is tried again, and a success brings it back for good. Only when every replica failed the same call does
it fail. Each replica's calls, failures and latencies are kept for ``metrics.json`` (:meth:`ReplicaModel.stats`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sparqlab.llm.base import ChatModel, ChatRequest, ChatResponse
from sparqlab.llm.errors import ModelUnavailable

URL_SEPARATOR = ","
"""Separates the replicas of one endpoint setting (``model_url``, a role's URL)."""


def replica_urls(url: str | None) -> list[str]:
    """The replica URLs of an endpoint setting (one URL is one replica)."""
    return [part.strip() for part in (url or "").split(URL_SEPARATOR) if part.strip()]


@dataclass
class Replica:
    """One server of the set and what it did this session."""

    model: ChatModel
    url: str
    in_flight: int = 0
    calls: int = 0
    failures: int = 0
    failures_in_a_row: int = 0
    out_until: float = 0.0
    latencies: list[float] = field(default_factory=list)

    def stats(self) -> dict[str, Any]:
        ordered = sorted(self.latencies)
        return {"calls": self.calls, "failures": self.failures,
                "latency_s": {"mean": round(sum(ordered) / len(ordered), 4) if ordered else None,
                              "p50": round(ordered[len(ordered) // 2], 4) if ordered else None,
                              "max": round(ordered[-1], 4) if ordered else None}}


class ReplicaModel(ChatModel):
    """Several servers of one model behind one :class:`ChatModel` (see the module docstring)."""

    def __init__(self, replicas: list[ChatModel], urls: list[str], backoff_s: float = 1.0,
                 max_backoff_s: float = 30.0, clock: Callable[[], float] = time.monotonic):
        if len(replicas) != len(urls) or not replicas:
            raise ValueError("a replica set needs one model per URL, at least one")
        self.replicas = [Replica(model, url) for model, url in zip(replicas, urls, strict=True)]
        self.name = replicas[0].name
        self.is_standin = replicas[0].is_standin
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.clock = clock

    def _pick(self, tried: set[int]) -> Replica | None:
        """The replica with the fewest calls in flight among those not tried for this call and not out (else
        the one back soonest among those not tried)."""
        now = self.clock()
        left = [r for i, r in enumerate(self.replicas) if i not in tried]
        if not left:
            return None
        ready = [r for r in left if r.out_until <= now]
        if ready:
            return min(ready, key=lambda r: (r.in_flight, r.calls))
        return min(left, key=lambda r: r.out_until)

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        tried: set[int] = set()
        last: ModelUnavailable | None = None
        while (replica := self._pick(tried)) is not None:
            tried.add(self.replicas.index(replica))
            replica.in_flight += 1
            started = time.perf_counter()
            try:
                response = await replica.model.acomplete(request)
            except ModelUnavailable as error:
                replica.failures += 1
                replica.failures_in_a_row += 1
                replica.out_until = self.clock() + min(self.max_backoff_s,
                                                       self.backoff_s * 2 ** (replica.failures_in_a_row - 1))
                last = error
                continue
            finally:
                replica.in_flight -= 1
            replica.calls += 1
            replica.failures_in_a_row = 0
            replica.out_until = 0.0
            replica.latencies.append(time.perf_counter() - started)
            return response
        raise ModelUnavailable(f"every replica of {self.name!r} failed this call "
                               f"({', '.join(r.url for r in self.replicas)}); the last: {last}") from last

    async def _first_answer(self, ask: Callable[[ChatModel], Any]) -> Any:
        """``ask(replica)`` of the first replica that answers (a down replica does not stop a run's start)."""
        last: ModelUnavailable | None = None
        for replica in self.replicas:
            try:
                return await ask(replica.model)
            except ModelUnavailable as error:
                last = error
        raise ModelUnavailable(f"no replica of {self.name!r} answers: {last}") from last

    async def list_models(self) -> list[str]:
        return await self._first_answer(lambda model: model.list_models())

    async def served_identity(self) -> dict[str, Any] | None:
        return await self._first_answer(lambda model: model.served_identity())

    async def check(self) -> None:
        await self._first_answer(lambda model: model.check())

    def endpoints(self) -> list[ChatModel]:
        return [endpoint for replica in self.replicas for endpoint in replica.model.endpoints()]

    async def aclose(self) -> None:
        await asyncio.gather(*(replica.model.aclose() for replica in self.replicas))

    def replica_stats(self) -> dict[str, dict[str, Any]]:
        """Per replica URL: calls answered, failures, latency (mean, median, max) this session."""
        return {replica.url: replica.stats() for replica in self.replicas}

    def describe(self) -> dict[str, Any]:
        return {**self.replicas[0].model.describe(), "base_url": URL_SEPARATOR.join(r.url for r in self.replicas),
                "replicas": [r.url for r in self.replicas]}
