"""The workbench's own question format: JSON Lines, one :meth:`Question.to_dict` per line.

Any command that takes a dataset name also takes a path to such a file (or to a folder of ``<split>.jsonl``
files), so a researcher can run methods on questions of their own without writing a loader.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from sparqlab.core.jsonl import read_jsonl, write_jsonl
from sparqlab.data.question import Question


def read_questions(path: str | Path) -> list[Question]:
    """All questions of one own-format JSONL file; a line without ``id``/``text`` raises with its number."""
    path = require_file(path)
    questions = []
    for number, record in enumerate(read_jsonl(path), start=1):
        try:
            questions.append(Question.from_dict(record))
        except (TypeError, ValueError) as error:
            raise ValueError(f"{path}: record {number}: {error}") from None
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
