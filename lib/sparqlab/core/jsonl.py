"""JSON Lines helpers that tolerate a torn last line (a run killed mid-write)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


def read_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    """Yield each complete JSON object; a truncated final line (from a crash) is skipped, not raised."""
    path = Path(path)
    if not path.exists():
        return
    with path.open(encoding="utf-8") as handle:
        lines = handle.readlines()
    for number, line in enumerate(lines, start=1):
        line = line.strip()
        if not line:
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                return
            raise ValueError(f"{path}:{number}: not valid JSON") from None


def write_jsonl(path: str | Path, records: Iterable[dict[str, Any]]) -> None:
    """Write ``records`` as JSON Lines, replacing the file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
