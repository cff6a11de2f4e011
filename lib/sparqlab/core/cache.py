"""A file-backed key/value cache shared by the query cache and the model response cache.

SQLite in WAL mode lets many readers and writers (threads, processes, papermill kernels) share one file safely;
each write is its own short transaction, so a crash loses at most the entry being written. Values are JSON.

A damaged file must never turn into wrong results: opening runs SQLite's ``quick_check`` over the whole file, and
every read treats a database error or a value that is not JSON as corruption too. What happens then is the
owner's choice (``rebuild``): a cache of recomputable entries (the query cache) is moved aside and started empty,
with a warning naming both files; one whose entries may be irreplaceable (model responses from a GPU run) raises
:class:`CacheCorrupt`, naming the file and the command that clears it.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sparqlab.core.errors import InfrastructureError, StorageFull, storage_failure

_SIDE_FILES = ("-wal", "-shm")


class CacheCorrupt(InfrastructureError):
    """A cache file is damaged. Never a per-question error: every later read of the file would be suspect."""


def clear_command(path: Path) -> str:
    """The shell command that deletes a cache file with its WAL side files."""
    return "rm -f " + " ".join(f"'{path}{suffix}'" for suffix in ("", *_SIDE_FILES))


class JsonCache:
    """Persistent mapping ``namespace, key -> JSON value``.

    ``namespace`` separates what shares one file (e.g. one endpoint's results from another's); keys are usually
    :func:`sparqlab.core.hashing.stable_hash` of the full input. ``rebuild``: on a corrupt file found at open,
    move it aside and start empty (``True``) or raise :class:`CacheCorrupt` (``False``, the default).
    """

    def __init__(self, path: str | Path, *, rebuild: bool = False):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        problem = self._check()
        if problem and not rebuild:
            raise self._corrupt(problem)
        if problem:
            aside = self._move_aside()
            warnings.warn(f"the cache {self.path} was corrupt ({problem}); it was moved to {aside} and a new, "
                          "empty cache started in its place (its entries will be recomputed)", stacklevel=2)
        with self._guarded():
            conn = self._connect()
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS entries ("
                " namespace TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
                " PRIMARY KEY (namespace, key))"
            )

    def _connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout=60000")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def _check(self) -> str | None:
        """``None`` if the file is absent or passes ``quick_check``, else what is wrong; :class:`StorageFull`
        when the file's folder cannot be written (read-only, full), which says nothing about its content."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            return None
        try:
            conn = sqlite3.connect(self.path, timeout=60)
            try:
                rows = conn.execute("PRAGMA quick_check").fetchall()
            finally:
                conn.close()
        except sqlite3.DatabaseError as error:
            if storage_failure(error):  # a read-only or full folder is not a damaged file: never advise deleting it
                raise StorageFull(self.path, error) from None
            return str(error)
        found = [row[0] for row in rows]
        return None if found == ["ok"] else "; ".join(found[:3])

    def _move_aside(self) -> Path:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        for suffix in ("", *_SIDE_FILES):
            source = Path(f"{self.path}{suffix}")
            if source.exists():
                source.replace(f"{aside}{suffix}")
        return aside

    def _corrupt(self, problem: str) -> CacheCorrupt:
        return CacheCorrupt(
            f"the cache {self.path} is corrupt ({problem}). Its entries cannot be trusted, so nothing was read "
            f"from it. Delete it (`{clear_command(self.path)}`) or move it aside, then rerun; the entries are "
            "recomputed (model responses need the model endpoint again)."
        )

    @contextlib.contextmanager
    def _guarded(self) -> Iterator[None]:
        """Turn SQLite's damage errors and undecodable values into :class:`CacheCorrupt` naming the file, and a
        disk that cannot take the write (full, read-only, failing) into :class:`StorageFull` naming it."""
        try:
            yield
        except (sqlite3.DatabaseError, UnicodeDecodeError, json.JSONDecodeError) as error:
            if storage_failure(error):
                raise StorageFull(self.path, error) from None
            damage = not isinstance(error, sqlite3.OperationalError) or "malformed" in str(error)
            if not damage:  # locked: not the file's content
                raise
            raise self._corrupt(f"{type(error).__name__}: {error}") from None

    def get(self, namespace: str, key: str) -> Any | None:
        """The stored value, or ``None`` on a miss."""
        with self._guarded():
            row = self._connect().execute(
                "SELECT value FROM entries WHERE namespace = ? AND key = ?", (namespace, key)
            ).fetchone()
            return None if row is None else json.loads(row[0])

    def put(self, namespace: str, key: str, value: Any) -> None:
        """Store ``value`` (JSON-serialisable), replacing an older entry."""
        text = json.dumps(value, ensure_ascii=False)
        with self._guarded():
            self._connect().execute(
                "INSERT OR REPLACE INTO entries (namespace, key, value) VALUES (?, ?, ?)", (namespace, key, text)
            )

    def __len__(self) -> int:
        with self._guarded():
            return self._connect().execute("SELECT COUNT(*) FROM entries").fetchone()[0]

    def count(self, namespace: str) -> int:
        """Number of entries in one namespace."""
        with self._guarded():
            return self._connect().execute(
                "SELECT COUNT(*) FROM entries WHERE namespace = ?", (namespace,)
            ).fetchone()[0]


