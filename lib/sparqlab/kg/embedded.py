"""The embedded backend: a pyoxigraph store on disk, queried in worker processes so that a timeout stops a query.

pyoxigraph 0.5 gives Python no query timeout or cancellation (the Rust API and ``oxigraph serve`` have one; the
Python side is oxigraph issue #1926), and it evaluates aggregates, ORDER BY and ASK inside the ``query()`` call,
so deadline checks between rows cannot stop a ``COUNT`` over a cross product, and a Python thread cannot be
killed. Each query therefore runs in a small worker process that keeps the store open read-only; the caller
waits until the deadline and kills the worker if it passes (the next query starts a fresh one, ~0.3 s).

Residual limits: the row cap is applied while streaming SELECT/CONSTRUCT rows, but sorting or grouping still
computes the full intermediate result, bounded only by the timeout and by the worker's memory cap (RLIMIT_DATA,
:data:`DEFAULT_MEMORY_LIMIT_GB` by default: a query over it kills its worker, reported as an EndpointError); a
killed worker costs the next query a restart (~0.1-0.3 s); results cross a pipe as JSON (tens of microseconds
per row). The worker's stderr (Rust's "memory allocation failed" lines, a crash report) goes to a scratch file,
read only to explain a worker's death, so it never reaches a run's stderr.

An RDF file given as a KG is loaded the same way, in a process under the same heap cap (:func:`load_in_worker`),
with RDF/XML entity declarations refused (:func:`refuse_xml_entities`); the prefix map reaches the query workers
on their input, not their command line (a file may declare thousands).

The worker is also where the untrusted text is parsed (see :mod:`sparqlab.sparql.screen`): a parse that crashes
(stack overflow), takes long or takes memory does so under the query's timeout and memory cap, and kills only
the worker. ``SERVICE`` is refused there, decided from the parsed algebra: pyoxigraph would make live HTTP calls,
which an offline, cached and reproducible run must not do.
"""

from __future__ import annotations

import json
import os
import queue
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator
from functools import cached_property
from itertools import islice
from pathlib import Path
from typing import Any

from sparqlab.core.cache import JsonCache
from sparqlab.core.hashing import file_digest, stable_hash, store_digest
from sparqlab.core.processes import OUT_OF_MEMORY, cap_heap, exit_cause, exit_with_parent, python_child_env
from sparqlab.engines import RELATIVE_BASE, Engine
from sparqlab.kg.base import KnowledgeGraph, QueryOptions
from sparqlab.kg.errors import (
    EndpointError,
    QueryTimeout,
    UnsupportedFunction,
    classify_engine_message,
    error_from_kind,
)
from sparqlab.kg.profiles import RDF, XSD, KGProfile, derive_from_data, generic_profile
from sparqlab.kg.results import QueryResult, Term
from sparqlab.sparql.rewrite import REWRITE_HINT
from sparqlab.sparql.screen import syntax_message
from sparqlab.sparql.tree import uses_service

_WORKER_CODE = "import sys; from sparqlab.kg.embedded import serve_worker; serve_worker(*sys.argv[1:])"
_STARTUP_TIMEOUT_S = 120.0
_PLAIN_DATATYPES = {XSD + "string", RDF + "langString"}

DEFAULT_MEMORY_LIMIT_GB = float(os.environ.get("SPARQLAB_WORKER_MEMORY_GB", "2"))
"""Heap cap of each query worker (GiB), from ``SPARQLAB_WORKER_MEMORY_GB`` (default 2): with the default two
workers one runaway query holds at most 2 GiB, which leaves a laptop or a 24 GB machine usable. Raise it (the
variable, or ``EmbeddedKG(memory_limit_gb=...)``) for a store whose legitimate queries sort or group millions of
rows; ``0`` means no cap."""

SERVICE_REFUSED = ("SERVICE (federated query) is not run by the embedded store: it would call the network. "
                   "Query the remote endpoint directly instead.")


