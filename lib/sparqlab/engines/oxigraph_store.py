"""A pyoxigraph store folder built once, safely, and checked before every use: what the embedded engine and
``oxigraph serve-read-only`` (:mod:`.oxigraph_server`) answer from, built for a bundled KG (the movie KG, CK25), a
KG given as an RDF file (:mod:`sparqlab.kg.embedded`) and a hand-written fixture.

A builder fills a fresh pyoxigraph store in a temporary folder beside the target, writes ``build.json`` (its
counts, the build time, the pyoxigraph version and the store's integrity record: every file's size and SHA-256,
:mod:`sparqlab.core.integrity`) and renames the folder into place, so an interrupted build leaves nothing
half-built in the cache and two processes racing on the same build both end with one store; a build killed
before it could clean up leaves its scratch folder, which the next build removes. :func:`ensure_built`
checks the record before the store is used: a damaged store is refused with the command that rebuilds it, never
opened into a run of per-question errors.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sparqlab.core.hashing import stable_hash
from sparqlab.core.integrity import NO_RECORD, REBUILT_ON_USE, DamagedOutput, files_problem, record_files

BUILD_FILE = "build.json"
STORE_UNRECORDED = ("LOCK", "LOG")
"""Store files left out of the record: RocksDB's lock file and its informational logs (``LOG``, ``LOG.old.*``)."""


STORE_FORMAT = "a10c708565ceb4c28adfaa7b1cadc8dce70212a919dda34062dcb9dd4e56e28c"
"""The version of what this module writes beside a store (``build.json``, its integrity record): part of every
bundled store's hash (:func:`builder_hash`), so a new value rebuilds them all. Give it a new value when that
changes. The first value is the SHA-256 this module's source had when store hashes covered source files instead,
so the stores built before, and the run ids naming them, stay valid."""


def builder_hash(recipe: str, *parts: Any) -> str:
    """A bundled store's hash: its builder's declared ``recipe`` version (a new value whenever what the builder
    writes changes), :data:`STORE_FORMAT` and ``parts`` (input digests, the pyoxigraph version ...), so a change to
    any of them rebuilds instead of reusing."""
    return stable_hash([recipe, STORE_FORMAT, *parts], 12)


def install_store(target: Path, fill: Callable[[Any], dict], force: bool = False) -> dict:
    """Create ``target/store`` with ``fill(store)`` (which loads the data and returns its counts) and
    ``target/build.json``; returns the counts with ``build_seconds``, ``pyoxigraph`` and ``integrity`` added."""
    import pyoxigraph

    def make(store_dir: Path) -> dict:
        store = pyoxigraph.Store(str(store_dir))
        stats = fill(store)
        store.flush()
        del store
        gc.collect()
        return stats

    return install_built(target, make, force)


def install_built(target: Path, make: Callable[[Path], dict], force: bool = False) -> dict:
    """As :func:`install_store`, with ``make(store_dir)`` creating and filling the store itself (in a worker
    process, say) and returning its counts."""
    import pyoxigraph

    start = time.perf_counter()
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_abandoned_builds(target.parent)
    scratch = Path(tempfile.mkdtemp(prefix=building_prefix(), dir=target.parent))
    try:
        scratch.chmod(0o755)  # mkdtemp's 0700 would hide the store from other users of a shared cache
        stats = make(scratch / "store")
        stats["build_seconds"] = round(time.perf_counter() - start, 2)
        stats["pyoxigraph"] = pyoxigraph.__version__
        stats["integrity"] = record_files(scratch / "store", skip=STORE_UNRECORDED)
        (scratch / BUILD_FILE).write_text(json.dumps(stats, indent=2) + "\n", encoding="utf-8")
    except BaseException:  # an interrupted build leaves no half-built store in the cache
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    if force and target.exists():
        shutil.rmtree(target)
    try:
        os.rename(scratch, target)
    except OSError:
        shutil.rmtree(scratch, ignore_errors=True)  # another process finished the same build first
        if not (target / BUILD_FILE).exists():
            raise
    return stats


BUILDING = ".building-"


def building_prefix() -> str:
    """The name start of a build's scratch folder: it names the host and the process building it, so that a
    later build can tell a killed build's leftover (:func:`remove_abandoned_builds`) from one still running."""
    return f"{BUILDING}{socket.gethostname()}-{os.getpid()}-"


def remove_abandoned_builds(folder: Path) -> list[Path]:
    """Remove the scratch folders in ``folder`` of builds killed before they could clean up (SIGKILL, power
    loss): those of this host whose process is gone, and those from before scratch folders named their process.
    Returns what was removed."""
    host = socket.gethostname()
    removed = []
    for scratch in folder.glob(BUILDING + "*"):
        owner = scratch.name[len(BUILDING):].rsplit("-", 2)  # host, pid, mkdtemp's suffix
        named = len(owner) == 3 and owner[1].isdigit()
        if named and (owner[0] != host or _process_alive(int(owner[1]))):
            continue
        shutil.rmtree(scratch, ignore_errors=True)
        removed.append(scratch)
    return removed


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's
        return True
    return True


def store_problem(target: Path) -> str | None:
    """What is wrong with the built store in ``target`` (``build.json`` unreadable, a store file missing,
    resized or changed), or ``None``."""
    try:
        recorded = json.loads((target / BUILD_FILE).read_text(encoding="utf-8")).get("integrity")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return f"{target / BUILD_FILE} cannot be read"
    return files_problem(target / "store", recorded)


def ensure_built(target: Path, build: Callable[[Path, bool], dict], force: bool = False,
                 rebuild: str | None = None) -> Path:
    """``target/store``, built first with ``build(target, force)`` if missing (or if ``force``), and checked
    against its integrity record: a damaged store raises :class:`DamagedOutput` naming the file and ``rebuild``,
    the command that rebuilds it (default: delete the folder; it is rebuilt on first use). A store built before
    stores had a record is rebuilt."""
    if force or not (target / BUILD_FILE).exists():
        build(target, force)
    elif store_problem(target) == NO_RECORD:
        build(target, True)
    problem = store_problem(target)
    if problem:
        raise DamagedOutput("KG store", target / "store", problem, rebuild or f"rm -rf '{target}'",
                            "" if rebuild else REBUILT_ON_USE)
    return target / "store"


def turtle_store(name: str, turtle: Path) -> Path:
    """A pyoxigraph store of one Turtle file (``cache_dir()/kg/<name>-<hash>/store``; the hash covers the file and
    the pyoxigraph version), built on first use (by :func:`install_store`, like every other store): a hand-written
    fixture to serve with ``oxigraph serve-read-only`` (:func:`sparqlab.engines.oxigraph_server.serve_store`) as a
    stand-in endpoint of a KG too large to bundle."""
    import pyoxigraph

    from sparqlab.core.paths import cache_dir

    def fill(store: Any) -> dict:
        store.bulk_load(path=str(turtle), format=pyoxigraph.RdfFormat.TURTLE)
        return {"triples": len(store)}

    digest = hashlib.sha256(turtle.read_bytes() + pyoxigraph.__version__.encode()).hexdigest()[:16]
    target = cache_dir() / "kg" / f"{name}-{digest}"
    if not (target / "store").is_dir():
        install_store(target, fill)
    return target / "store"
