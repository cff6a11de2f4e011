"""Any method as a TEXT2SPARQL challenge endpoint: ``GET /`` and ``GET /text2sparql`` with ``question`` and
``dataset`` query parameters, answering ``{"dataset", "question", "query"}`` as the challenge's API says.

Each request goes through the runner's own per-question machinery (:meth:`sparqlab.runs.runner.Runner.answer`:
the method's public view of the question, counted KG tools, model caches, traces, the per-question timeout,
execution of the final query) and is appended as one line to a run folder
(``runs/<experiment>/<run folder>-serve-<session>/predictions.jsonl`` + ``traces.jsonl``), so a served session
is a run a researcher browses and scores afterwards (``sparqlab eval ANSWERS.json --metric text2sparql`` with
the client's ``ask`` output, or ``sparqlab runs ...`` on the folder). Served questions have no gold: records
are ``no_gold`` and unscored, and there is nothing for a method to leak. ``sparqlab runs list`` shows a session
as ``serving``, ``complete`` once stopped, or ``killed``, with the number of requests it answered.

Dataset IRIs map to the one KG of the process by configuration (:data:`DEFAULT_DATASETS`: the four TEXT2SPARQL
datasets' IRIs; a served question carries its dataset IRI and, for those, the language its text is in); an unknown
IRI gets a JSON error (HTTP 404) naming the known ones, a missing parameter FastAPI's 422, an empty or
whitespace-only question or one over ``max_question_chars`` a 422 of its own, and a question the method cannot
answer an empty ``query`` (with the reason in the run folder) rather than a 500.

The endpoint is fit to be reached by others (:class:`ServeSettings`; docs/security.md): ``concurrency`` requests
are answered at once and up to ``queue_size`` wait, beyond that a 503 with ``Retry-After``; a request's
``question_timeout_s`` counts from its arrival, the wait in the queue included; a request over
``max_request_bytes`` is a 413; an optional bearer token (``token`` or the ``SPARQLAB_SERVE_TOKEN`` variable)
turns every request without it into a 401; ``/docs`` and ``/openapi.json`` exist only when asked for. The
connection layer (:mod:`sparqlab.serving.guard`, uvicorn's settings) bounds how many connections are open and
refuses a body that does not arrive within ``read_timeout_s``; a server others reach goes behind a reverse proxy
(docs/security.md). The server binds 127.0.0.1 unless told otherwise, and warns
when it binds another address without a token.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import itertools
import json
import time
import warnings
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparqlab.core.config import CheckedConfig
from sparqlab.core.environment import serve_token
from sparqlab.core.errors import InfrastructureError
from sparqlab.data.question import Question
from sparqlab.kg.endpoint import declare_prefixes
from sparqlab.platform.base import Method
from sparqlab.runs.config import RunConfig
from sparqlab.runs.manifest import manifest_document
from sparqlab.runs.metrics import metrics_document
from sparqlab.runs.plan import build_plan
from sparqlab.runs.runner import Runner
from sparqlab.runs.store import CONFIG, MANIFEST, METRICS, GroupCommit, RunStore, write_json
from sparqlab.serving.guard import ConnectionLimits, guarded_server, listen_socket
from sparqlab.text2sparql.editions import DATASET_IRIS, EDITIONS, question_language

DEFAULT_DATASETS = {edition.iri: edition.kg for edition in EDITIONS.values()}
"""Dataset IRI -> KG name served without configuration: CK25's and CK26's IRIs on the ``ck25`` KG, DB25's and
DB26's on ``dbpedia`` (a server holds one KG, so it serves the IRIs of that KG)."""

TOKEN_ENV = "SPARQLAB_SERVE_TOKEN"
"""Environment variable holding the bearer token when :attr:`ServeSettings.token` is not given
(:func:`sparqlab.core.environment.serve_token` reads it)."""