def to_term(node: Any) -> Term:
    """A pyoxigraph term as a :class:`Term`, with plain literals written as SPARQL JSON results write them."""
    import pyoxigraph

    if isinstance(node, pyoxigraph.NamedNode):
        return Term("uri", node.value)
    if isinstance(node, pyoxigraph.BlankNode):
        return Term("bnode", node.value)
    if isinstance(node, pyoxigraph.Literal):
        datatype = node.datatype.value
        return Term("literal", node.value, None if datatype in _PLAIN_DATATYPES else datatype, node.language)
    return Term("literal", str(node))  # an RDF-star quoted triple, kept readable


GRAPH_VARS = ("subject", "predicate", "object")
"""The variables of a graph (CONSTRUCT/DESCRIBE) result's rows."""


def triple_row(triple: Any) -> dict[str, Term]:
    """A pyoxigraph triple as a graph-result row."""
    return dict(zip(GRAPH_VARS, (to_term(triple.subject), to_term(triple.predicate), to_term(triple.object)),
                    strict=True))


def run_on_store(store: Any, sparql: str, max_rows: int, prefixes: dict[str, str] | None = None) -> QueryResult:
    """Evaluate one query on an open pyoxigraph store, streaming at most ``max_rows`` rows."""
    import pyoxigraph

    solutions = store.query(sparql, prefixes=prefixes or None, base_iri=RELATIVE_BASE)
    if isinstance(solutions, pyoxigraph.QueryBoolean):
        return QueryResult("ask", boolean=bool(solutions))
    if isinstance(solutions, pyoxigraph.QueryTriples):
        names = list(GRAPH_VARS)
        rows = [triple_row(t) for t in islice(solutions, max_rows + 1)]
        kind = "graph"
    else:
        names = [v.value for v in solutions.variables]
        rows = [
            {name: to_term(value) for name, value in zip(names, solution, strict=True) if value is not None}
            for solution in islice(solutions, max_rows + 1)
        ]
        kind = "select"
    return QueryResult(kind, vars=names, rows=rows[:max_rows], truncated=len(rows) > max_rows)


