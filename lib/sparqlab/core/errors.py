"""The one family of errors that say the machinery failed, not the method: :class:`InfrastructureError`.

A question's outcome is the method's own (its query, its parse failure, the KG's answer to its query) or the
question is not done. A full disk, a broken cache, a model server that keeps failing or answers garbage, a missing
dependency, a crashing scorer would fail every later question the same way, and none of them says anything about
the method: the run stops (what is finished stays saved), the command exits non-zero with one line naming the
cause and the file or URL, and the rerun answers those questions. Any layer raises a subclass (or lets
:func:`as_infrastructure` recognise an operating-system or import failure); the runner never records one as an
answer.
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path


class InfrastructureError(Exception):
    """The machinery around a method failed (disk, cache, model server, KG service, dependency, scorer): never a
    question's answer. Its message names the cause and the file or URL."""

    kind = "infrastructure_error"


class StorageFull(InfrastructureError):
    """A file could not be written: the disk (or quota) is full, read-only, or failing. ``path`` names it."""

    kind = "storage_error"

    def __init__(self, path: str | Path | None, error: BaseException):
        self.path = None if path is None else Path(path)
        where = f"cannot write {self.path}" if self.path else "cannot write a file"
        super().__init__(f"{where}: {error_reason(error)}; free space there or make it writable (or point the "
                         "folder elsewhere) and rerun — nothing there needs deleting")


class MissingDependency(InfrastructureError):
    """A package the method needs is not installed (an ``ImportError`` raised while answering)."""

    kind = "missing_dependency"


class ScorerFailed(InfrastructureError):
    """A method's scorer crashed: a bug of the scoring code, not an answer of the method."""

    kind = "scorer_error"


STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.EFBIG})
"""``OSError`` numbers that mean the storage cannot take a write, whatever the question."""

SQLITE_STORAGE_MARKS = ("database or disk is full", "disk i/o error", "attempt to write a readonly database",
                        "unable to open database file")
"""How SQLite words a failure of the storage under a database (``sqlite3.OperationalError``)."""


def error_reason(error: BaseException) -> str:
    """An error's message without Python's ``[Errno N]`` prefix and without the file name (said separately)."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__


def storage_failure(error: BaseException) -> bool:
    """Whether ``error`` says the storage cannot take a write (disk full, quota, read-only, I/O error)."""
    if isinstance(error, OSError):
        return error.errno in STORAGE_ERRNOS
    if isinstance(error, sqlite3.OperationalError):
        return any(mark in str(error).lower() for mark in SQLITE_STORAGE_MARKS)
    return False


def as_infrastructure(error: BaseException, where: str = "") -> InfrastructureError | None:
    """``error`` as an :class:`InfrastructureError` when it is one (or one in disguise: an ``OSError`` of the
    storage, a missing module), else ``None``. ``where`` says what was running (e.g. ``"question q7"``)."""
    if isinstance(error, InfrastructureError):
        return error
    if storage_failure(error):
        return StorageFull(getattr(error, "filename", None), error)
    if isinstance(error, ImportError):
        missing = f"the module {error.name!r}" if error.name else "a module"
        return MissingDependency(f"{where + ': ' if where else ''}{missing} is not installed ({error}); install "
                                 "it (or the extra that provides it) and rerun")
    return None


def stop_if_infrastructure(error: Exception, where: str) -> None:
    """Raise ``error`` as an :class:`InfrastructureError` when it is a failure of the machinery in disguise (a
    full disk, a missing module) so that it stops the run instead of becoming the question's answer."""
    cause = as_infrastructure(error, where)
    if cause is not None:
        raise cause from error
