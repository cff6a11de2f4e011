"""Living within a public service's limits: at most N requests in flight per endpoint, retries with back-off.

Wikidata's query service answers HTTP 429 with ``Retry-After`` when a client has more than five queries running
or has used its per-minute time budget, and its search API answers ``maxlag`` errors under load. A throttled
answer says nothing about the query, so it must never reach an agent as an observation nor a gold query as an
error. :class:`ServiceClient` (one per KG object, so one per run) therefore:

- holds a slot of the endpoint's in-flight limit (one semaphore per endpoint URL in the process, sized by the
  profile's ``max_in_flight`` or the KG's option) only while a request is on the wire, never while it waits;
- retries an answer marked :class:`Throttled` — 429, 502, 503, 504, a refused or reset connection, ``maxlag`` —
  after the ``Retry-After`` the service sent plus exponential back-off with full jitter;
- keeps a total budget (retries and seconds waited, :class:`RetryPolicy`): when one query is throttled too often
  in a row or the run's budget is spent, :class:`~sparqlab.kg.errors.EndpointUnavailable` stops the run;
- counts requests, retries, throttled answers and the time waited (:meth:`ServiceClient.stats`, per run in
  ``metrics.json``).

The clock and the random source are injectable (``sleep``, ``rng``), so tests never wait on real back-off.
"""

from __future__ import annotations

import email.utils
import random
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from sparqlab.core.config import CheckedConfig
from sparqlab.kg.errors import EndpointUnavailable

T = TypeVar("T")

RETRYABLE_STATUS = frozenset({429, 502, 503, 504})
"""HTTP answers that say "not now" rather than anything about the request."""


@dataclass(frozen=True)
class RetryPolicy(CheckedConfig):
    """How long a client keeps trying (``open_kg(retry={...})``, a run's ``kg_options["retry"]``).

    - ``max_attempts``: tries of one request before the run stops (a query throttled this often in a row);
      ``max_connection_attempts`` when no answer comes at all (refused or reset connections: a server that is
      down, or a wrong URL, should be said soon).
    - ``budget_retries`` / ``budget_wait_s``: retries and seconds of waiting one KG object (a run) may spend in
      all; past either the run stops.
    - ``base_s`` / ``cap_s``: exponential back-off with full jitter: before the n-th retry of a request a
      uniform wait in ``[0, min(cap_s, base_s·2^(n-1))]``, added to the ``Retry-After`` the service sent (never
      less than it asked; the jitter keeps clients that were throttled together from returning together). All of
      it counts against ``budget_wait_s``.
    """

    max_attempts: int = 8
    max_connection_attempts: int = 3
    budget_retries: int = 500
    budget_wait_s: float = 1800.0
    base_s: float = 1.0
    cap_s: float = 60.0

    def check(self) -> None:
        if self.max_attempts < 1 or self.max_connection_attempts < 1:
            raise ValueError("max_attempts and max_connection_attempts must be at least 1")

    @classmethod
    def from_value(cls, value: RetryPolicy | dict[str, Any] | None) -> RetryPolicy:
        """A policy from itself, a dict of its fields (a run's JSON options; names and types checked, a misspelt
        name gets the closest one) or None (the defaults)."""
        if value is None or isinstance(value, RetryPolicy):
            return value or cls()
        return cls.from_dict(value)


class Throttled(Exception):
    """A retryable answer: ``status`` (HTTP code; ``None`` for a ``maxlag`` error or a failed connection), the
    ``Retry-After`` seconds if the service sent them, the service's message; ``connection`` when no answer came
    (refused, reset)."""

    def __init__(self, status: int | None, retry_after: float | None, message: str, connection: bool = False):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.connection = connection


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds: a number of seconds or an HTTP date; ``None`` when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


_LIMITS: dict[tuple[str, int], threading.BoundedSemaphore] = {}
_LIMITS_LOCK = threading.Lock()


def endpoint_slots(url: str, limit: int) -> threading.BoundedSemaphore:
    """The process-wide semaphore of ``url``'s in-flight limit of ``limit`` slots: every client of the same URL
    and limit shares it, as the service counts one client."""
    with _LIMITS_LOCK:
        return _LIMITS.setdefault((url, limit), threading.BoundedSemaphore(limit))


@dataclass
class ServiceStats:
    """Counts of one client: ``requests`` sent, ``retries``, ``throttled`` answers (429/503/``maxlag``/gateway),
    ``connection_failures``, ``wait_s`` spent waiting, ``refused`` (HTTP 403) and ``server_timeouts`` (the
    service stopped a query at its own limit: a result for the agent, not retried)."""

    requests: int = 0
    retries: int = 0
    throttled: int = 0
    connection_failures: int = 0
    wait_s: float = 0.0
    refused: int = 0
    server_timeouts: int = 0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["wait_s"] = round(self.wait_s, 3)
        return data


@dataclass
class ServiceClient:
    """Retries and in-flight limits of one KG object's services (its SPARQL endpoint, a search API)."""

    policy: RetryPolicy = field(default_factory=RetryPolicy)
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = field(default_factory=random.Random)

    def __post_init__(self) -> None:
        self._stats = ServiceStats()
        self._lock = threading.Lock()

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return self._stats.to_dict()

    def count(self, name: str, n: float = 1) -> None:
        with self._lock:
            setattr(self._stats, name, getattr(self._stats, name) + n)

    def call(self, url: str, limit: int | None, request: Callable[[], T]) -> T:
        """``request()`` within ``url``'s in-flight limit (``None``: unlimited), retried while it raises
        :class:`Throttled`; :class:`EndpointUnavailable` when the attempts or the budget run out."""
        slots = endpoint_slots(url, limit) if limit else None
        attempt = 0
        while True:
            self.count("requests")
            try:
                if slots is None:
                    return request()
                with slots:
                    return request()
            except Throttled as answer:
                self.count("connection_failures" if answer.connection else "throttled")
                attempt += 1
                tries = self.policy.max_connection_attempts if answer.connection else self.policy.max_attempts
                if attempt >= tries:
                    raise EndpointUnavailable(
                        f"{url} answered {attempt} tries of one request with {_describe(answer)}; it is refusing "
                        "this client (throttled or down), so the run stops rather than score the refusal") from None
                self._wait(url, attempt - 1, answer)

    def _wait(self, url: str, attempt: int, answer: Throttled) -> None:
        """Sleep before the next try, or raise when the run's budget cannot pay for it."""
        wait = (answer.retry_after or 0.0) + self.rng.uniform(0, min(self.policy.cap_s,
                                                                      self.policy.base_s * 2 ** attempt))
        with self._lock:
            stats = self._stats
            if stats.retries + 1 > self.policy.budget_retries or stats.wait_s + wait > self.policy.budget_wait_s:
                raise EndpointUnavailable(
                    f"{url} keeps throttling this client ({_describe(answer)}): the retry budget of this run is "
                    f"spent ({stats.retries} retries, {stats.wait_s:.0f} s waited; limits "
                    f"{self.policy.budget_retries} retries, {self.policy.budget_wait_s:g} s)")
            stats.retries += 1
            stats.wait_s += wait
        self.sleep(wait)


def _describe(answer: Throttled) -> str:
    head = f"HTTP {answer.status}" if answer.status is not None else (
        "no answer" if answer.connection else "a refusal")
    after = f", Retry-After {answer.retry_after:g} s" if answer.retry_after is not None else ""
    return f"{head}{after}: {' '.join(str(answer).split())[:200]}"