def serve_worker(store_path: str, memory_limit_bytes: str = "0") -> None:
    """Worker process loop: the prefix map as the first stdin line (a map of thousands of prefixes is too long for
    the command line), then one JSON request per stdin line, one JSON reply per line on the original stdout.

    Anything else printed to stdout (by a library) goes to stderr so it cannot corrupt the replies. A positive
    ``memory_limit_bytes`` caps the worker's heap (RLIMIT_DATA, which unlike RLIMIT_AS ignores reserved but
    unused address space), so a query that would exhaust the machine's memory kills only its worker.
    """
    import pyoxigraph

    # Ctrl-C (or a notebook kernel's interrupt) goes to the whole process group; the parent decides what stops,
    # and this worker ends with it (end of input, or the parent watch below).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    exit_with_parent()
    cap_heap(int(memory_limit_bytes))
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    store = pyoxigraph.Store.read_only(store_path)
    prefixes = json.loads(sys.stdin.buffer.readline())
    replies.write(b'{"ready": true}\n')
    replies.flush()
    for line in sys.stdin.buffer:
        request = json.loads(line)
        sparql = request["sparql"]
        try:
            if uses_service(sparql, prefixes):
                raise PermissionError(SERVICE_REFUSED)
            result = run_on_store(store, sparql, request["max_rows"], prefixes)
            reply: dict[str, Any] = {"result": result.to_json()}
        except PermissionError as error:
            reply = {"error": {"kind": "endpoint_error", "message": str(error)}}
        except SyntaxError as error:
            reply = {"error": {"kind": "syntax_error", "message": syntax_message(sparql, str(error))}}
        except Exception as error:  # noqa: BLE001 - every failure must reach the caller as a typed error
            message, kind = f"{type(error).__name__}: {error}", classify_engine_message(str(error))
            if kind == UnsupportedFunction.kind:
                message += f". {REWRITE_HINT}"
            reply = {"error": {"kind": kind, "message": message}}
        replies.write(json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n")
        replies.flush()


class _Expired(Exception):
    """The worker did not answer before the deadline."""


class _WorkerDied(Exception):
    """The worker's pipe closed (crash, out of memory, killed from outside); the message says which."""


class _Worker:
    """One worker process and its line protocol."""

    def __init__(self, store_path: Path, prefixes: dict[str, str], memory_limit_bytes: int):
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the worker, closed in kill()
        self.process = subprocess.Popen(
            [sys.executable, "-c", _WORKER_CODE, str(store_path), str(memory_limit_bytes)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, env=python_child_env(),
        )
        self._pending = bytearray()
        try:
            self.send(prefixes)
            self.receive(_STARTUP_TIMEOUT_S)
        except (_Expired, _WorkerDied, BrokenPipeError):
            self.kill()
            raise EndpointError(
                f"could not start a query worker on the store {store_path} (exit code {self.process.returncode}); "
                "is it a pyoxigraph store, and is no other process writing to it?"
            ) from None

    def send(self, request: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(request, ensure_ascii=False).encode("utf-8") + b"\n")
        self.process.stdin.flush()

    def receive(self, timeout_s: float) -> dict[str, Any]:
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout_s
        descriptor = self.process.stdout.fileno()
        while b"\n" not in self._pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Expired
            ready, _, _ = select.select([descriptor], [], [], remaining)
            if ready:
                chunk = os.read(descriptor, 1 << 20)
                if not chunk:
                    raise _WorkerDied(self.death_reason())
                self._pending += chunk
        end = self._pending.index(b"\n")
        line = bytes(self._pending[:end])
        del self._pending[: end + 1]
        return json.loads(line)

    def death_reason(self) -> str:
        """Why the worker ended, from its exit status and the end of its stderr."""
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "its pipe closed"
        return exit_cause(code, self.stderr)

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout, self.stderr):
            if pipe is not None:
                pipe.close()

    def close(self) -> None:
        """Ask the worker to exit (end of its input); kill it if it does not."""
        try:
            if self.process.stdin is not None:
                self.process.stdin.close()
            self.process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.kill()


class _WorkerPool:
    """Up to ``size`` workers shared by the threads of one process; a fork starts with an empty pool."""

    def __init__(self, store_path: Path, prefixes: dict[str, str], size: int, memory_limit_bytes: int):
        self.store_path = store_path
        self.prefixes = prefixes
        self.memory_limit_bytes = memory_limit_bytes
        self._slots = threading.BoundedSemaphore(size)
        self._idle: queue.SimpleQueue[_Worker] = queue.SimpleQueue()
        self._pid = os.getpid()

    def run(self, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        with self._slots:
            worker = self._take()
            try:
                worker.send(request)
                reply = worker.receive(timeout_s)
            except BaseException:
                worker.kill()
                raise
            self._idle.put(worker)
            return reply

    def _take(self) -> _Worker:
        if self._pid != os.getpid():  # the workers belong to the parent process
            self._idle = queue.SimpleQueue()
            self._pid = os.getpid()
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            return _Worker(self.store_path, self.prefixes, self.memory_limit_bytes)

    def close(self) -> None:
        if self._pid != os.getpid():
            return
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return


def _shutdown(pool: _WorkerPool) -> None:
    pool.close()


class EmbeddedKG(KnowledgeGraph):
    """A KG in a local pyoxigraph store directory, opened read-only (see the module docstring for timeouts).

    ``identity`` names the store's content for the query cache and the run id (e.g. ``movies@<build hash>``); by
    default it is the folder's content digest (:func:`sparqlab.core.hashing.store_digest`). ``workers`` bounds
    how many queries run at once; ``memory_limit_gb`` caps each worker's heap (default
    :data:`DEFAULT_MEMORY_LIMIT_GB`; ``None`` or 0: no cap), so a runaway ORDER BY fails alone instead of starving
    the machine.
    """

    def __init__(self, store_path: str | Path, profile: KGProfile, *, identity: str | None = None,
                 cache: JsonCache | None = None, options: QueryOptions | None = None, workers: int = 2,
                 memory_limit_gb: float | None = DEFAULT_MEMORY_LIMIT_GB):
        super().__init__(profile, cache, options)
        self.store_path = Path(store_path)
        if not self.store_path.is_dir():
            raise FileNotFoundError(f"no pyoxigraph store at {self.store_path}")
        self._identity = identity or f"store:{store_digest(self.store_path)}"
        self.load_report: dict[str, Any] | None = None
        """What :func:`load_rdf` reported when this store was loaded from a file (``None``: an existing store)."""
        limit = int(memory_limit_gb * 2**30) if memory_limit_gb else 0
        self._pool = _WorkerPool(self.store_path, profile.prefixes, max(1, workers), limit)
        self._finalizer = weakref.finalize(self, _shutdown, self._pool)

    @property
    def identity(self) -> str:
        return self._identity

    @cached_property
    def store(self) -> Any:
        """The store opened read-only in this process, for trusted bulk reads (index building, statistics).

        Untrusted queries go through :meth:`query`, which has the guard, the timeout and the row cap.
        """
        import pyoxigraph

        return pyoxigraph.Store.read_only(str(self.store_path))

    def bulk_values(self, sparql: str) -> list[dict[str, str]]:
        """As :meth:`KnowledgeGraph.bulk_values`, read in this process: 3-4x faster than rows crossing the pipe."""
        solutions = self.store.query(sparql, prefixes=self.profile.prefixes or None)
        names = [v.value for v in solutions.variables]
        return [{n: v.value for n, v in zip(names, s, strict=True) if v is not None} for s in solutions]

    def _execute(self, sparql: str, timeout_s: float, max_rows: int) -> QueryResult:
        try:
            reply = self._pool.run({"sparql": sparql, "max_rows": max_rows}, timeout_s)
        except _Expired:
            raise QueryTimeout(
                f"query ran longer than {timeout_s:g} s and was stopped; make it more selective "
                "(constant entities, LIMIT) or raise the timeout"
            ) from None
        except _WorkerDied as died:
            raise EndpointError(
                f"the embedded store's query worker died while parsing or running the query: {died}; make the "
                "query simpler and more selective (constant entities, LIMIT without ORDER BY)"
            ) from None
        if "error" in reply:
            raise error_from_kind(reply["error"]["kind"], reply["error"]["message"])
        return QueryResult.from_json(reply["result"])

    def close(self) -> None:
        """Stop the worker processes; also done when the object is collected."""
        self._finalizer()

    def engine(self) -> Engine:
        import pyoxigraph

        return Engine("embedded", pyoxigraph.__version__)

    def describe(self) -> dict:
        """Adds the store folder, the engine that answers its queries (scores depend on it: docs/engines.md) and
        the report of a lenient load."""
        engine = self.engine()
        return {**super().describe(), "store": str(self.store_path),
                "engine": f"oxigraph {engine.version} (pyoxigraph, embedded on-disk store)",
                "engine_name": engine.name, "engine_version": engine.version,
                **({"load_report": self.load_report} if self.load_report else {})}


class LenientLoad(UserWarning):
    """An RDF file held data a strict parser refuses, and was loaded in pyoxigraph's lenient mode (real Wikidata
    dumps: language tags such as ``zh-classical``, whose subtag is longer than BCP 47's eight characters)."""


def nonstandard_language_tags(store: Any) -> dict[str, int]:
    """Language tags in ``store`` that a strict parser refuses, with how many literals carry each."""
    import pyoxigraph

    found = {}
    for row in store.query('SELECT ?l (COUNT(*) AS ?n) WHERE { ?s ?p ?o FILTER(isLiteral(?o)) BIND(LANG(?o) AS ?l) '
                           'FILTER(?l != "") } GROUP BY ?l'):
        try:
            pyoxigraph.Literal("", language=row["l"].value)
        except ValueError:
            found[row["l"].value] = int(row["n"].value)
    return dict(sorted(found.items()))


def load_rdf(store: Any, path: str | Path, rdf_format: Any = None) -> tuple[dict[str, str], dict[str, Any]]:
    """Bulk-load one RDF file into an open pyoxigraph store in lenient mode (real Wikidata dumps do not load
    strictly). Returns the prefixes the file declares and a report of what a strict parser would have refused:
    ``{"file", "nonstandard_language_tags": {tag: literals}}`` (:func:`warn_lenient` says it). Lenient mode also
    skips IRI validation; the report names the language tags only. RDF/XML declaring entities is refused
    (:func:`refuse_xml_entities`)."""
    import pyoxigraph

    refuse_xml_entities(path, rdf_format)
    parser = pyoxigraph.parse(path=str(path), format=rdf_format, lenient=True)
    store.bulk_extend(parser)
    return dict(parser.prefixes), {"file": str(path), "nonstandard_language_tags": nonstandard_language_tags(store)}


def refuse_xml_entities(source: str | Path | bytes, rdf_format: Any = None, name: str | None = None) -> None:
    """Raise ValueError if ``source`` (a file, or the bytes of an endpoint's answer called ``name``) is RDF/XML
    with an ``<!ENTITY`` declaration: the parser expands entities, so a few hundred bytes can stand for gigabytes
    (a "billion laughs"); RDF data has no need of them."""
    import pyoxigraph

    if isinstance(source, bytes):
        blocks: Iterator[bytes] = iter([source])
    else:
        rdf_format = rdf_format or pyoxigraph.RdfFormat.from_extension(Path(source).suffix.lstrip(".").lower())
        blocks = _blocks(Path(source))
    if rdf_format != pyoxigraph.RdfFormat.RDF_XML:
        return
    mark, tail = b"<!ENTITY", b""
    for block in blocks:
        if mark in tail + block:
            raise ValueError(f"{name or source} declares XML entities (<!ENTITY); refused: entity expansion can make "
                             "a small RDF/XML document huge. Expand them with an XML tool first if it is trusted")
        tail = block[-len(mark):]


def _blocks(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as file:
        while block := file.read(1 << 20):
            yield block


_LOAD_CODE = "import sys; from sparqlab.kg.embedded import load_worker; load_worker(*sys.argv[1:])"


def load_worker(store_dir: str, path: str, memory_limit_bytes: str) -> None:
    """Load process: :func:`load_rdf` of ``path`` into a new store at ``store_dir`` under the heap cap, its
    prefixes and report (or the error that refused the file) as one JSON line on stdout."""
    import pyoxigraph

    cap_heap(int(memory_limit_bytes))
    try:
        store = pyoxigraph.Store(store_dir)
        prefixes, report = load_rdf(store, path)
        answer: dict[str, Any] = {"triples": len(store), "prefixes": prefixes, "load_report": report}
        store.flush()
    except (ValueError, SyntaxError, OSError) as error:
        answer = {"error": str(error)}
    sys.stdout.write(json.dumps(answer) + "\n")


def load_in_worker(store_dir: Path, path: Path, memory_limit_bytes: int) -> dict[str, Any]:
    """:func:`load_rdf` of ``path`` into a new store at ``store_dir``, in a process under the same heap cap as
    query workers (a file that expands beyond it kills only that process): ``{"triples", "prefixes",
    "load_report"}``, or ValueError naming the file."""
    with tempfile.TemporaryFile() as stderr:
        done = subprocess.run([sys.executable, "-c", _LOAD_CODE, str(store_dir), str(path), str(memory_limit_bytes)],
                              stdout=subprocess.PIPE, stderr=stderr, env=python_child_env(), check=False)
        lines = done.stdout.decode("utf-8", "replace").splitlines()
        answer = json.loads(lines[-1]) if done.returncode == 0 and lines else None
        if answer is None:
            cause = exit_cause(done.returncode, stderr)
            if cause == OUT_OF_MEMORY:
                cause += " (SPARQLAB_WORKER_MEMORY_GB raises it)"
            raise ValueError(f"cannot load {path} as RDF: the loading process died: {cause}")
    if "error" in answer:
        raise ValueError(f"cannot load {path} as RDF: {answer['error']}")
    return answer


def warn_lenient(report: dict[str, Any]) -> None:
    """A :class:`LenientLoad` warning naming the language tags of a :func:`load_rdf` report, when there are any."""
    import warnings

    if report.get("nonstandard_language_tags"):
        tags = ", ".join(f"@{tag} ({n} literal{'s' if n != 1 else ''})"
                         for tag, n in report["nonstandard_language_tags"].items())
        warnings.warn(f"{report['file']}: loaded leniently; language tags that strict BCP 47 parsing refuses: "
                      f"{tags}", LenientLoad, stacklevel=3)


def load_rdf_file(path: str | Path, profile: KGProfile | None = None, **kwargs: Any) -> EmbeddedKG:
    """An :class:`EmbeddedKG` over one RDF file (format from its extension), loaded once with :func:`load_rdf`
    into a store under ``cache_dir()/kg/file-<name>-<content hash>`` and reused while the file is unchanged. The
    load's report is the KG's ``load_report`` (part of :meth:`EmbeddedKG.describe`) and warned as
    :class:`LenientLoad` on every opening when it names refused language tags.

    Without ``profile`` the KG gets the profile derived from its data (:mod:`sparqlab.graphs.derive`: the file's
    prefixes, its label predicate and schema, refined by a ``<name>.kg.yaml`` beside it). The query-cache identity
    is the file's content hash, so the same file gives the same cache entries wherever it lives.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no RDF file at {path}")
    store = file_store(path)
    build = json.loads((store.parent / "build.json").read_text(encoding="utf-8"))
    identity = f"file:{file_digest(path, 16)}"
    if profile is None:
        profile = derived_profile(store, path.stem, build.get("prefixes", {}), path, identity)
    kg = EmbeddedKG(store, profile, identity=identity, **kwargs)
    # a store built by a strict parse (no load_report) had no tag to report
    kg.load_report = {"nonstandard_language_tags": {}, **build.get("load_report", {}), "file": str(path)}
    warn_lenient(kg.load_report)
    return kg


def file_store(path: Path) -> Path:
    """The store of the RDF file ``path`` in the cache (built on first use with :func:`load_rdf` in a capped
    process, :func:`load_in_worker`, atomically; the
    prefixes the file declares and the load's report are kept in its ``build.json``). ``make clean`` removes stores of older versions of a file."""
    import pyoxigraph

    from sparqlab.core.paths import cache_dir
    from sparqlab.engines.oxigraph_store import ensure_built, install_built

    digest = stable_hash([file_digest(path), pyoxigraph.__version__], 16)
    slug = "".join(c if c.isalnum() or c in "-_" else "_" for c in path.stem)[:40]

    def build(target: Path, force: bool) -> dict:
        def make(store_dir: Path) -> dict:
            loaded = load_in_worker(store_dir, path, int(DEFAULT_MEMORY_LIMIT_GB * 2**30))
            return {"triples": loaded["triples"], "files": [path.name], "prefixes": loaded["prefixes"],
                    "load_report": loaded["load_report"]}

        return install_built(target, make, force)

    return ensure_built(cache_dir() / "kg" / f"file-{slug}-{digest}", build)


def derived_profile(source: KnowledgeGraph | Path, name: str, prefixes: dict[str, str], data: Path | None,
                    identity: str | None = None) -> KGProfile:
    """The profile derived from the data of a KG or of a store folder (read through a generic profile), refined
    by the YAML file beside ``data`` when there is one (:func:`~sparqlab.kg.profiles.derive_from_data`)."""
    if isinstance(source, KnowledgeGraph):
        return derive_from_data(source, name, prefixes, data)
    with EmbeddedKG(source, generic_profile(name), identity=identity, workers=1) as probe:
        return derive_from_data(probe, name, prefixes, data)


def register_file_kg(name: str, path: str | Path) -> None:
    """Make the RDF file ``path`` the KG called ``name`` (``open_kg(name)``, ``--kg NAME``, a dataset's ``kg``):
    its store is built in the cache on first use and its profile is derived from its data and the
    ``<stem>.kg.yaml`` beside it, under ``name`` (what a plug-in package calls from its ``sparqlab.kgs`` module;
    docs/adding-a-kg.md)."""
    import dataclasses

    from sparqlab.kg.profiles import register_profile, register_store_builder

    path = Path(path)

    def builder(force: bool = False) -> Path:
        return file_store(path)

    def profile() -> KGProfile:
        store = file_store(path)
        prefixes = json.loads((store.parent / "build.json").read_text(encoding="utf-8")).get("prefixes", {})
        derived = derived_profile(store, name, prefixes, path, identity=f"{name}@{store.parent.name}")
        return dataclasses.replace(derived, name=name)

    register_store_builder(name, builder)
    register_profile(profile, name)
