"""Writing files safely: every output replaced whole, and nothing written through a link.

:func:`atomic_write` writes a scratch file of its own beside the target (``mkstemp``: a name nobody else can have
planted a link under), fsyncs it and renames it over the target, so a reader, an interrupted process or a full
disk never leaves half a file under the target's name; a failure of the storage is :class:`StorageFull` naming
the target, and the scratch file is removed. The rename replaces a link at the target instead of writing where
it points. :func:`open_appending` opens a file for appending or locking without following a link
(``O_NOFOLLOW``), and :func:`refuse_links` refuses a folder holding one, so a planted ``predictions.jsonl`` or
``.lock`` link (a shared group-writable ``runs/``, an unpacked archive) cannot make the workbench write outside
the folder.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from sparqlab.core.errors import StorageFull, storage_failure


class LinkRefused(ValueError):
    """A file the workbench writes is a symbolic link: it is not written through (the message names it)."""


@contextlib.contextmanager
def naming_storage_failures(path: Path) -> Iterator[None]:
    """Turn a write that fails for lack of storage (disk full, quota, read-only) into :class:`StorageFull` naming
    ``path``: Python's own message ("No space left on device") names no file when the write goes to an open
    handle."""
    try:
        yield
    except OSError as error:
        if storage_failure(error):
            raise StorageFull(path, error) from None
        raise


def atomic_write(path: str | Path, data: bytes | str | Iterable[bytes | str]) -> Path:
    """Replace ``path`` with ``data`` (text is written as UTF-8; an iterable of chunks is streamed) atomically: a
    reader sees the old file or the new one, never part of one; a failed write leaves the old file (or none) and
    no scratch file. Returns ``path``."""
    path = Path(path)
    chunks = [data] if isinstance(data, bytes | str) else data
    with naming_storage_failures(path):
        handle, scratch = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(handle, "wb") as out:
                for chunk in chunks:
                    out.write(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(scratch, 0o644)  # mkstemp's 0600 would hide the output from the other users of a shared folder
            os.replace(scratch, path)
        except BaseException:
            Path(scratch).unlink(missing_ok=True)
            raise
    return path


def open_appending(path: Path, mode: str = "a", encoding: str | None = "utf-8"):
    """``path`` opened for appending (``a`` / ``ab``) or for a lock (``a+``), created when absent, never through a
    symbolic link: :class:`LinkRefused` naming it instead."""
    flags = os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_RDWR if "+" in mode else os.O_WRONLY)
    try:
        descriptor = os.open(path, flags, 0o666)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise LinkRefused(_link_message(path)) from None
        raise
    return os.fdopen(descriptor, mode, encoding=None if "b" in mode else encoding)


def refuse_links(folder: Path) -> None:
    """Refuse ``folder`` when it, or a file in it, is a symbolic link (:class:`LinkRefused` naming the first)."""
    if folder.is_symlink():
        raise LinkRefused(_link_message(folder))
    if folder.is_dir():
        link = next((entry for entry in sorted(folder.iterdir()) if entry.is_symlink()), None)
        if link is not None:
            raise LinkRefused(_link_message(link))


def _link_message(path: Path) -> str:
    return (f"{path} is a symbolic link (to {os.readlink(path)}); a run folder's files are written only in place, "
            "never through a link: replace the link with the file itself or remove it")
