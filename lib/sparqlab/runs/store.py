"""The results folder of one run: crash-safe appends, resume, and atomic JSON files.

``predictions.jsonl`` is the source of truth for what is finished: a question counts as done once its line is
complete on disk. Each finished question writes its trace line first and its prediction line second, each
flushed and fsynced, so a prediction never exists without its trace. On reopening, a torn last line (the
process died mid-write) is cut off, and trace lines of questions without a prediction (died between the two
writes) are dropped, so the question is redone and nothing is duplicated.

One process at a time may write a folder: an exclusive ``flock`` on ``.lock`` (released by the OS even after
SIGKILL) turns a second concurrent writer into a clear error instead of interleaved lines.

Nothing is written through a link: a folder holding a symbolic link is refused when opened, appends and the lock
open their files with ``O_NOFOLLOW``, and whole files are replaced by renaming a scratch file over them
(:mod:`sparqlab.core.files`).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from sparqlab.core.errors import storage_failure
from sparqlab.core.files import atomic_write, naming_storage_failures, open_appending, refuse_links
from sparqlab.core.jsonl import DamagedLine, read_jsonl, scan_jsonl
from sparqlab.core.text import scrub
from sparqlab.runs.records import infrastructure_failure, prediction_problem, trace_problem

PREDICTIONS = "predictions.jsonl"
TRACES = "traces.jsonl"
CONFIG = "config.json"
ENVIRONMENT = "environment.json"
MANIFEST = "manifest.json"
METRICS = "metrics.json"


DAMAGED_SUFFIX = ".damaged"
"""Damaged lines found on resume are appended, as they were, to ``<file>.damaged`` beside their file."""

SHOWN_DAMAGED_LINES = 20
"""At most this many damaged lines are listed one by one in a warning; the rest are counted."""


class RunInProgressError(RuntimeError):
    """Another process holds the run folder."""


class DamagedLinesWarning(UserWarning):
    """Resume found damaged lines in a run folder, set them aside and will answer their questions again."""


def write_json(path: Path, data: Any) -> None:
    """Replace ``path`` atomically (:func:`~sparqlab.core.files.atomic_write`), so readers never see half a
    file."""
    atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def read_json(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


class RunUnreadable(ValueError):
    """A file of a run folder is missing, cannot be read, or holds an impossible value; the message names the
    file (and the line)."""


def read_document(path: Path) -> dict[str, Any]:
    """A run folder's JSON document (``manifest.json``, ``config.json``, ``metrics.json``) as an object;
    :class:`RunUnreadable` naming the file when it is missing, is not UTF-8 JSON, or is not an object."""
    try:
        data = read_json(path)
    except FileNotFoundError:
        raise RunUnreadable(f"{path} is missing") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        reason = error.msg if isinstance(error, json.JSONDecodeError) else str(error) or type(error).__name__
        raise RunUnreadable(f"{path} cannot be read: {reason}") from None
    if not isinstance(data, dict):
        raise RunUnreadable(f"{path} holds a JSON {type(data).__name__}, not an object")
    return data


def repair_torn_line(path: Path) -> bool:
    """Cut a partial last line (no trailing newline) off ``path``; True if something was cut."""
    if not path.exists():
        return False
    with path.open("rb+") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return False
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return False
        # Scan back in blocks for the last newline; everything after it is the torn line.
        position, keep = size, 0
        while position > 0:
            step = min(65536, position)
            position -= step
            handle.seek(position)
            index = handle.read(step).rfind(b"\n")
            if index >= 0:
                keep = position + index + 1
                break
        handle.truncate(keep)
        handle.flush()
        os.fsync(handle.fileno())
    return True


def _line(record: dict[str, Any]) -> str:
    # A lone surrogate that reached a record by another way than model text (scrubbed in ChatResponse), e.g. an
    # exception message, would make the UTF-8 write fail and abort the run on every resume: it becomes U+FFFD.
    return scrub(json.dumps(record, ensure_ascii=False, default=str)) + "\n"


def first_per_id(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records with each ``id`` once: the first line wins."""
    seen: set[str] = set()
    unique = []
    for record in records:
        if record["id"] not in seen:
            seen.add(record["id"])
            unique.append(record)
    return unique


