"""JSON Lines: reading line by line with every damaged line named (file, line number, what is wrong), and
tolerating only the torn last line a run killed mid-write leaves.

:func:`decode_line` is the one place a line's bytes become an object (UTF-8, JSON, nesting, an object, no lone
surrogate); :func:`scan_jsonl` reads a whole file into the usable records and the damaged lines (a caller decides
what to do with them: resume redoes their questions, a listing names them); :func:`read_jsonl` is the strict
reader for code that needs every line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparqlab.core.files import atomic_write
from sparqlab.core.text import lone_surrogate

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
"""A ``\\uD800``-``\\uDFFF`` escape: the only way JSON read from UTF-8 bytes (which cannot encode a surrogate) holds
one, so a line without it is not searched value by value (that walk was most of reading a run's predictions)."""

_KINDS = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean",
          type(None): "null"}


class LineProblem(ValueError):
    """What is wrong with one line (the caller adds where it is)."""


def decode_line(raw: bytes) -> dict[str, Any]:
    """One line's bytes as a JSON object; :class:`LineProblem` saying what is wrong: bytes that are not UTF-8
    (byte and column), invalid JSON, nesting too deep for the parser, a value that is not an object, a lone
    surrogate (which no UTF-8 file can hold as text)."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise LineProblem(f"not UTF-8 (byte 0x{raw[error.start]:02x} at column {error.start + 1})") from None
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise LineProblem(f"not valid JSON ({error.msg})") from None
    except RecursionError:
        raise LineProblem("JSON nested too deeply to read") from None
    if not isinstance(record, dict):
        raise LineProblem(f"expected a JSON object, got {_KINDS.get(type(record), type(record).__name__)}")
    surrogate = lone_surrogate(record) if _SURROGATE_ESCAPE.search(raw) else None
    if surrogate:
        raise LineProblem(f"{surrogate} is a lone UTF-16 surrogate, which is not text")
    return record


@dataclass(frozen=True)
class DamagedLine:
    """A line that cannot be used: where it is, what is wrong, its raw bytes and, when it names one, its id."""

    path: Path
    number: int
    problem: str
    raw: bytes = field(default=b"", repr=False)
    record_id: str | None = None

    def __str__(self) -> str:
        return f"{self.path}:{self.number}: {self.problem}"


@dataclass
class JsonlScan:
    """A file read line by line: the usable ``records`` (with their line ``numbers``), the ``damaged`` lines,
    and the ``torn`` last line (bytes without a final newline that are not a whole object), if any."""

    records: list[dict[str, Any]] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    damaged: list[DamagedLine] = field(default_factory=list)
    torn: bytes = b""


def scan_jsonl(path: str | Path, check: Callable[[dict[str, Any]], str | None] | None = None) -> JsonlScan:
    """Read every line of ``path`` (absent: nothing). A line is damaged when :func:`decode_line` refuses it or
    ``check(record)`` returns a problem; a last line without its newline that does not decode is ``torn`` (a
    write cut short), not damaged."""
    path = Path(path)
    scan = JsonlScan()
    if not path.exists():
        return scan
    lines = path.read_bytes().split(b"\n")
    last = len(lines)
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            record = decode_line(raw)
        except LineProblem as problem:
            if number == last:  # no newline after it: the process died while writing it
                scan.torn = raw
            else:
                scan.damaged.append(DamagedLine(path, number, str(problem), raw))
            continue
        trouble = check(record) if check else None
        if trouble:
            ident = record.get("id")
            scan.damaged.append(DamagedLine(path, number, trouble, raw, ident if isinstance(ident, str) else None))
            continue
        scan.records.append(record)
        scan.numbers.append(number)
    return scan


def read_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    """Yield each JSON object of ``path``; a torn last line (a crash mid-write) is skipped, any other damaged line
    raises a ValueError naming the file, the line and what is wrong."""
    scan = scan_jsonl(path)
    if scan.damaged:
        raise ValueError(str(scan.damaged[0]))
    yield from scan.records


def write_jsonl(path: str | Path, records: Iterable[dict[str, Any]]) -> None:
    """Write ``records`` as JSON Lines, replacing the file atomically (no half-written file on a full disk)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, (json.dumps(record, ensure_ascii=False) + "\n" for record in records))
