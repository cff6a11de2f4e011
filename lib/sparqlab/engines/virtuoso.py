"""A real Virtuoso on 127.0.0.1: Debian's ``virtuoso-opensource`` (``virtuoso-t``, ``isql-vt``) over a database of
its own in a temporary folder, with RDF bulk-loaded into named graphs (once: the loaded database is kept under the
cache) — the tests' second SPARQL engine beside ``oxigraph serve-read-only``
(:mod:`sparqlab.engines.oxigraph_server`) and what ``sparqlab kg serve --engine virtuoso`` starts.

Virtuoso differs from oxigraph where a result can depend on it (docs/engines.md): its default graph is the union
of every graph it holds (its own system graphs included), so a KG is loaded into a named graph and queried with
``default-graph-uri`` (or ``graph=`` in the KG options); and it cuts every SELECT at ``ResultSetMaxRows``, saying
so only in an ``X-SPARQL-MaxRows`` response header (:mod:`sparqlab.kg.endpoint` reads it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from sparqlab.core.hashing import file_digest, stable_hash, store_digest
from sparqlab.core.paths import cache_dir
from sparqlab.core.processes import free_port, stop_process, wait_until_answering

INSTALL_HINT = "Virtuoso is not installed (Debian/Ubuntu: apt-get install virtuoso-opensource)"

_INI = """\
[Database]
DatabaseFile = {folder}/virtuoso.db
ErrorLogFile = {folder}/virtuoso.log
LockFile = {folder}/virtuoso.lck
TransactionFile = {folder}/virtuoso.trx
xa_persistent_file = {folder}/virtuoso.pxa
ErrorLogLevel = 7
FileExtend = 200
Striping = 0
TempStorage = TempDatabase

[TempDatabase]
DatabaseFile = {folder}/virtuoso-temp.db
TransactionFile = {folder}/virtuoso-temp.trx
Striping = 0

[Parameters]
ServerPort = 127.0.0.1:{sql_port}
DisableUnixSocket = 1
CheckpointInterval = 0
DirsAllowed = ., {data}
NumberOfBuffers = {buffers}
MaxDirtyBuffers = {dirty}
MaxQueryMem = 256M
ThreadsPerQuery = 2
AsyncQueueMaxThreads = 4
ServerThreads = 10

[HTTPServer]
ServerPort = 127.0.0.1:{http_port}
ServerRoot = {folder}
MaxClientConnections = 8
ServerThreads = 8
EnabledDavVSP = 0

