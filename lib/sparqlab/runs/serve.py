"""Any method as a TEXT2SPARQL challenge endpoint: ``GET /`` and ``GET /text2sparql`` with ``question`` and
``dataset`` query parameters, answering ``{"dataset", "question", "query"}`` as the challenge's API says.

Each request goes through the runner's own per-question machinery (:meth:`sparqlab.runs.runner.Runner.answer`:
the method's public view of the question, counted KG tools, model caches, traces, the per-question timeout,
execution of the final query) and is appended as one line to a run folder
(``runs/<experiment>/<run folder>-serve-<session>/predictions.jsonl`` + ``traces.jsonl``), so a served session
is a run a researcher browses and scores afterwards (``sparqlab eval ANSWERS.json --metric text2sparql`` with
the client's ``ask`` output, or ``sparqlab runs ...`` on the folder). Served questions have no gold: records
are unscored, and there is nothing for a method to leak.

Dataset IRIs map to the one KG of the process by configuration (:data:`DEFAULT_DATASETS`: the four TEXT2SPARQL
datasets' IRIs; a served question carries its dataset IRI and, for those, the language its text is in); an unknown
IRI gets a JSON error (HTTP 404) naming the known ones, a missing or empty parameter FastAPI's 422, and a
question the method cannot answer an empty ``query`` (with the reason in the run folder) rather than a 500.
Requests are answered concurrently (``concurrency`` at a time); the server binds 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparqlab.data.question import Question
from sparqlab.data.text2sparql import DATASET_IRIS, EDITIONS, question_language
from sparqlab.kg.endpoint import declare_prefixes
from sparqlab.platform.base import Method
from sparqlab.runs.config import RunConfig
from sparqlab.runs.manifest import manifest_document
from sparqlab.runs.metrics import metrics_document
from sparqlab.runs.runner import FATAL_MODEL_ERRORS, Runner
from sparqlab.runs.store import CONFIG, MANIFEST, METRICS, RunStore, write_json

DEFAULT_DATASETS = {edition.iri: edition.kg for edition in EDITIONS.values()}
"""Dataset IRI -> KG name served without configuration: CK25's and CK26's IRIs on the ``ck25`` KG, DB25's and
DB26's on ``dbpedia`` (a server holds one KG, so it serves the IRIs of that KG)."""

SESSION_QUESTION = Question(id="text2sparql-served-session", text="(questions arrive as TEXT2SPARQL requests)")
"""The placeholder question list a served run is created with: its questions are unknown until they arrive."""


