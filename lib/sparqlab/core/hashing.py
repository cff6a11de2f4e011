"""Stable content hashes: cache keys and run ids must not change between processes or machines."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace, so equal values always serialise to equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def stable_hash(value: Any, length: int = 16) -> str:
    """Hex SHA-256 prefix of the canonical JSON of ``value``."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()[:length]


def id_set_record(ids: Any) -> dict[str, Any]:
    """How a training record names a set of question ids: their count and a digest of the sorted ids (equal sets
    give equal digests whatever their order)."""
    ids = sorted(str(i) for i in ids)
    return {"count": len(ids), "digest": stable_hash(ids, 16)}


_FILE_DIGESTS: dict[tuple[str, int, int], str] = {}


def file_digest(path: str | Path, length: int = 64) -> str:
    """Hex SHA-256 (prefix) of a file's bytes, read in chunks; kept per process by (path, size, mtime), so opening
    the same unchanged file again costs a ``stat`` and an edited file is hashed anew."""
    path = Path(path).resolve()
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _FILE_DIGESTS:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        _FILE_DIGESTS[key] = digest.hexdigest()
    return _FILE_DIGESTS[key][:length]


STORE_BOOKKEEPING = ("LOG", "LOCK")
"""Name prefixes of files a store writes whenever it is opened (logs, the lock), not part of its content."""


def store_digest(path: str | Path, length: int = 16) -> str:
    """A cheap content digest of a store folder: the relative names and sizes of its files (a RocksDB store
    writes new, numbered files when its content changes), bookkeeping files left out."""
    root = Path(path)
    files = sorted((str(p.relative_to(root)), p.stat().st_size) for p in root.rglob("*")
                   if p.is_file() and not p.name.startswith(STORE_BOOKKEEPING))
    return stable_hash(files, length)