def _rewrite(path: Path, records: list[dict[str, Any]]) -> None:
    """Replace a JSONL file atomically with ``records``."""
    atomic_write(path, "".join(_line(record) for record in records))


def is_locked(path: Path) -> bool:
    """True while a process holds the run folder ``path`` (it is being written right now)."""
    lock = path / ".lock"
    if not lock.exists():
        return False
    with open_appending(lock, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


@contextlib.contextmanager
def hold_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` (waiting for another holder): what :func:`is_locked` sees for
    ``path.parent`` when ``path`` is its ``.lock``; released by the kernel however the process ends."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open_appending(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def damaged_lines_message(damaged: list[DamagedLine], aside: Path, consequence: str, n_kept: int) -> str:
    """One message naming every damaged line (file, line number, what is wrong; the first
    :data:`SHOWN_DAMAGED_LINES`) and what resume did: set them aside in ``aside``, ``consequence``, kept the
    ``n_kept`` sound lines."""
    shown = [f"  {line}" + (f" (question {line.record_id})" if line.record_id else "")
             for line in damaged[:SHOWN_DAMAGED_LINES]]
    if len(damaged) > SHOWN_DAMAGED_LINES:
        shown.append(f"  ... and {len(damaged) - SHOWN_DAMAGED_LINES} more")
    return (f"{len(damaged)} damaged line{'s' if len(damaged) > 1 else ''} in {damaged[0].path}:\n"
            + "\n".join(shown)
            + f"\nresume moved {'them' if len(damaged) > 1 else 'it'} to {aside} unchanged and keeps the "
              f"other {n_kept} lines; for each damaged line {consequence}")


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every complete line of a JSONL file (a torn last line is ignored, a corrupt earlier line raises)."""
    return list(read_jsonl(path))


class RunStore:
    """Appends and reads one run folder. Use :meth:`open` to lock, repair and learn what is already done."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock_handle = None
        self._predictions = None
        self._traces = None

    @property
    def predictions_path(self) -> Path:
        return self.path / PREDICTIONS

    @property
    def traces_path(self) -> Path:
        return self.path / TRACES

    def open(self, redo_errors: set[str] | frozenset[str] = frozenset()) -> set[str]:
        """Lock the folder, repair torn lines, damaged lines and orphan traces, and return the ids already
        finished.

        Predictions whose ``error_category`` is in ``redo_errors``, and those that record a failure of the
        machinery (:func:`~sparqlab.runs.records.infrastructure_failure`), are removed (with their traces), so that
        those questions are answered again; so are damaged lines (see the module docstring), each named in a
        :class:`DamagedLinesWarning`.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        refuse_links(self.path)
        self._lock()
        repair_torn_line(self.predictions_path)
        repair_torn_line(self.traces_path)
        done = self._keep_predictions(redo_errors)
        self._drop_orphan_traces(done)
        self._predictions = open_appending(self.predictions_path)
        self._traces = open_appending(self.traces_path)
        return done

    def _lock(self) -> None:
        handle = open_appending(self.path / ".lock", "a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise RunInProgressError(
                f"{self.path} is being written by another process; wait for it or stop it first"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self._lock_handle = handle

    def _sound_records(self, path: Path, check: Callable[[dict[str, Any]], str | None],
                       consequence: str) -> tuple[list[dict[str, Any]], bool]:
        """The sound records of ``path``, and whether some line was set aside (damaged lines are moved to
        ``<file>.damaged`` and named in one warning, with what resume does about them: ``consequence``)."""
        scan = scan_jsonl(path, check)
        if scan.damaged:
            aside = path.with_name(path.name + DAMAGED_SUFFIX)
            with open_appending(aside, "ab") as handle:
                handle.writelines(line.raw + b"\n" for line in scan.damaged)
                handle.flush()
                os.fsync(handle.fileno())
            warnings.warn(damaged_lines_message(scan.damaged, aside, consequence, len(scan.records)),
                          DamagedLinesWarning, stacklevel=4)
        return scan.records, bool(scan.damaged)

    def _keep_predictions(self, redo_errors: set[str] | frozenset[str]) -> set[str]:
        """Drop damaged lines, duplicate ids (first line wins) and predictions to redo; return the kept ids."""
        records, damaged = self._sound_records(self.predictions_path, prediction_problem,
                                               "its question is answered again")
        kept = first_per_id(r for r in records if r.get("error_category") not in redo_errors
                            and not infrastructure_failure(r))
        if damaged or len(kept) != len(records):
            _rewrite(self.predictions_path, kept)
        return {r["id"] for r in kept}

    def _drop_orphan_traces(self, done: set[str]) -> None:
        """Keep one trace per finished question; traces of unfinished questions go (they will be redone)."""
        records, damaged = self._sound_records(self.traces_path, trace_problem,
                                               "the trace is lost, its question's prediction is kept")
        kept = first_per_id(r for r in records if r["id"] in done)
        if damaged or len(kept) != len(records):
            _rewrite(self.traces_path, kept)

    def append(self, prediction: dict[str, Any], trace: list[dict[str, Any]]) -> None:
        """Persist one finished question: trace line, then prediction line, each fsynced."""
        self.append_all([(prediction, trace)])

    def append_all(self, finished: Sequence[tuple[dict[str, Any], list[dict[str, Any]]]]) -> None:
        """Persist finished questions (prediction, trace) together: their trace lines, fsynced, then their
        prediction lines, fsynced; each question keeps :meth:`append`'s guarantee (no prediction without its
        trace) for two fsyncs in all."""
        if self._predictions is None:
            raise RuntimeError("RunStore.open() must be called before append()")
        traces = "".join(_line({"id": prediction["id"], "trace": trace}) for prediction, trace in finished)
        predictions = "".join(_line(prediction) for prediction, _ in finished)
        for handle, path, lines in ((self._traces, self.traces_path, traces),
                                    (self._predictions, self.predictions_path, predictions)):
            with naming_storage_failures(path):
                handle.write(lines)
                handle.flush()
                os.fsync(handle.fileno())

    def close(self) -> None:
        for handle in (self._predictions, self._traces, self._lock_handle):
            if handle is not None:
                try:
                    handle.close()
                except OSError as error:  # what is left in its buffer is what a failed append already reported
                    if not storage_failure(error):  # (StorageFull); resume cuts the torn line
                        raise
        self._predictions = self._traces = self._lock_handle = None

    def predictions(self) -> list[dict[str, Any]]:
        return read_records(self.predictions_path)

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class GroupCommit:
    """Appends to a :class:`RunStore` from many coroutines, written off the event loop by one thread in batches:
    what finishes while a batch is being written goes into the next one (:meth:`RunStore.append_all`), so 32
    questions in flight cost a few fsyncs, not two each. ``await append(...)`` returns once that question's lines
    are on disk, or raises what writing them raised."""

    def __init__(self, store: RunStore, thread_name: str = "sparqlab-writer"):
        self.store = store
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix=thread_name)
        self._waiting: list[tuple[dict[str, Any], list[dict[str, Any]], asyncio.Future[None]]] = []
        self._draining: asyncio.Task[None] | None = None

    async def append(self, prediction: dict[str, Any], trace: list[dict[str, Any]]) -> None:
        written = asyncio.get_running_loop().create_future()
        self._waiting.append((prediction, trace, written))
        self._start_draining()
        await written

    def _start_draining(self) -> None:
        if self._waiting and (self._draining is None or self._draining.done()):
            self._draining = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while self._waiting:
            batch, self._waiting = self._waiting, []
            try:
                await loop.run_in_executor(self._writer, self.store.append_all, [(p, t) for p, t, _ in batch])
            except Exception as error:  # noqa: BLE001 - each waiting question's append raises it
                for *_, written in batch:
                    if not written.done():
                        written.set_exception(error)
            else:
                for *_, written in batch:
                    if not written.done():  # its waiter may have been cancelled: the lines are written anyway
                        written.set_result(None)

    async def close(self) -> None:
        """Write what is still waiting (questions whose coroutine was cancelled meanwhile included: they are
        finished), then stop the thread."""
        self._start_draining()
        try:
            if self._draining is not None:
                await self._draining
        finally:
            self._writer.shutdown(wait=True)
