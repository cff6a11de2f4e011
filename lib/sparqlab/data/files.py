"""The workbench's own question format: JSON Lines, one :meth:`Question.to_dict` per line.

Any command that takes a dataset name also takes a path to such a file (or to a folder of ``<split>.jsonl``
files), so a researcher can run methods on questions of their own without writing a loader.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from sparqlab.core.jsonl import write_jsonl
from sparqlab.data.question import Question


def read_records(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a JSON Lines input file.

    Strict, unlike :func:`sparqlab.core.jsonl.read_jsonl` (which skips a torn last line of a run's own output):
    a question file is input, and a line that does not parse must stop the load, not silently drop a question.
    """
    path = require_file(path)
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}, line {number}: not valid JSON ({error.msg})") from None
            if not isinstance(record, dict):
                raise ValueError(f"{path}, line {number}: expected a JSON object, got {type(record).__name__}")
            yield number, record


def read_questions(path: str | Path) -> list[Question]:
    """All questions of one own-format JSONL file; a bad line raises with its number and what is wrong."""
    questions = []
    for number, record in read_records(path):
        try:
            questions.append(Question.from_dict(record))
        except (TypeError, ValueError) as error:
            raise ValueError(f"{path}, line {number}: {error}") from None
    return questions


def write_questions(path: str | Path, questions: Iterable[Question]) -> None:
    """Write questions in the own format (replacing the file)."""
    write_jsonl(path, (question.to_dict() for question in questions))


def require_file(path: str | Path) -> Path:
    """``path`` as a Path, or a FileNotFoundError that says where bundled data is documented."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"no such data file: {path} (bundled benchmarks are described in data/*/PROVENANCE.md)"
        )
    return path
