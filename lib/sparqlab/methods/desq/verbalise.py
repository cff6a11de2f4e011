"""Fragment → atomic constraint (DeSQ section 3.1), deterministically from KG labels or with a chat model.

The template verbaliser writes each fragment with its placeholders replaced by their labels and the SPARQL
operators by words, e.g. ``?var1 uri2 uri3`` (uri2 = directed_by, uri3 = Ridley Scott) becomes
``?var1 has directed by "Ridley Scott"``. It needs no model, so gold decompositions of a whole training split can
be built offline; the model verbaliser (prompt ``verbalise``) writes the paper's natural sentences.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence

from sparqlab.kg.profiles import RDF, RDFS
from sparqlab.methods.desq.fragments import Decomposition, Fragment, Slot, substitute_placeholders
from sparqlab.methods.desq.prompts import PROMPTS

_VOCABULARY_WORDS = {"rdfs:label": "has the label", "rdf:type": "is a", f"<{RDF}type>": "is a",
                     f"<{RDFS}label>": "has the label", "a": "is a", "schema:description": "has the description"}
_MODIFIER_WORDS = (("GROUP BY", "Group the results by"), ("HAVING", "Keep only groups where"),
                   ("ORDER BY", "Order the results by"), ("LIMIT", "Return at most"), ("OFFSET", "Skip the first"),
                   ("VALUES", "Restrict to the values"))


def _with_labels(text: str, slots: dict[str, Slot]) -> str:
    def label(prefix: str | None, placeholder: str) -> str:
        slot = slots.get(placeholder)
        if slot is not None and slot.label:
            return f'"{slot.label}"'
        return f"{prefix}:{placeholder}" if prefix else placeholder

    return substitute_placeholders(text, label)


def template_constraint(fragment: Fragment, slots: Sequence[Slot]) -> str:
    """One fragment as an atomic constraint, from the slots' labels (deterministic)."""
    by_placeholder = {slot.placeholder: slot for slot in slots}
    text = fragment.text
    if fragment.kind == "skeleton":
        head = text[:-len("WHERE {}")].strip() if text.endswith("WHERE {}") else text
        if head.upper().startswith("ASK"):
            return "We need to know whether the following holds"
        wanted = _with_labels(re.sub(r"^SELECT\s+(DISTINCT\s+|REDUCED\s+)?", "", head, flags=re.I), by_placeholder)
        return f"We need {'distinct ' if ' DISTINCT ' in f' {head.upper()} ' else ''}{wanted}"
    if fragment.kind == "triple":
        words = text.split(" ")
        subject, obj = words[0], words[-1]
        predicate = " ".join(words[1:-1])
        if predicate in _VOCABULARY_WORDS:
            verb = _VOCABULARY_WORDS[predicate]
        else:
            words = _with_labels(predicate, by_placeholder).strip('"').replace("_", " ")
            verb = words if words.split(" ", 1)[0] in ("has", "is", "in", "was") else f"has {words}"
        return f"{_with_labels(subject, by_placeholder)} {verb} {_with_labels(obj, by_placeholder)}"
    if fragment.kind == "filter":
        return "We need " + _with_labels(re.sub(r"^FILTER\s*", "", text, flags=re.I), by_placeholder)
    if fragment.kind == "modifier":
        for keyword, words in _MODIFIER_WORDS:
            if text.upper().startswith(keyword):
                rest = _with_labels(text[len(keyword):].strip(), by_placeholder)
                return f"{words} {rest}" + (" results" if keyword in ("LIMIT", "OFFSET") else "")
    return "We also need " + _with_labels(text, by_placeholder)


def verbalise_with_templates(decomposition: Decomposition) -> Decomposition:
    """Fill every fragment's atomic constraint with :func:`template_constraint` (in place; returned)."""
    for fragment in decomposition.fragments:
        fragment.constraint = template_constraint(fragment, decomposition.slots)
    return decomposition


def grounding_lines(slots: Sequence[Slot]) -> str:
    return "\n".join(f"- {s.placeholder}: id {s.id}, label {s.label!r}, description {s.description!r}"
                     for s in slots) or "(none)"


async def verbalise_with_model(decomposition: Decomposition, question: str,
                               chat: Callable[[list[dict]], Awaitable[str]]) -> Decomposition:
    """Fill every fragment's atomic constraint with one chat call each (prompt ``verbalise``); ``chat`` takes
    messages and returns the reply text. An empty reply falls back to the template sentence."""
    for fragment in decomposition.fragments:
        prompt = PROMPTS["verbalise"].render(question=question, fragment=fragment.text,
                                             grounding=grounding_lines(decomposition.slots))
        reply = (await chat([{"role": "user", "content": prompt}])).strip()
        first = reply.splitlines()[0].strip() if reply else ""
        fragment.constraint = first or template_constraint(fragment, decomposition.slots)
    return decomposition