[SPARQL]
ResultSetMaxRows = {max_rows}
MaxQueryExecutionTime = {timeout_s}
MaxQueryCostEstimationTime = 0
"""


def virtuoso_binaries() -> tuple[str, str]:
    """The server and SQL client programs (``virtuoso-t``, ``isql-vt``); :class:`FileNotFoundError` naming the
    package when they are missing."""
    server, client = shutil.which("virtuoso-t"), shutil.which("isql-vt")
    if not server or not client:
        raise FileNotFoundError(INSTALL_HINT)
    return server, client


def virtuoso_installed() -> bool:
    return bool(shutil.which("virtuoso-t") and shutil.which("isql-vt"))


def _isql(client: str, port: int, sql: str, timeout_s: float) -> str:
    """Run ``sql`` through ``isql-vt`` as the database administrator; its output, or :class:`RuntimeError` with
    the error Virtuoso printed."""
    done = subprocess.run([client, f"127.0.0.1:{port}", "dba", "dba", f"exec={sql}"], capture_output=True,
                          text=True, timeout=timeout_s)
    output = done.stdout + done.stderr
    if done.returncode != 0 or "*** Error" in output:
        raise RuntimeError(f"Virtuoso refused {sql!r}: {' '.join(output.split())[:500]}")
    return output


def _stage(source: str | Path, folder: Path) -> None:
    """Put one RDF source into ``folder`` for the bulk loader: a file as a link, a pyoxigraph store folder dumped
    to N-Triples (its default graph)."""
    import pyoxigraph

    source = Path(source)
    if source.is_dir():
        store = pyoxigraph.Store.read_only(str(source))
        store.dump(str(folder / "store.nt"), format=pyoxigraph.RdfFormat.N_TRIPLES,
                   from_graph=pyoxigraph.DefaultGraph())
        del store
    elif source.is_file():
        (folder / source.name).symlink_to(source.resolve())
    else:
        raise FileNotFoundError(f"no RDF file or pyoxigraph store at {source} to load into Virtuoso")


def database_key(graphs: Mapping[str, Sequence[str | Path]], server: str) -> str:
    """What a loaded database depends on: each graph's IRI and sources (a file's content digest, a store folder's
    :func:`~sparqlab.core.hashing.store_digest`) and the server program (its size and date)."""
    sources = {graph: [store_digest(source) if Path(source).is_dir() else file_digest(source)
                       for source in map(Path, files)] for graph, files in graphs.items()}
    program = Path(server).stat()
    return stable_hash([sources, program.st_size, program.st_mtime_ns], 16)


@contextlib.contextmanager
def _running(server: str, folder: Path, ini_text: str, http_port: int, startup_timeout_s: float) -> Iterator[str]:
    """Virtuoso over the database in ``folder`` (created empty when there is none) while the block runs."""
    (folder / "virtuoso.ini").write_text(ini_text, encoding="utf-8")
    process = subprocess.Popen([server, "+foreground", "+configfile", str(folder / "virtuoso.ini")], cwd=folder,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{http_port}/sparql"
        log = folder / "virtuoso.log"
        wait_until_answering(url, process, f"Virtuoso (log: {log})", startup_timeout_s,
                             lambda: log.read_text(errors="replace")[-1500:] if log.exists() else "")
        yield url
    finally:
        stop_process(process, timeout_s=30)


def _load(client: str, sql_port: int, staged: Mapping[str, Path], load_timeout_s: float) -> None:
    """Bulk-load each staged folder into its graph and checkpoint; an error names the files Virtuoso refused."""
    load = " ".join(f"ld_dir('{data}', '*', '{graph.replace(chr(39), chr(39) * 2)}');" for graph, data in staged.items())
    _isql(client, sql_port, f"{load} rdf_loader_run(); checkpoint;", load_timeout_s)
    failed = _isql(client, sql_port, "SELECT ll_file, ll_error FROM DB.DBA.LOAD_LIST WHERE ll_error IS NOT NULL;",
                   load_timeout_s)
    if "0 Rows." not in failed:
        raise RuntimeError(f"Virtuoso could not load every file: {' '.join(failed.split())[:800]}")


@contextlib.contextmanager
def serve_virtuoso(graphs: Mapping[str, Sequence[str | Path]], *, max_rows: int = 10_000, timeout_s: int = 60,
                   buffers: int = 2000, startup_timeout_s: float = 60.0,
                   load_timeout_s: float = 600.0) -> Iterator[str]:
    """Start Virtuoso on free 127.0.0.1 ports over a database in a temporary folder holding each named graph of
    ``graphs`` (graph IRI → RDF files — Turtle, N-Triples, RDF/XML, by extension — or pyoxigraph store folders),
    and yield its SPARQL URL (``http://127.0.0.1:PORT/sparql``) while the block runs; then stop it and delete the
    folder. Query one KG with ``?default-graph-uri=IRI`` in the URL or ``open_kg(url, graph=IRI)``.

    The first start bulk-loads the data and keeps the loaded database under the cache
    (``cache_dir()/virtuoso/<key>``, :func:`database_key`); a later start with the same data copies it and skips
    the load. ``max_rows``: ``ResultSetMaxRows``, the engine's cap on every SELECT; ``timeout_s``:
    ``MaxQueryExecutionTime``; ``buffers``: ``NumberOfBuffers`` (8 KiB pages: with the default 2000 the server holds
    about 0.3 GB with CK25 loaded, where Debian's configuration takes ~0.7 GB)."""
    server, client = virtuoso_binaries()
    cached = cache_dir() / "virtuoso" / database_key(graphs, server) / "virtuoso.db"
    with tempfile.TemporaryDirectory(prefix="sparqlab-virtuoso-") as temp:
        folder = Path(temp) / "db"
        folder.mkdir()
        staged = {graph: Path(temp) / f"graph{number}" for number, graph in enumerate(graphs)}

        def ini() -> tuple[str, int, int]:
            """The configuration on two free ports, and the ports (SQL, HTTP)."""
            sql_port, http_port = free_port(), free_port()
            return _INI.format(folder=folder, data=", ".join(map(str, staged.values())), sql_port=sql_port,
                               http_port=http_port, buffers=buffers, dirty=buffers * 3 // 4, max_rows=max_rows,
                               timeout_s=timeout_s), sql_port, http_port

        if not cached.exists():
            for graph, sources in graphs.items():
                staged[graph].mkdir()
                for source in sources:
                    _stage(source, staged[graph])
            text, sql_port, http_port = ini()
            with _running(server, folder, text, http_port, startup_timeout_s):
                _load(client, sql_port, staged, load_timeout_s)
            _keep(folder / "virtuoso.db", cached)  # after a clean stop: the database file is complete
            for leftover in folder.iterdir():
                leftover.unlink()
        shutil.copyfile(cached, folder / "virtuoso.db")
        text, _, http_port = ini()
        with _running(server, folder, text, http_port, startup_timeout_s) as url:
            yield url


def _keep(database: Path, cached: Path) -> None:
    """Move a loaded database into the cache, atomically (another process may be keeping the same one)."""
    cached.parent.mkdir(parents=True, exist_ok=True)
    partial = cached.with_name(f".{cached.name}.{os.getpid()}.partial")
    shutil.copyfile(database, partial)
    os.replace(partial, cached)
