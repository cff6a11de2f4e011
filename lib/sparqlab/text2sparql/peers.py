"""Peers' published outputs as per-question records: a small registry of converters, one per output format.

A converter reads one file another system wrote and returns a :class:`PeerAnswer` per question, keyed by the
official qname (``{prefix}:{id}-{language}``; for a dataset that is no TEXT2SPARQL edition, ``prefix=None``, by the
file's own key, which an id map turns into the dataset's question ids: :func:`apply_id_map`), with what the file says about how the answer came about: the final
query, the seconds it took, the conversation (OpenAI chat schema, tool calls included) and its model and tool
calls. They feed ``sparqlab import`` (a run folder whose final queries are executed and scored like every method's,
the conversation kept in the traces) and ``sparqlab leaderboard --answers`` (a row beside the published teams).

Formats (:data:`CONVERTERS`):

- ``grasp``: GRASP's output JSONL (``grasp file``; data/peers/grasp/): one line per question with ``id`` (the
  question number of the edition's questions file), ``sparql`` (null when GRASP gave none), ``elapsed``,
  ``error`` and ``messages``;
- ``answers``: the official client's ``ask`` output (:func:`sparqlab.text2sparql.editions.read_answers`), which any
  TEXT2SPARQL system's organisers' run produces; no times or conversation;
- ``sparql-llm``: SPARQL-LLM answers the challenge through its TEXT2SPARQL endpoint, so what it publishes is the
  official client's answers file; its queries open with a ``#+ endpoint:`` comment, which stays (a comment).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparqlab.core.typed import Range, check_range, coerce
from sparqlab.data.files import read_records, require_file
from sparqlab.text2sparql.editions import qname, read_answers


@dataclass(frozen=True)
class PeerAnswer:
    """One question as a peer's output file records it."""

    qname: str
    query: str | None
    question: str | None = None
    elapsed_s: float | None = None
    error: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def model_calls(self) -> int:
        """The assistant turns of the conversation (one model call each)."""
        return sum(1 for m in self.messages if m.get("role") == "assistant")

    @property
    def tool_calls(self) -> int:
        """The tool calls the model made (OpenAI ``tool_calls`` of the assistant turns)."""
        return sum(len(m.get("tool_calls") or []) for m in self.messages if m.get("role") == "assistant")


Converter = Callable[[Path, str | None, str], list[PeerAnswer]]
"""``converter(path, prefix, language) -> answers`` (``prefix=None``: keyed by the file's own question keys)."""


GRASP_FIELDS = {"sparql": str | None, "elapsed": float | None, "error": str | None,
                "questions": list[str] | None, "messages": list[dict[str, Any]]}
"""The fields of a GRASP output line that become a :class:`PeerAnswer`, with their types."""

ELAPSED_RANGE = Range(ge=0, le=365 * 86400)
"""Seconds a peer took for one question (at most a year): a negative time, or one that overflows when a listing
averages it (``1e308``), is a damaged file."""


def grasp_output(path: Path, prefix: str | None, language: str) -> list[PeerAnswer]:
    """GRASP's output JSONL (see the module docstring); a line without ``id``, with a field of another type
    (:data:`GRASP_FIELDS`: ``messages`` a list of chat-message objects) or an ``elapsed`` that is not a finite
    number of seconds >= 0 is an error naming the file and line, before any question is answered."""
    answers = []
    for line, record in read_records(path):
        where = f"{path}, line {line}: not a GRASP output:"
        if not isinstance(record.get("id"), str | int) or isinstance(record.get("id"), bool):
            raise ValueError(f"{where} it needs an 'id', the question number")
        values = {name: coerce(record.get(name), kind, f"{where} {name}") for name, kind in GRASP_FIELDS.items()}
        check_range(values["elapsed"], ELAPSED_RANGE, f"{where} elapsed")
        questions = values["questions"] or [None]
        key = qname(prefix, record["id"], language) if prefix else str(record["id"])
        answers.append(PeerAnswer(key, values["sparql"] or None,
                                  questions[-1], values["elapsed"], values["error"] or None, values["messages"]))
    return answers


def official_answers(path: Path, prefix: str | None, language: str) -> list[PeerAnswer]:
    """The official client's answers file; its qnames must be of the dataset asked for (``prefix``; ``None``: any
    keys, mapped to question ids by the caller)."""
    answers = [PeerAnswer(entry["qname"], entry.get("query") or None, entry.get("question"))
               for entry in read_answers(path)]
    foreign = sorted({a.qname for a in answers if prefix and a.qname.partition(":")[0] != prefix})
    if foreign:
        raise ValueError(f"{path} answers qnames of another dataset than {prefix} ({', '.join(foreign[:3])})")
    return answers


CONVERTERS: dict[str, Converter] = {"grasp": grasp_output, "answers": official_answers,
                                    "sparql-llm": official_answers}


def detect_format(path: Path) -> str:
    """``grasp`` for a JSONL file, ``answers`` for a JSON list."""
    return "grasp" if path.suffix == ".jsonl" else "answers"


def read_peer_output(path: str | Path, output_format: str | None = None, *, prefix: str | None,
                     language: str = "en") -> list[PeerAnswer]:
    """The answers of one peer output file in ``output_format`` (``None``: by file name, :func:`detect_format`)
    for the dataset with qname prefix ``prefix`` (``None``: a dataset that is no TEXT2SPARQL edition; the answers
    keep the file's keys). An unknown format or a question answered twice is an error naming the file."""
    path = require_file(path)
    output_format = output_format or detect_format(path)
    if output_format not in CONVERTERS:
        raise ValueError(f"unknown peer output format {output_format!r} for {path}; known: {', '.join(CONVERTERS)}")
    answers = CONVERTERS[output_format](path, prefix, language)
    seen: set[str] = set()
    twice = sorted({a.qname for a in answers if a.qname in seen or seen.add(a.qname)})
    if twice:
        raise ValueError(f"{path} answers {', '.join(twice[:5])} more than once")
    return answers


def apply_id_map(answers: Sequence[PeerAnswer], id_map: str | Path) -> list[PeerAnswer]:
    """The answers keyed by the question ids ``id_map`` gives for their keys: a JSON object ``{file key:
    question id}``, for a dataset whose ids the peer's file does not use. A key the map lacks is an error naming
    both files."""
    id_map = require_file(id_map)
    try:
        mapping = json.loads(id_map.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{id_map} is not a JSON id map: {error}") from None
    if not isinstance(mapping, dict) or not all(isinstance(v, str) for v in mapping.values()):
        raise ValueError(f"{id_map} must hold a JSON object mapping each answer's key to a question id (strings)")
    unmapped = [a.qname for a in answers if a.qname not in mapping]
    if unmapped:
        raise ValueError(f"{id_map} maps no question id for {len(unmapped)} answers of the file (e.g. "
                         f"{unmapped[0]!r})")
    return [dataclasses.replace(a, qname=mapping[a.qname]) for a in answers]


def as_answers_file(answers: Sequence[PeerAnswer]) -> list[dict[str, Any]]:
    """The answers in the official client's shape (``qname``, ``query``), for scoring with an answers file's
    route (:func:`sparqlab.text2sparql.answers.score_answers`)."""
    return [{"qname": a.qname, "query": a.query, "question": a.question} for a in answers]
