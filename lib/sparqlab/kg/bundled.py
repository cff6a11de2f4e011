"""Building a bundled KG's embedded store once, safely: shared by the movie KG and CK25.

A builder fills a fresh pyoxigraph store in a temporary folder beside the target, writes ``build.json`` (its
counts, the build time, the pyoxigraph version) and renames the folder into place, so an interrupted build
leaves nothing half-built in the cache and two processes racing on the same build both end with one store.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def install_store(target: Path, fill: Callable[[Any], dict], force: bool = False) -> dict:
    """Create ``target/store`` with ``fill(store)`` (which loads the data and returns its counts) and
    ``target/build.json``; returns the counts with ``build_seconds`` and ``pyoxigraph`` added."""
    import pyoxigraph

    start = time.perf_counter()
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".building-", dir=target.parent))
    try:
        scratch.chmod(0o755)  # mkdtemp's 0700 would hide the store from other users of a shared cache
        store = pyoxigraph.Store(str(scratch / "store"))
        stats = fill(store)
        store.flush()
        del store
        gc.collect()
        stats["build_seconds"] = round(time.perf_counter() - start, 2)
        stats["pyoxigraph"] = pyoxigraph.__version__
        (scratch / "build.json").write_text(json.dumps(stats, indent=2) + "\n", encoding="utf-8")
    except BaseException:  # an interrupted build leaves no half-built store in the cache
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    if force and target.exists():
        shutil.rmtree(target)
    try:
        os.rename(scratch, target)
    except OSError:
        shutil.rmtree(scratch, ignore_errors=True)  # another process finished the same build first
        if not (target / "build.json").exists():
            raise
    return stats


def ensure_built(target: Path, build: Callable[[Path, bool], dict], force: bool = False) -> Path:
    """``target/store``, built first with ``build(target, force)`` if missing (or if ``force``)."""
    if not (target / "build.json").exists() or force:
        build(target, force)
    return target / "store"


def turtle_store(name: str, turtle: Path) -> Path:
    """A pyoxigraph store of one Turtle file (``cache_dir()/kg/<name>-<hash>/store``; the hash covers the file and
    the pyoxigraph version), built on first use: a hand-written fixture to serve with ``oxigraph serve-read-only``
    (:func:`sparqlab.kg.server.serve_store`) as a stand-in endpoint of a KG too large to bundle."""
    import hashlib

    import pyoxigraph

    from sparqlab.core.paths import cache_dir

    digest = hashlib.sha256(turtle.read_bytes() + pyoxigraph.__version__.encode()).hexdigest()[:16]
    target = cache_dir() / "kg" / f"{name}-{digest}"
    if not (target / "store").is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".building-", dir=target.parent))
        store = pyoxigraph.Store(str(scratch / "store"))
        store.bulk_load(path=str(turtle), format=pyoxigraph.RdfFormat.TURTLE)
        store.flush()
        del store
        try:
            scratch.rename(target)
        except OSError:  # another process built it first
            shutil.rmtree(scratch, ignore_errors=True)
    return target / "store"
