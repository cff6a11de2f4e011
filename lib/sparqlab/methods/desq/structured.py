"""DeSQ's two-part structured output (section 3.2), its JSON format and a parser that reports what is malformed.

The format, one JSON object::

    {
      "constraints": [
        {"constraint": "We need the films and their labels", "fragment": "SELECT DISTINCT ?var1 ?var2 WHERE {}"},
        {"constraint": "A film is directed by Ridley Scott", "fragment": "?var2 uri1 uri2"},
        ...
      ],
      "grounding": [
        {"placeholder": "uri1", "id": "relation/directed_by", "label": "directed_by",
         "description": "a director of the film"},
        ...
      ]
    }

``constraints`` maps each atomic constraint (AC) to its SPARQL fragment (variables ``?var1 ...``, URI placeholders
``uri1 ...`` — prefixed as ``wdt:uri1`` on Wikidata); ``grounding`` gives each placeholder's id, label and
description. Model output is untrusted: :func:`parse_output` never raises and never evaluates anything. It takes
the first JSON object with those keys in the text (inside a code fence or prose, after any reasoning; trailing
commas, single quotes and comments tolerated by :func:`sparqlab.platform.parsing.json_objects`), keeps every well-formed entry, and lists each
problem (no JSON, a missing list, an entry without a fragment, a placeholder used but not grounded, a grounded
placeholder used nowhere, a duplicate placeholder).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, field

from sparqlab.llm.replies import visible_text
from sparqlab.methods.desq.fragments import Fragment, Slot, placeholders_in
from sparqlab.platform.parsing import json_objects

FORMAT_EXAMPLE = """\
{"constraints": [{"constraint": "...", "fragment": "SELECT DISTINCT ?var1 WHERE {}"},
                 {"constraint": "...", "fragment": "?var1 uri1 uri2"}],
 "grounding": [{"placeholder": "uri1", "id": "...", "label": "...", "description": "..."}]}"""


@dataclass
class ParsedOutput:
    """What could be read from a model's structured output; ``problems`` says what could not."""

    fragments: list[Fragment] = field(default_factory=list)
    slots: list[Slot] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        """At least one fragment was read (the assembler decides whether they make a query)."""
        return bool(self.fragments)


def _load(text: str) -> dict | None:
    """The first JSON object with ``constraints`` or ``grounding`` (fenced or in prose, JSON5-isms tolerated)."""
    return next((value for value in json_objects(text) if "constraints" in value or "grounding" in value), None)


def parse_output(text: str) -> ParsedOutput:
    """Read a structured output (module docstring); see :class:`ParsedOutput`."""
    out = ParsedOutput()
    if not isinstance(text, str) or not visible_text(text):
        out.problems.append("empty output")
        return out
    value = _load(text)
    if value is None:
        out.problems.append("no JSON object with 'constraints' or 'grounding' found")
        return out
    constraints = value.get("constraints")
    if not isinstance(constraints, list):
        out.problems.append("'constraints' is missing or not a list")
        constraints = []
    for number, item in enumerate(constraints, start=1):
        if isinstance(item, dict) and isinstance(item.get("fragment"), str) and item["fragment"].strip():
            ac = item.get("constraint", "")
            if not isinstance(ac, str) or not ac.strip():
                out.problems.append(f"constraint {number} has no atomic constraint text")
                ac = ""
            out.fragments.append(Fragment(_kind(item["fragment"]), " ".join(item["fragment"].split()), ac))
        else:
            out.problems.append(f"constraint {number} has no 'fragment' string")
    grounding = value.get("grounding")
    if not isinstance(grounding, list):
        out.problems.append("'grounding' is missing or not a list")
        grounding = []
    for number, item in enumerate(grounding, start=1):
        if not isinstance(item, dict) or not isinstance(item.get("placeholder"), str):
            out.problems.append(f"grounding entry {number} has no 'placeholder'")
            continue
        placeholder = item["placeholder"].strip()
        if any(slot.placeholder == placeholder for slot in out.slots):
            out.problems.append(f"placeholder {placeholder} is grounded twice (the first entry is kept)")
            continue
        fields = {}
        for name in ("id", "label", "description"):
            key = "desc" if name == "description" and name not in item and "desc" in item else name
            if key not in item:
                out.problems.append(f"grounding entry {number} ({placeholder}) has no {name!r}")
            raw = item.get(key)  # null: not known (as the worked examples write an unknown label)
            fields[name] = "" if raw is None else str(raw).strip()
        out.slots.append(Slot(placeholder, fields["id"], fields["label"], fields["description"]))
    used = {placeholder for f in out.fragments for _, placeholder in placeholders_in(f.text)}
    grounded = {slot.placeholder for slot in out.slots}
    out.problems += [f"placeholder {p} is used in a fragment but not grounded" for p in sorted(used - grounded)]
    out.problems += [f"placeholder {p} is grounded but used in no fragment" for p in sorted(grounded - used)]
    return out


def _kind(fragment: str) -> str:
    word = fragment.split(maxsplit=1)[0].upper() if fragment.split() else ""
    if word in ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE"):
        return "skeleton"
    if word in ("GROUP", "HAVING", "ORDER", "LIMIT", "OFFSET"):
        return "modifier"
    if word == "FILTER":
        return "filter"
    return "pattern" if word in ("OPTIONAL", "MINUS", "BIND", "VALUES", "SERVICE", "GRAPH", "{", "INCLUDE") \
        or fragment.startswith("{") else "triple"


def output_json(fragments: list[Fragment], slots: list[Slot], unknown: Collection[str] = ()) -> str:
    """The structured output of fragments and slots as one JSON line (what a model is trained to write). The
    label and description of a slot in ``unknown`` (an id no label source knows) are ``null``: not known, which
    an empty string would misstate."""
    grounding = [{**s.to_dict(), "label": None, "description": None} if s.placeholder in unknown else s.to_dict()
                 for s in slots]
    return json.dumps({"constraints": [{"constraint": f.constraint, "fragment": f.text} for f in fragments],
                       "grounding": grounding}, ensure_ascii=False)
