"""Integrity records of build outputs (KG stores, search and schema indexes, KB memories): what a build wrote is
recorded when it is written — every file's size and SHA-256 — and checked before the output is used, so a
truncated, overwritten or hand-edited output is found at open and named, with the command that rebuilds it,
instead of turning into one error per question.

A folder output keeps its record in its own manifest (a store's ``build.json``, a memory's ``memory.json``:
:func:`record_files` / :func:`files_problem`); a single-file output in a ``<file>.integrity.json`` beside it
(:func:`write_sidecar` / :func:`sidecar_problem`). Sizes are compared at every check (one ``stat`` per file);
contents are hashed once per process for each version of a file (device, inode, size, modification time), so
opening the same output again costs only the stats (``benchmarks/integrity_cost.py`` measures both).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sparqlab.core.errors import InfrastructureError
from sparqlab.core.files import atomic_write

SIDECAR_SUFFIX = ".integrity.json"
"""The record of a single-file output, beside it."""

_CHUNK = 1 << 20
_digests: dict[tuple, str] = {}
_digests_lock = threading.Lock()


NO_RECORD = "it has no integrity record (written by an older sparqlab, or its record was lost)"
"""The problem of an output without a record (:func:`files_problem`)."""

REBUILT_ON_USE = " (the next use builds it again)"
"""What follows a command that only deletes an output its next use rebuilds."""


class RebuiltOutputWarning(UserWarning):
    """A damaged output that is cheap to recompute (a search index, a schema index) was found and rebuilt."""


class DamagedOutput(InfrastructureError):
    """A build output does not match what its build recorded (or has no record). ``what`` names the kind of
    output, ``path`` the file or folder, ``problem`` what differs, ``rebuild`` the command that rebuilds it and
    ``after`` what the message says after the command (e.g. :data:`REBUILT_ON_USE`)."""

    def __init__(self, what: str, path: Path, problem: str, rebuild: str, after: str = ""):
        self.what, self.path, self.problem, self.rebuild = what, Path(path), problem, rebuild
        super().__init__(f"the {what} {path} is damaged: {problem}. Nothing was read from it; rebuild it with "
                         f"`{rebuild}`{after}")


def file_digest(path: Path) -> str:
    """SHA-256 of a file's content, computed once per process for each version of the file."""
    stat = path.stat()
    key = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    with _digests_lock:
        known = _digests.get(key)
    if known is not None:
        return known
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    with _digests_lock:
        _digests[key] = digest.hexdigest()
    return _digests[key]


def file_record(path: Path) -> dict[str, Any]:
    """``{"size", "sha256"}`` of one file."""
    return {"size": path.stat().st_size, "sha256": file_digest(path)}


def record_files(folder: Path, names: Iterable[str] | None = None,
                 skip: tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    """``{name: {"size", "sha256"}}`` for ``names`` in ``folder`` (default: every file in it, except names
    starting with one of ``skip``)."""
    folder = Path(folder)
    if names is None:
        names = [p.name for p in folder.iterdir() if p.is_file() and not p.name.startswith(skip)]
    return {name: file_record(folder / name) for name in sorted(names)}


def files_problem(folder: Path, recorded: Any) -> str | None:
    """What differs between ``folder`` and its record (a missing file, a size, a content digest), or ``None``."""
    if not isinstance(recorded, dict) or not recorded:
        return NO_RECORD
    for name, entry in sorted(recorded.items()):
        path = Path(folder) / name
        if not isinstance(entry, dict) or not {"size", "sha256"} <= set(entry):
            return f"the record of {name} is damaged"
        if not path.is_file():
            return f"{name} is missing"
        size = path.stat().st_size
        if size != entry["size"]:
            return f"{name} is {size:,} bytes, its build wrote {entry['size']:,}"
    for name, entry in sorted(recorded.items()):  # contents only once every size matched: the cheap check first
        if file_digest(Path(folder) / name) != entry["sha256"]:
            return f"the content of {name} differs from what its build wrote (SHA-256)"
    return None


def sidecar_path(path: Path) -> Path:
    return path.with_name(path.name + SIDECAR_SUFFIX)


def write_sidecar(path: Path) -> None:
    """Record ``path``'s size and digest beside it (atomically: a reader sees the old record or the new; two
    writers each write a scratch file of their own)."""
    atomic_write(sidecar_path(path), json.dumps({path.name: file_record(path)}) + "\n")


def sidecar_problem(path: Path) -> str | None:
    """What differs between ``path`` and the record beside it, or ``None`` (a missing or unreadable record is
    a problem too)."""
    try:
        recorded = json.loads(sidecar_path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        recorded = None
    except (OSError, UnicodeDecodeError, ValueError):
        return f"its integrity record {sidecar_path(path)} cannot be read"
    if not isinstance(recorded, dict) or set(recorded) != {path.name}:
        return files_problem(path.parent, None)
    return files_problem(path.parent, recorded)
