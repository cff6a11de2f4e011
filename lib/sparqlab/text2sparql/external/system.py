"""``external``: any TEXT2SPARQL system as a method, asked each question the way the challenge asks it.

A TEXT2SPARQL system is an HTTP endpoint answering ``GET /?question=...&dataset=<dataset IRI>`` with
``{"dataset", "question", "query"}`` (SPARQL-LLM's challenge API, ``sparqlab serve``, a challenge entry). The method
sends the question's text and its edition's dataset IRI (the question's ``dataset`` metadata, or ``dataset_iri``),
under the request policy of the 2026 challenge's official client (``text2sparql ask``): a per-request timeout, and
a retry after a pause for a refused connection, an HTTP error or a timeout. Each request is one bounded exchange
(:mod:`sparqlab.core.http`, as the model client's): ``timeout_s`` from sending to the reply's last byte however
slowly it comes, and at most :data:`MAX_REPLY_BYTES` of decompressed reply (a larger one, a gzip bomb, is refused
while it arrives: ``external_bad_reply``). Each attempt is a trace event
(``external_request``: outcome, HTTP status, seconds); the record's ``extra`` holds the last HTTP status, the
outcome and the retries. The system's query is the method's final query, executed on the run's KG and scored by
the runner like every method's.

What ends a question, after the retries:

- a 2xx reply: its ``query`` (an empty or missing one is ``external_no_query``, a body that is not the API's JSON
  ``external_bad_reply``);
- timeouts only: ``external_timeout``, that question's outcome (the challenge scores it as unanswered);
- a refused connection or an HTTP error: an endpoint that keeps failing is a failure of the machinery, not an
  answer, so the run stops (:class:`ExternalUnavailable`; the rerun asks the remaining questions) — unless
  ``on_http_error=record``, which records it as ``external_http_error`` as the challenge's client did.

Before the first question the method reads the system's self-description where it offers one (a FastAPI app's
``/openapi.json`` ``info``: title, version, description; at most :data:`MAX_SELF_DESCRIPTION_BYTES` read, each
text cut at :data:`SELF_DESCRIPTION_CHARS`); it is saved in ``config.json`` and its digest enters the run id, so
another version of the system is another run. ``example_pool`` declares the questions the system retrieves
examples from (``dataset[:split]``, a dataset name or a question file): the runner then records their
near-duplicates of the scored questions in ``metrics.json`` (``leakage``), as for our own methods' pools — recorded,
not refused, even when the pool holds the scored questions themselves (a peer's index is its authors' choice).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import httpx2

from sparqlab.core.hashing import stable_hash
from sparqlab.core.http import ReplyRefused, bounded_get
from sparqlab.data.question import Question
from sparqlab.llm.errors import ExternalUnavailable
from sparqlab.platform.base import Method, MethodOutput
from sparqlab.platform.config import MethodConfig
from sparqlab.platform.context import PrepareContext, QuestionContext
from sparqlab.platform.registry import register_method
from sparqlab.text2sparql.editions import EDITIONS, edition

SELF_DESCRIPTION_PATH = "openapi.json"
"""Where a FastAPI system (SPARQL-LLM's challenge API, ``sparqlab serve --docs``) describes itself."""

MAX_REPLY_BYTES = 2**20
"""The most a system's reply may hold once decompressed (it is one query); a larger one is refused while it arrives
and recorded as ``external_bad_reply``."""

MAX_SELF_DESCRIPTION_BYTES = 2**20
"""The most of ``/openapi.json`` read (a FastAPI app's is tens of KB); a larger one is not used."""

SELF_DESCRIPTION_CHARS = 2000
"""Each text of the self-description kept in ``config.json`` is cut at this length."""

MAX_SELF_DESCRIPTION_PATHS = 200
"""The most paths of the self-description kept in ``config.json``."""


@dataclass(frozen=True)
class ExternalConfig(MethodConfig):
    """Settings of :class:`ExternalSystem` (all enter the run id).

    - ``endpoint``: the system's URL (``http://host:port/``); the question and dataset go as query parameters.
    - ``timeout_s``: seconds one request may take (the 2026 challenge's client ran with ``--timeout 180``).
    - ``retries``: further attempts after a refused connection, an HTTP error or a timeout (the client's 5).
    - ``retry_sleep_s``: pause before each retry (the client's 15 s).
    - ``on_http_error``: ``stop`` (a system still failing after the retries stops the run) or ``record`` (the
      question is recorded as ``external_http_error``, as the challenge's client skipped it).
    - ``dataset_iri``: the ``dataset`` sent (``None``: the question's dataset IRI, i.e. its edition's).
    - ``example_pool``: the questions the system draws examples from, ``dataset[:split]``, checked for
      near-duplicates of the scored questions (``None``: none declared).
    """

    endpoint: str = ""
    timeout_s: float = 180.0
    retries: int = 5
    retry_sleep_s: float = 15.0
    on_http_error: Literal["stop", "record"] = "stop"
    dataset_iri: str | None = None
    example_pool: str | None = None

    def __post_init__(self) -> None:
        if not self.endpoint.startswith(("http://", "https://")):
            raise ValueError(f"external needs the system's URL: -o endpoint=http://HOST:PORT/ (got {self.endpoint!r})")
        if self.timeout_s <= 0 or self.retries < 0 or self.retry_sleep_s < 0:
            raise ValueError(f"timeout_s must be > 0, retries and retry_sleep_s >= 0; got {self.timeout_s}, "
                             f"{self.retries}, {self.retry_sleep_s}")


@dataclass
class Attempt:
    """One request: ``outcome`` is ``ok``, ``http_error``, ``timeout`` or ``connection_error``."""

    outcome: str
    status: int | None
    seconds: float
    message: str | None = None
    body: Any = None


@register_method("external")
class ExternalSystem(Method):
    """A TEXT2SPARQL system behind its HTTP API (see the module docstring)."""

    config_class = ExternalConfig
    roles: ClassVar[tuple[str, ...]] = ()
    needs_model = False

    def __init__(self, config: ExternalConfig | None = None, **overrides: Any):
        super().__init__(config, **overrides)
        self.self_description: dict[str, Any] | None = None

    def artifacts(self) -> dict[str, str]:
        return {"self_description": stable_hash(self.self_description, 16)} if self.self_description else {}

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "self_description": self.self_description}

    async def prepare(self, ctx: PrepareContext) -> None:
        self.self_description = await self._self_description()
        if self.config.example_pool:
            from sparqlab.data import load

            # recorded, never refused: what a peer retrieves from is its own choice, even the scored questions
            dataset, _, split = self.config.example_pool.partition(":")
            pool = await asyncio.to_thread(load, dataset, split or None)
            ctx.pools[self.config.example_pool] = pool
            ctx.log("example_pool", pool=self.config.example_pool, n=len(pool))

    async def _self_description(self) -> dict[str, Any] | None:
        """The system's ``/openapi.json`` ``info`` and paths (each text cut at :data:`SELF_DESCRIPTION_CHARS`),
        or ``None`` when it offers none or one over :data:`MAX_SELF_DESCRIPTION_BYTES`. An endpoint that cannot
        be reached at all stops the run here, before any question."""
        url = str(httpx2.URL(self.config.endpoint).join(SELF_DESCRIPTION_PATH))
        try:
            async with httpx2.AsyncClient(timeout=self.config.timeout_s) as client:
                response, body = await bounded_get(client, url, timeout_s=self.config.timeout_s,
                                                   max_bytes=MAX_SELF_DESCRIPTION_BYTES)
        except httpx2.TransportError as error:
            raise ExternalUnavailable(f"TEXT2SPARQL system {self.config.endpoint} cannot be reached: "
                                      f"{type(error).__name__}: {error}") from error
        except (ReplyRefused, TimeoutError):
            return None
        try:
            document = json.loads(body) if response.is_success else None
        except (ValueError, RecursionError):
            return None
        if not isinstance(document, dict) or not isinstance(document.get("info"), dict):
            return None
        info = {str(key)[:100]: _cut(value) for key, value in list(document["info"].items())[:20]}
        paths = sorted(str(path)[:200] for path in document.get("paths") or {})[:MAX_SELF_DESCRIPTION_PATHS]
        return {"info": info, "paths": paths}

    def cannot_answer(self, questions: Sequence[Question]) -> str | None:
        if self.config.dataset_iri:
            return None
        unknown = [q.id for q in questions
                   if not q.metadata.get("dataset") and q.id.partition(":")[0] not in EDITIONS]
        if not unknown:
            return None
        return (f"{len(unknown)} of {len(questions)} questions (e.g. {unknown[0]!r}) name no TEXT2SPARQL dataset "
                "IRI (no 'dataset' metadata, no edition's qname prefix): give the dataset the system answers "
                "with -o dataset_iri=IRI")

    def dataset_iri(self, question: Question) -> str:
        """The ``dataset`` sent: ``dataset_iri``, else the question's (its edition's IRI)."""
        iri = self.config.dataset_iri or question.metadata.get("dataset")
        if not iri:
            prefix = question.id.partition(":")[0]
            iri = edition(prefix).iri  # an unknown prefix is an error naming the known editions
        return str(iri)

    async def _attempt(self, client: httpx2.AsyncClient, params: dict[str, str]) -> Attempt:
        """One request, bounded as a whole (:func:`~sparqlab.core.http.bounded_get`): ``timeout_s`` from sending
        to the reply's last byte, :data:`MAX_REPLY_BYTES` of decoded body."""
        started = time.perf_counter()
        try:
            response, body = await bounded_get(client, self.config.endpoint, params=params,
                                               timeout_s=self.config.timeout_s, max_bytes=MAX_REPLY_BYTES,
                                               hint="a TEXT2SPARQL reply is one query")
        except (TimeoutError, httpx2.TimeoutException):
            return Attempt("timeout", None, time.perf_counter() - started,
                           f"no complete reply within {self.config.timeout_s:g} s")
        except httpx2.TransportError as error:
            return Attempt("connection_error", None, time.perf_counter() - started,
                           f"{type(error).__name__}: {error}")
        except ReplyRefused as refused:
            return Attempt("ok", None, time.perf_counter() - started, body=str(refused))
        seconds = time.perf_counter() - started
        text = body.decode(response.encoding or "utf-8", "replace")
        if not response.is_success:
            return Attempt("http_error", response.status_code, seconds, text[:300])
        try:
            return Attempt("ok", response.status_code, seconds, body=json.loads(text))
        except (ValueError, RecursionError):
            return Attempt("ok", response.status_code, seconds, body=text[:300])

    async def answer(self, question: Question, ctx: QuestionContext) -> MethodOutput:
        config = self.config
        params = {"question": question.text, "dataset": self.dataset_iri(question)}
        attempts: list[Attempt] = []
        async with httpx2.AsyncClient(timeout=config.timeout_s) as client:
            for number in range(config.retries + 1):
                if number:
                    await asyncio.sleep(config.retry_sleep_s)
                attempt = await self._attempt(client, params)
                attempts.append(attempt)
                ctx.log("external_request", attempt=number, outcome=attempt.outcome, status=attempt.status,
                        seconds=round(attempt.seconds, 6), message=attempt.message,
                        language=question.metadata.get("language"))
                if attempt.outcome == "ok":
                    break
        last = attempts[-1]
        extra = {"http_status": last.status, "outcome": last.outcome, "retries": len(attempts) - 1,
                 "system_s": round(sum(a.seconds for a in attempts), 6)}
        if last.outcome == "ok":
            return self._reply(last.body, ctx, extra)
        if last.outcome == "timeout":
            return MethodOutput(None, error_category="external_timeout", extra=extra)
        failure = (f"TEXT2SPARQL system {config.endpoint} failed on {question.id} after {len(attempts)} attempts: "
                   f"{last.outcome}{f' {last.status}' if last.status else ''}: {last.message}")
        if config.on_http_error == "record":
            ctx.log("external_http_error", message=failure)
            return MethodOutput(None, error_category="external_http_error", extra=extra)
        raise ExternalUnavailable(failure)

    @staticmethod
    def _reply(body: Any, ctx: QuestionContext, extra: dict[str, Any]) -> MethodOutput:
        """The query of a 2xx reply, or why there is none."""
        if not isinstance(body, dict) or not isinstance(body.get("query", ""), str | None):
            ctx.log("external_bad_reply", body=body if isinstance(body, str) else repr(body)[:300])
            return MethodOutput(None, error_category="external_bad_reply", extra=extra)
        query = (body.get("query") or "").strip()
        ctx.log("external_reply", query=query, dataset=body.get("dataset"))
        if not query:
            return MethodOutput(None, error_category="external_no_query", extra=extra)
        return MethodOutput(query, extra=extra)


def _cut(value: Any) -> Any:
    """A self-description's value as kept: as it is, unless its text (a string, or anything else as JSON) is
    longer than :data:`SELF_DESCRIPTION_CHARS`: then that text, cut."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return value if len(text) <= SELF_DESCRIPTION_CHARS else text[:SELF_DESCRIPTION_CHARS]
