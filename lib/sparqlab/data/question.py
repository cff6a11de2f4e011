"""The one question record every loader produces and every method consumes."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

AnswerForm = Literal["select", "ask", "count"]

PUBLIC_METADATA = frozenset({"paraphrases", "keywords", "title", "url", "query", "language", "dataset"})
"""Metadata a method may read: what the benchmark gives together with the question text (paraphrases, QALD's
keywords, SPINACH's discussion title and URL, the question's ``language`` and the ``dataset`` IRI a TEXT2SPARQL
client sends, and ``query``: a query the question file gives the method to evaluate, e.g. a generative SPARQL
query for the ``genop`` method; gold queries go in ``gold_sparql``).
Everything else (question type, hops, template, MetaQA's relation path, MCQA's template id and roles, stored
gold results, GRASP's info) is derived from the gold query or its answers and is withheld; see
docs/metrics.md."""


@dataclass
class Question:
    """A benchmark question.

    ``gold_answers`` are normalised answer strings (IRIs, literal lexical forms, ``"true"``/``"false"`` for ASK,
    the number for COUNT) as produced by :func:`sparqlab.eval.answer_set`, or ``None`` when the benchmark ships
    none (then a run needs a KG to execute ``gold_sparql``). ``topic_entities`` are ids or labels of the entities
    the question mentions. ``metadata`` keeps benchmark-specific fields (question type, paraphrases, split, ...).
    """

    id: str
    text: str
    gold_sparql: str | None = None
    gold_answers: list[str] | None = None
    answer_form: AnswerForm = "select"
    topic_entities: list[str] = field(default_factory=list)
    kg: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    def public(self) -> Question:
        """What a method may see: no gold query, no gold answers, metadata restricted to
        :data:`PUBLIC_METADATA`. ``answer_form`` (the question's form) and ``topic_entities`` (as the benchmark
        marks them in the text) stay."""
        return Question(id=self.id, text=self.text, answer_form=self.answer_form,
                        topic_entities=list(self.topic_entities), kg=self.kg,
                        metadata={k: v for k, v in self.metadata.items() if k in PUBLIC_METADATA})

    def to_dict(self) -> dict[str, Any]:
        """As a JSON-serialisable dict (the workbench's own JSONL line)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Question:
        """From a JSONL line of the workbench's own format; unknown keys go into ``metadata``.

        Raises ``ValueError`` naming the field when one is missing or has a type that would be misread later.
        """
        known = {f for f in cls.__dataclass_fields__}
        kwargs = {k: v for k, v in data.items() if k in known}
        if "id" not in kwargs or "text" not in kwargs:
            raise ValueError(f"a question needs at least 'id' and 'text'; got keys {sorted(data)}")
        _check_types(kwargs)
        extra = {k: v for k, v in data.items() if k not in known}
        if extra:
            kwargs["metadata"] = {**kwargs.get("metadata", {}), **extra}
        kwargs["id"] = str(kwargs["id"])
        check_id(kwargs["id"])
        return cls(**kwargs)


def check_id(question_id: str) -> None:
    """Refuse an id that cannot name a question: empty or only white space (a run could never record it as
    done, so every rerun would answer it again)."""
    if not question_id.strip():
        raise ValueError(f"'id' must be a non-empty string, got {question_id!r}")


_FIELD_TYPES = {"text": (str, "a string"), "gold_answers": (list, "a list (or null)"),
                "topic_entities": (list, "a list"), "metadata": (dict, "a JSON object")}


def _check_types(fields: dict[str, Any]) -> None:
    """Refuse values that would be misread later (a bare string of gold answers would be scored letter by letter)."""
    for name, (kind, described) in _FIELD_TYPES.items():
        value = fields.get(name)
        if name in fields and not isinstance(value, kind) and not (name == "gold_answers" and value is None):
            raise ValueError(f"{name!r} must be {described}, got {type(value).__name__} {value!r:.60}")
    form = fields.get("answer_form", "select")
    if form not in get_args(AnswerForm):
        raise ValueError(f"'answer_form' must be one of {', '.join(get_args(AnswerForm))}, got {form!r}")
