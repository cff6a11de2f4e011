"""The workbench's own question format: JSON Lines, one :meth:`Question.to_dict` per line.

Any command that takes a dataset name also takes a path to such a file (or to a folder of ``<split>.jsonl``
files), so a researcher can run methods on questions of their own without writing a loader.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from sparqlab.core.jsonl import LineProblem, decode_line, write_jsonl
from sparqlab.data.question import Question
from sparqlab.eval.metrics import check_answers


def read_records(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a JSON Lines input file.

    Strict, unlike :func:`sparqlab.core.jsonl.read_jsonl` (which skips a torn last line of a run's own output):
    a question file is input, and a line that does not parse must stop the load, not silently drop a question.
    Every refusal names the file and line: bytes that are not UTF-8, invalid JSON (a torn last line included),
    nesting too deep for the JSON parser, a value that is not an object, a lone surrogate.
    """
    path = require_file(path)
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                record = decode_line(raw)
            except LineProblem as problem:
                hint = ""
                if str(problem).startswith("not UTF-8"):
                    hint = "; save the file as UTF-8"
                elif str(problem).startswith("not valid JSON") and not raw.endswith(b"\n"):
                    hint = " (the line is cut off: was the file still being written?)"
                raise ValueError(f"{path}, line {number}: {problem}{hint}") from None
            yield number, record


def read_questions(path: str | Path) -> list[Question]:
    """All questions of one own-format JSONL file; a bad line raises with its number and what is wrong, and so
    does a file without questions. ``gold_answers`` are checked element by element
    (:func:`sparqlab.eval.metrics.check_answers`)."""
    questions = []
    for number, record in read_records(path):
        try:
            question = Question.from_dict(record)
            check_answers(question.gold_answers, "gold_answers")
            questions.append(question)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{path}, line {number}: {error}") from None
    if not questions:
        raise ValueError(f"{path} holds no questions (expected one JSON object per line with at least "
                         "'id' and 'text')")
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
