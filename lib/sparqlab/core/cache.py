"""A file-backed key/value cache shared by the query cache and the model response cache.

SQLite in WAL mode lets many readers and writers (threads, processes, papermill kernels) share one file safely;
each write is its own short transaction, so a crash loses at most the entry being written. Values are JSON.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any


class JsonCache:
    """Persistent mapping ``namespace, key -> JSON value``.

    ``namespace`` separates what shares one file (e.g. one endpoint's results from another's); keys are usually
    :func:`sparqlab.core.hashing.stable_hash` of the full input.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._connect() as conn:
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

    def get(self, namespace: str, key: str) -> Any | None:
        """The stored value, or ``None`` on a miss."""
        row = self._connect().execute(
            "SELECT value FROM entries WHERE namespace = ? AND key = ?", (namespace, key)
        ).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, namespace: str, key: str, value: Any) -> None:
        """Store ``value`` (JSON-serialisable), replacing an older entry."""
        self._connect().execute(
            "INSERT OR REPLACE INTO entries (namespace, key, value) VALUES (?, ?, ?)",
            (namespace, key, json.dumps(value, ensure_ascii=False)),
        )

    def __len__(self) -> int:
        return self._connect().execute("SELECT COUNT(*) FROM entries").fetchone()[0]

    def count(self, namespace: str) -> int:
        """Number of entries in one namespace."""
        return self._connect().execute(
            "SELECT COUNT(*) FROM entries WHERE namespace = ?", (namespace,)
        ).fetchone()[0]
