"""Generation: gold training examples, the chat-model backend (question → atomic constraints → structured output),
fine-tuning data export, and the deterministic stand-in ``standin-desq``.

The backend prompts the generator with the training examples nearest to the question (word overlap of the
question texts with the [bracketed] entity mentions masked): one call writes the atomic constraints, a second the
structured output. The paper fine-tunes the generator on the same pairs; :func:`finetune_records` exports them.

``standin-desq`` is an honest non-LLM baseline: it answers with the first (nearest) worked example of the prompt,
re-filled for the new question — entity labels from the question's [bracketed] mentions, ids from a plain label
lookup in the run's KG (case-insensitive exact match, first id in sorted order: when a person and a film, or a tag
and a person, share a name it picks one of them whatever the question meant; a KG too large to read is looked up
in its profile's element catalogue instead), descriptions from the class of the example's entity (its type's
description in the KG). The correction strategies
then meet real id errors behind correct labels.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sparqlab.data.question import Question
from sparqlab.llm.base import ChatRequest, Message
from sparqlab.llm.replies import visible_text
from sparqlab.llm.standins import RunBinding, StandinModel, register_standin
from sparqlab.methods.desq.fragments import Decomposition, IdScheme, decompose, scheme_for
from sparqlab.methods.desq.prompts import PROMPTS
from sparqlab.methods.desq.structured import FORMAT_EXAMPLE, output_json, parse_output
from sparqlab.methods.desq.verbalise import verbalise_with_templates
from sparqlab.sparql.tree import quote_literal

_MENTION = re.compile(r"\[([^\]]+)\]")


@dataclass
class Example:
    """A training question with its gold decomposition (fragments, atomic constraints, grounding)."""

    id: str
    question: str
    sparql: str
    decomposition: Decomposition

    def constraints_text(self) -> str:
        return numbered([f.constraint for f in self.decomposition.fragments])

    def output(self) -> str:
        return output_json(self.decomposition.fragments, self.decomposition.slots, self.decomposition.unknown)


def numbered(lines: Sequence[str]) -> str:
    return "\n".join(f"{n}. {line}" for n, line in enumerate(lines, start=1))


def gold_example(question: Question, scheme: IdScheme, describe: Callable[[str, str, str], tuple[str, str]],
                 sparql: str | None = None) -> Example:
    """The gold decomposition of a training question, atomic constraints from the template verbaliser
    (``sparql`` overrides the question's gold query, e.g. with its IRI form)."""
    sparql = sparql or question.gold_sparql
    if not sparql:
        raise ValueError(f"question {question.id} has no gold SPARQL to decompose")
    decomposition = verbalise_with_templates(decompose(sparql, scheme, describe))
    return Example(question.id, question.text, sparql, decomposition)


# ------------------------------------------------------------------------------------------------ retrieval

_WORD = re.compile(r"\w+")


def masked_words(text: str) -> frozenset[str]:
    """Lower-case words of a question with every [mention] replaced by one mask token."""
    return frozenset(_WORD.findall(_MENTION.sub(" ENTITYMASK ", text).lower()))


def nearest(question: str, examples: Sequence[Example], k: int,
            words: Sequence[frozenset[str]] | None = None) -> list[Example]:
    """The ``k`` examples whose masked question words overlap ``question``'s most (Jaccard; ties: list order)."""
    target = masked_words(question)
    words = words if words is not None else [masked_words(e.question) for e in examples]
    scored = [(-(len(target & w) / len(target | w) if target | w else 0.0), n) for n, w in enumerate(words)]
    return [examples[n] for _, n in sorted(scored)[:k]]


# ------------------------------------------------------------------------------------------------ prompts


def decompose_messages(question: str, examples: Sequence[Example], kg_name: str) -> list[Message]:
    blocks = "\n\n".join(PROMPTS["decompose_example"].render(question=e.question, constraints=e.constraints_text())
                         for e in examples)
    return [{"role": "user", "content": PROMPTS["decompose"].render(kg_name=kg_name, examples=blocks,
                                                                    question=question)}]


def map_messages(question: str, constraints: Sequence[str], examples: Sequence[Example],
                 scheme: IdScheme) -> list[Message]:
    """The map prompt on the KG of ``scheme`` (its name and how its placeholders are written)."""
    blocks = "\n\n".join(PROMPTS["map_example"].render(question=e.question, constraints=e.constraints_text(),
                                                       output=e.output()) for e in examples)
    return [{"role": "user", "content": PROMPTS["map"].render(
        kg_name=scheme.name, prefix_note=scheme.placeholder_note(), format=FORMAT_EXAMPLE, examples=blocks,
        question=question, constraints=numbered(constraints))}]


def parse_constraints(text: str) -> list[str]:
    """Atomic constraints from a reply: its numbered or bulleted lines (``1. ...``, ``- ...``, ``AC1: ...``), the
    format the prompt asks for, after any reasoning and without Markdown emphasis. A reply without such lines
    (prose, a refusal, an empty reply) has none: guessing constraints from prose would pass a wrong decomposition
    on."""
    lines = [line.strip() for line in visible_text(text).splitlines() if line.strip()]
    marker = re.compile(r"^(?:\d+[.)]|[-*•]|\**AC\s?\d+\**\s*[:.)])\s+")
    marked = [marker.sub("", line, count=1).strip() for line in lines if marker.match(line)]
    return [re.sub(r"^\*\*(.*)\*\*$", r"\1", line).strip() for line in marked if line]


def finetune_records(examples: Sequence[Example], scheme: IdScheme) -> list[dict]:
    """Chat fine-tuning records (``{"messages": [...]}``), two per example: question → atomic constraints, and
    question + constraints → structured output (zero-shot prompts, as a fine-tuned model is used)."""
    records = []
    for example in examples:
        decompose_turn = decompose_messages(example.question, [], scheme.name)
        records.append({"messages": [*decompose_turn, {"role": "assistant", "content": example.constraints_text()}]})
        constraints = [f.constraint for f in example.decomposition.fragments]
        map_turn = map_messages(example.question, constraints, [], scheme)
        records.append({"messages": [*map_turn, {"role": "assistant", "content": example.output()}]})
    return records


def write_finetune_jsonl(path: str | Path, examples: Sequence[Example], scheme: IdScheme) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for record in finetune_records(examples, scheme):
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


# ------------------------------------------------------------------------------------------------ stand-in

_BLOCK = re.compile(r"Question: (?P<question>[^\n]*)\nAtomic constraints:\n(?P<constraints>(?:\d+\. [^\n]*\n?)*)"
                    r"(?:Output: (?P<output>[^\n]*))?")


@register_standin("standin-desq")
class DesqStandin(StandinModel):
    """DeSQ baseline (not an LLM): the nearest worked example re-filled with the question's [mentions], ids by
    plain label lookup (module docstring). ``kg`` names the KG whose labels the lookup reads, by default the run's
    (another KG's only with ``allow_other_kg``)."""

    name = "standin-desq"

    def __init__(self, kg: str | None = None, name: str | None = None, allow_other_kg: bool = False):
        super().__init__(name)
        self.kg_name = kg
        self.allow_other_kg = allow_other_kg
        self._kg = None
        self._lookup: dict[str, list[str]] | None = None
        self._class_descriptions: dict[str, str] = {}
        self._scheme: IdScheme | None = None
        self._lock = threading.Lock()

    def bind(self, binding: RunBinding) -> None:
        if self.kg_name not in (None, binding.kg.profile.name) and not self.allow_other_kg:
            raise ValueError(f"standin-desq would look ids up in {self.kg_name} but this run is on "
                             f"{binding.kg.profile.name}: leave --model-options kg out (the run's KG), or give "
                             "--model-options allow_other_kg=true")
        if self.kg_name is None and binding.kg is not self._kg:
            with self._lock:
                self._kg, self._lookup = binding.kg, None

    def _ids(self) -> dict[str, list[str]]:
        with self._lock:
            if self._lookup is None:
                if self._kg is None and self.kg_name is None:
                    raise ValueError("standin-desq has no KG to look labels up in: run it inside a run, or give "
                                     "--model-options kg=NAME")
                if self._kg is None:
                    from sparqlab.kg import open_kg

                    with open_kg(self.kg_name, cache=False) as kg:
                        self._read(kg)
                else:
                    self._read(self._kg)
        return self._lookup

    def _read(self, kg) -> None:
        """The label lookup and each entity's class description, read once from ``kg`` — or, for a KG too large to
        read, from its profile's element catalogue (labels only)."""
        from sparqlab.methods.desq.iri_form import label_index

        self._scheme = scheme = scheme_for(kg.profile)
        profile = kg.profile
        if profile.catalogue is not None:
            labels: dict[str, list[str]] = {}
            for element in profile.catalogue.load():
                labels.setdefault(element.label, []).append(element.iri)
            rows = []
        else:
            labels = label_index(kg)
            rows = kg.bulk_values(f"SELECT ?x ?d WHERE {{ ?x <{profile.type_predicate}> ?c . "
                                  f"?c <{profile.description_predicate}> ?d }}")
        lookup: dict[str, set[str]] = {}
        for label, iris in labels.items():
            ids = {s[1] for s in map(scheme.split, iris) if s and s[2] == "entity"}
            lookup.setdefault(label.lower(), set()).update(ids)
        descriptions = {}
        for row in rows:
            split = scheme.split(row["x"])
            if split is not None:
                descriptions.setdefault(split[1], row["d"])
        self._class_descriptions = descriptions
        self._lookup = {label: sorted(ids) for label, ids in lookup.items() if ids}

    def lookup(self, label: str) -> str:
        """The first entity id (in sorted order) whose label equals ``label`` ignoring case, as a plain search box
        would match it; ``""`` when there is none. The tag "adam sandler" and the person "Adam Sandler" are both
        candidates for either mention, and the person comes first."""
        ids = self._ids().get(label.lower(), [])
        return ids[0] if ids else ""

    def respond(self, request: ChatRequest) -> str:
        prompt = request.last_user_message
        blocks = list(_BLOCK.finditer(prompt))
        target = prompt.rsplit("Question: ", 1)[-1].split("\n", 1)[0] if "Question: " in prompt else ""
        if len(blocks) < 2 or not target:
            return "I need at least one worked example and a question."
        example = blocks[0]
        pairs = list(zip(_MENTION.findall(example["question"]), _MENTION.findall(target), strict=False))
        if prompt.rstrip().endswith("Output:"):
            return self._refill_output(example["output"] or "", pairs)
        return _replace_mentions(example["constraints"].strip(), pairs)

    def _refill_output(self, output: str, pairs: list[tuple[str, str]]) -> str:
        parsed = parse_output(output)
        mapping = dict(pairs)
        self._ids()  # reads the class descriptions too
        for fragment in parsed.fragments:
            for old, new in pairs:
                fragment.text = fragment.text.replace(quote_literal(old), quote_literal(new))
            fragment.constraint = _replace_mentions(fragment.constraint, pairs)
        for slot in parsed.slots:
            if slot.label in mapping:
                description = self._class_descriptions.get(slot.id, slot.description)
                slot.label = mapping[slot.label]
                slot.id = self.lookup(slot.label)
                slot.description = description
        return output_json(parsed.fragments, parsed.slots)

    def describe(self) -> dict[str, Any]:
        kg = self.kg_name or (self._kg.profile.name if self._kg is not None else None)
        return {**super().describe(), "kg": kg}


def _replace_mentions(text: str, pairs: list[tuple[str, str]]) -> str:
    if not pairs:
        return text
    mapping = dict(pairs)
    pattern = re.compile("|".join(re.escape(old) for old in sorted(mapping, key=len, reverse=True)))
    return pattern.sub(lambda m: mapping[m.group(0)], text)