@dataclass(frozen=True)
class ServeSettings(CheckedConfig):
    """How ``sparqlab serve`` takes requests; each setting is a flag of the command (``--queue-size``). The
    runner's ``concurrency`` and ``question_timeout_s`` are :class:`~sparqlab.runs.config.RunConfig` settings.

    - ``host``: the address to bind (127.0.0.1: this machine only; another address without a token warns).
    - ``port``: the port to bind (0 picks a free one).
    - ``token``: a bearer token every request must send (``Authorization: Bearer TOKEN``), else 401 (``None``:
      the ``SPARQLAB_SERVE_TOKEN`` variable, which keeps it out of the process list; neither: no token).
    - ``queue_size``: requests that may wait for one of the ``concurrency`` slots; more are answered 503 with a
      ``Retry-After`` of the expected wait for a slot (from recent answers), at least 1 s and at most
      ``retry_after_s``.
    - ``retry_after_s``: the longest wait in s a 503's ``Retry-After`` suggests.
    - ``max_question_chars``: the longest question accepted (longer: 422).
    - ``max_request_bytes``: the largest request line plus headers, or declared body, accepted (larger: 413).
    - ``read_timeout_s``: seconds a request's whole body has to arrive once its headers have; then 408 and the
      connection is closed.
    - ``keep_alive_s``: seconds an idle connection is kept open after an answer.
    - ``max_connections``: open connections at most (fewer under a tight open-file limit); beyond, uvicorn
      answers 503.
    - ``docs``: serve FastAPI's ``/docs`` and ``/openapi.json`` (off: they describe the endpoint to anyone).
    """

    host: str = "127.0.0.1"
    port: int = 8080
    token: str | None = None
    queue_size: int = 32
    retry_after_s: int = 5
    max_question_chars: int = 2000
    max_request_bytes: int = 16 * 1024
    read_timeout_s: float = 10.0
    keep_alive_s: float = 5.0
    max_connections: int = 256
    docs: bool = False

    def check(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ValueError(f"ServeSettings.port must be a port number, 0 to 65535 (got {self.port})")
        for name, least in (("queue_size", 0), ("retry_after_s", 1), ("max_question_chars", 1),
                            ("max_request_bytes", 256), ("max_connections", 1)):
            if getattr(self, name) < least:
                raise ValueError(f"ServeSettings.{name} must be >= {least} (got {getattr(self, name)})")
        for name in ("read_timeout_s", "keep_alive_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"ServeSettings.{name} must be > 0 (got {getattr(self, name)})")

    def resolved_token(self) -> str | None:
        """The token requests must send: ``token``, else :data:`TOKEN_ENV`, else none (an empty one is none)."""
        return (self.token if self.token is not None else serve_token()) or None

    def connection_limits(self) -> ConnectionLimits:
        return ConnectionLimits(read_timeout_s=self.read_timeout_s, keep_alive_s=self.keep_alive_s,
                                max_connections=self.max_connections, max_head_bytes=self.max_request_bytes)

    def recorded(self) -> dict[str, Any]:
        """The settings as a session's ``config.json`` records them: the token itself never, only whether one
        was required."""
        return {**self.to_dict(), "token": self.resolved_token() is not None}


def is_local(host: str) -> bool:
    """Whether ``host`` is a loopback address (or ``localhost``): only this machine can connect."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ExposedWithoutTokenWarning(UserWarning):
    """The endpoint binds an address other machines can reach, and requires no token."""


class QueueFull(Exception):
    """Every slot is answering and the queue holds ``queue_size`` requests: the request is refused (503);
    ``retry_after_s`` is the wait to suggest."""

    def __init__(self, message: str, retry_after_s: int):
        super().__init__(message)
        self.retry_after_s = retry_after_s


SESSION_QUESTION = Question(id="text2sparql-served-session", text="(questions arrive as TEXT2SPARQL requests)")
"""The placeholder question list a served run is created with: its questions are unknown until they arrive."""


@dataclass
class ServedRun:
    """A method answering TEXT2SPARQL requests, each recorded in one run folder (see the module docstring)."""

    method: Method
    config: RunConfig
    datasets: Mapping[str, str] | None = None
    """Dataset IRI -> KG; ``None``: the :data:`DEFAULT_DATASETS` IRIs of the served KG."""
    settings: ServeSettings = field(default_factory=ServeSettings)
    runner: Runner | None = None
    store: RunStore | None = None
    run_dir: Path | None = None
    session: str = ""
    _numbers: Any = field(default_factory=lambda: itertools.count(1))
    _slots: asyncio.Semaphore | None = None
    _pending: int = 0
    _service_s: float = 1.0
    _appends: GroupCommit | None = None
    _started: float = 0.0

    def __post_init__(self) -> None:
        if self.datasets is None:
            self.datasets = {iri: kg for iri, kg in DEFAULT_DATASETS.items() if kg == self.config.kg}
        other = {kg for kg in self.datasets.values() if kg != self.config.kg}
        if other:
            raise ValueError(f"this server holds the KG {self.config.kg!r}; dataset IRIs mapped to "
                             f"{', '.join(sorted(other))} need a server of their own")

    async def start(self) -> None:
        """Resolve models and KG, prepare the method once, open the session's run folder."""
        self._started = time.perf_counter()
        self.session = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        self.runner = Runner(build_plan(self.method, [Question(**{**SESSION_QUESTION.to_dict(),
                                                                  "kg": self.config.kg})], self.config))
        prepared = await self.runner.prepare()
        self.run_dir = prepared.run_dir = prepared.run_dir.with_name(f"{prepared.run_dir.name}-serve-{self.session}")
        self.store = RunStore(self.run_dir)
        self.store.open()
        write_json(self.run_dir / CONFIG, {**prepared.config_json(), "served": {
            "datasets": dict(self.datasets), "session": self.session, "settings": self.settings.recorded()}})
        self._write_manifest("running")
        self._slots = asyncio.Semaphore(max(1, self.config.concurrency))
        self._pending = 0
        self._appends = GroupCommit(self.store, "sparqlab-serve-writer")

    def _write_manifest(self, status: str, ids: list[str] | None = None) -> None:
        """``manifest.json`` of the session (``sparqlab runs list`` shows it): the served requests are its
        questions, however many there are when it is read (``served``)."""
        ids = ids or []
        write_json(self.run_dir / MANIFEST, {**manifest_document(
            self.runner.prepared.header(), status, len(ids), self.runner.plan.fingerprint, len(ids), ids),
            "served": True})

    async def answer(self, question: str, dataset: str, arrived: float | None = None) -> dict[str, Any]:
        """One request: ``{"dataset", "question", "query"}`` (``query`` empty when the method produced none).
        ``arrived`` (event-loop time, default now) starts the request's ``question_timeout_s``: time spent
        waiting for a slot counts. Raises :class:`QueueFull` when the queue is full."""
        assert self.runner is not None and self.store is not None and self._slots is not None
        loop = asyncio.get_running_loop()
        if self._pending >= self.config.concurrency + self.settings.queue_size:
            wait = self.expected_wait_s()
            raise QueueFull(f"{self._pending} requests are being answered or waiting, the limit; retry after "
                            f"{wait} s", wait)
        timeout_s = self.config.question_timeout_s
        deadline = None if timeout_s is None else (loop.time() if arrived is None else arrived) + timeout_s
        number = next(self._numbers)
        metadata = {"dataset": dataset}
        if dataset in DATASET_IRIS:  # the API sends no language: tell it from the text, among the dataset's
            language = question_language(question, EDITIONS[DATASET_IRIS[dataset]].languages)
            if language:
                metadata["language"] = language
        served = Question(id=f"served-{self.session}-{number:06d}", text=question, kg=self.datasets[dataset],
                          metadata=metadata)
        self._pending += 1
        try:
            try:
                async with asyncio.timeout_at(deadline):
                    await self._slots.acquire()
            except TimeoutError:  # its time ran out in the queue: recorded as a question_timeout, answered empty
                record, trace = await self.runner.answer(served, deadline)
            else:
                began = loop.time()
                try:
                    record, trace = await self.runner.answer(served, deadline)
                finally:
                    self._slots.release()
                    self._service_s = 0.8 * self._service_s + 0.2 * (loop.time() - began)
        finally:
            self._pending -= 1
        await self._appends.append(record, trace)
        return {"dataset": dataset, "question": question, "query": self.portable(record["predicted_sparql"])}

    def expected_wait_s(self) -> int:
        """Seconds until a slot is likely free for one more request: the requests ahead of it over the slots,
        times the recent time per answer (a moving average), at least 1 and at most ``retry_after_s``."""
        ahead = self._pending / max(1, self.config.concurrency)
        return max(1, min(self.settings.retry_after_s, round(ahead * self._service_s)))

    def portable(self, sparql: str | None) -> str:
        """The query as a client can run it on any endpoint of the KG: the profile's predefined prefixes it uses
        without declaring them are declared (the challenge's evaluation runs queries on a plain endpoint);
        ``""`` when the method gave no query."""
        return declare_prefixes(sparql, self.runner.kg.profile.prefixes) if sparql else ""

    async def stop(self) -> None:
        """Write the session's ``metrics.json`` (cost per request; unscored) and release everything."""
        if self.runner is None or self.store is None:
            return
        if self._appends is not None:
            await self._appends.close()
        records = self.store.predictions()
        write_json(self.run_dir / METRICS, metrics_document(
            self.runner.prepared.header(), records, len(records), time.perf_counter() - self._started,
            prepare=self.runner.prepared.prepare_stats))
        self._write_manifest("complete", [r["id"] for r in records])
        self.store.close()
        await self.runner.release()
        self.runner.kg.close()


def create_app(served: ServedRun):
    """The FastAPI application of one served method, within ``served.settings``."""
    from fastapi import FastAPI, Query
    from fastapi.responses import JSONResponse

    settings = served.settings

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await served.start()
        try:
            yield
        finally:
            await served.stop()

    app = FastAPI(title=f"sparqlab TEXT2SPARQL endpoint: {served.method.name}", lifespan=lifespan,
                  docs_url="/docs" if settings.docs else None, redoc_url=None,
                  openapi_url="/openapi.json" if settings.docs else None)
    app.add_middleware(RequestGate, token=settings.resolved_token(), max_body_bytes=settings.max_request_bytes)

    def refused(status: int, detail: str, headers: dict[str, str] | None = None):
        return JSONResponse(status_code=status, content={"detail": detail}, headers=headers)

    async def text2sparql(question: str = Query(..., min_length=1, description="the natural-language question"),
                          dataset: str = Query(..., min_length=1, description="the dataset IRI")):
        arrived = asyncio.get_running_loop().time()
        if not question.strip():
            return refused(422, "the question is empty (it holds only white space)")
        if len(question) > settings.max_question_chars:
            return refused(422, f"the question is {len(question):,} characters long, over the limit of "
                                f"{settings.max_question_chars:,}")
        if dataset not in served.datasets:
            return refused(404, f"unknown dataset {dataset!r}; this endpoint serves "
                                f"{', '.join(sorted(served.datasets))}")
        try:
            return await served.answer(question, dataset, arrived)
        except QueueFull as full:
            return refused(503, f"busy: {full}", {"Retry-After": str(full.retry_after_s)})
        except InfrastructureError as error:  # the machinery cannot answer any request: say so, do not crash
            return refused(503, f"{type(error).__name__}: {error}")
        except Exception as error:  # noqa: BLE001 - a bad question must not become a 500
            return JSONResponse(status_code=200, content={
                "dataset": dataset, "question": question, "query": "",
                "error": f"{type(error).__name__}: {error}"})

    app.add_api_route("/", text2sparql, methods=["GET"])
    app.add_api_route("/text2sparql", text2sparql, methods=["GET"])
    return app


class RequestGate:
    """ASGI middleware in front of every route: a missing or wrong bearer token is a 401 (compared in constant
    time), a declared body over ``max_body_bytes`` a 413 (the request line and headers are bounded by the
    connection layer)."""

    def __init__(self, app, token: str | None, max_body_bytes: int):
        self.app, self.max_body_bytes = app, max_body_bytes
        self.expected = f"Bearer {token}".encode() if token else None

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        if self.expected is not None and not hmac.compare_digest(headers.get(b"authorization", b""),
                                                                 self.expected):
            await _plain(send, 401, "this endpoint needs its token: send Authorization: Bearer TOKEN",
                         [(b"www-authenticate", b'Bearer realm="sparqlab"')])
            return
        declared = headers.get(b"content-length", b"0")
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            await _plain(send, 413, f"the request body is over the limit of {self.max_body_bytes:,} bytes")
            return
        await self.app(scope, receive, send)


async def _plain(send, status: int, detail: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


def serve(served: ServedRun, log_level: str = "warning") -> None:
    """Serve until interrupted at ``served.settings``' address; prints ``serving METHOD at URL`` once listening
    (``port=0``: a free port). Binding an address other machines reach without a token warns
    (:class:`ExposedWithoutTokenWarning`)."""
    settings = served.settings
    if not is_local(settings.host) and settings.resolved_token() is None:
        warnings.warn(f"serving on {settings.host}, which other machines can reach, without a token: anyone who "
                      f"reaches port {settings.port} can send questions (and spend model calls). Give one with "
                      f"--token or {TOKEN_ENV}, or bind 127.0.0.1 behind a proxy of your own",
                      ExposedWithoutTokenWarning, stacklevel=2)
    sock = listen_socket(settings.host, settings.port)
    url = f"http://{settings.host}:{sock.getsockname()[1]}/text2sparql"
    print(f"serving {served.method.name} at {url}", flush=True)
    guarded_server(create_app(served), settings.connection_limits(), log_level).run(sockets=[sock])