@dataclass
class ServedRun:
    """A method answering TEXT2SPARQL requests, each recorded in one run folder (see the module docstring)."""

    method: Method
    config: RunConfig
    datasets: Mapping[str, str] | None = None
    """Dataset IRI -> KG; ``None``: the :data:`DEFAULT_DATASETS` IRIs of the served KG."""
    runner: Runner | None = None
    store: RunStore | None = None
    run_dir: Path | None = None
    session: str = ""
    _numbers: Any = field(default_factory=lambda: itertools.count(1))
    _slots: asyncio.Semaphore | None = None
    _writer: ThreadPoolExecutor | None = None
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
        self.runner = Runner(self.method, [Question(**{**SESSION_QUESTION.to_dict(), "kg": self.config.kg})],
                             self.config)
        await self.runner.prepare()
        self.run_dir = self.runner.run_dir.with_name(f"{self.runner.run_dir.name}-serve-{self.session}")
        self.runner.run_dir = self.run_dir
        self.store = RunStore(self.run_dir)
        self.store.open()
        write_json(self.run_dir / CONFIG, {**self.runner._config_json(), "served": {  # noqa: SLF001
            "datasets": dict(self.datasets), "session": self.session}})
        self._write_manifest("running")
        self._slots = asyncio.Semaphore(max(1, self.config.concurrency))
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sparqlab-serve-writer")

    def _write_manifest(self, status: str, ids: list[str] | None = None) -> None:
        """``manifest.json`` of the session (``sparqlab runs list`` shows it): the served requests are its
        questions."""
        ids = ids or []
        write_json(self.run_dir / MANIFEST, manifest_document(
            self.runner._header(), status, len(ids), self.runner.fingerprint, len(ids), ids))  # noqa: SLF001

    async def answer(self, question: str, dataset: str) -> dict[str, Any]:
        """One request: ``{"dataset", "question", "query"}`` (``query`` empty when the method produced none)."""
        assert self.runner is not None and self.store is not None and self._slots is not None
        number = next(self._numbers)
        metadata = {"dataset": dataset}
        if dataset in DATASET_IRIS:  # the API sends no language: tell it from the text, among the dataset's
            language = question_language(question, EDITIONS[DATASET_IRIS[dataset]].languages)
            if language:
                metadata["language"] = language
        served = Question(id=f"served-{self.session}-{number:06d}", text=question, kg=self.datasets[dataset],
                          metadata=metadata)
        async with self._slots:
            record, trace = await self.runner.answer(served)
        await asyncio.get_running_loop().run_in_executor(self._writer, self.store.append, record, trace)
        return {"dataset": dataset, "question": question, "query": self.portable(record["predicted_sparql"])}

    def portable(self, sparql: str | None) -> str:
        """The query as a client can run it on any endpoint of the KG: the profile's predefined prefixes it uses
        without declaring them are declared (the challenge's evaluation runs queries on a plain endpoint);
        ``""`` when the method gave no query."""
        return declare_prefixes(sparql, self.runner.kg.profile.prefixes) if sparql else ""

    async def stop(self) -> None:
        """Write the session's ``metrics.json`` (cost per request; unscored) and release everything."""
        if self.runner is None or self.store is None:
            return
        if self._writer is not None:
            self._writer.shutdown(wait=True)
        records = self.store.predictions()
        write_json(self.run_dir / METRICS, metrics_document(
            self.runner._header(), records, len(records), time.perf_counter() - self._started,  # noqa: SLF001
            prepare=self.runner.prepare_stats))
        self._write_manifest("complete", [r["id"] for r in records])
        self.store.close()
        self.runner._pool.shutdown(wait=False)  # noqa: SLF001
        for model in self.runner.models:
            await model.aclose()
        self.runner.kg.close()


def create_app(served: ServedRun):
    """The FastAPI application of one served method."""
    from fastapi import FastAPI, Query
    from fastapi.responses import JSONResponse

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await served.start()
        try:
            yield
        finally:
            await served.stop()

    app = FastAPI(title=f"sparqlab TEXT2SPARQL endpoint: {served.method.name}", lifespan=lifespan)

    async def text2sparql(question: str = Query(..., min_length=1, description="the natural-language question"),
                          dataset: str = Query(..., min_length=1, description="the dataset IRI")):
        if dataset not in served.datasets:
            return JSONResponse(status_code=404, content={
                "detail": f"unknown dataset {dataset!r}; this endpoint serves {', '.join(sorted(served.datasets))}"})
        try:
            return await served.answer(question, dataset)
        except FATAL_MODEL_ERRORS as error:  # the model cannot answer any request: say so, do not crash
            return JSONResponse(status_code=503, content={"detail": f"{type(error).__name__}: {error}"})
        except Exception as error:  # noqa: BLE001 - a bad question must not become a 500
            return JSONResponse(status_code=200, content={
                "dataset": dataset, "question": question, "query": "",
                "error": f"{type(error).__name__}: {error}"})

    app.add_api_route("/", text2sparql, methods=["GET"])
    app.add_api_route("/text2sparql", text2sparql, methods=["GET"])
    return app


def serve(served: ServedRun, host: str = "127.0.0.1", port: int = 8080, log_level: str = "warning") -> None:
    """Serve until interrupted; prints ``serving METHOD at URL`` once listening (``port=0``: a free port)."""
    import uvicorn

    from sparqlab.llm.server import listen_socket

    sock = listen_socket(host, port)
    url = f"http://{host}:{sock.getsockname()[1]}/text2sparql"
    print(f"serving {served.method.name} at {url}", flush=True)
    uvicorn.Server(uvicorn.Config(create_app(served), log_level=log_level, access_log=False)).run(sockets=[sock])
