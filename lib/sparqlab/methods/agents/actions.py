"""Reading the controller's actions. Model output is untrusted text: it is parsed with regular expressions and
``json.loads``, never evaluated.

The controller answers ``Thought: … Action: name(argument)``. :func:`parse_action` reads the first action, with
the argument running to the last closing parenthesis (SPARQL has parentheses of its own) and code fences or
quotes around it removed; names from the paper's prompt (``execute_sparql``, ``get_wikidata_entry`` …) are
accepted as aliases. When that fails, the controller makes one temperature-0 re-parse call whose JSON answer
:func:`parse_reparse` reads.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

ACTION_NAMES = ("search", "lookup", "examples", "execute", "stop")
"""The five actions of the agentic loop (method section, "Problem Setup")."""

ALIASES = {
    "search_wikidata": "search", "search_kg": "search", "get_wikidata_entry": "lookup", "get_entry": "lookup",
    "get_property_examples": "examples", "property_examples": "examples", "execute_sparql": "execute",
    "run_sparql": "execute", "sparql": "execute", "finish": "stop",
}

_ACTION = re.compile(r"^\s*\**action\**\s*:\s*\**\s*", re.IGNORECASE | re.MULTILINE)
_THOUGHT = re.compile(r"^\s*\**thought\**\s*:\s*", re.IGNORECASE | re.MULTILINE)
_CALL = re.compile(r"`*\s*([A-Za-z_][\w]*)\s*\((.*)\)\s*`*\s*$", re.DOTALL)
_FENCE = re.compile(r"^```[\w]*\s*\n?(.*?)\n?```$", re.DOTALL)


@dataclass(frozen=True)
class Action:
    """One parsed controller step: the thought, the action name (canonical) and its argument."""

    thought: str
    name: str
    argument: str

    def render(self) -> str:
        return f"{self.name}({self.argument})"

    def key(self) -> tuple[str, str]:
        """What counts as the same action again: name and whitespace-normalised argument."""
        return self.name, " ".join(self.argument.split())


def canonical_name(name: str) -> str | None:
    """The action's canonical name, or ``None`` for a name that is no action."""
    name = name.strip().lower()
    name = ALIASES.get(name, name)
    return name if name in ACTION_NAMES else None


def clean_argument(text: str) -> str:
    """Strip whitespace, one level of code fence and matching quotes around an argument."""
    text = text.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        text = text[1:-1].strip()
    return text


def parse_action(text: str) -> Action | None:
    """The first ``Action: name(argument)`` of a controller reply (thought: the text before it), or ``None``."""
    match = _ACTION.search(text)
    if not match:
        return None
    before, after = text[:match.start()], text[match.end():]
    after = re.split(r"\n\s*\**(?:observation|thought)\**\s*:", after, maxsplit=1, flags=re.IGNORECASE)[0]
    call = _CALL.match(after.strip())
    if not call:
        bare = canonical_name(after.strip().strip("`*"))
        if bare == "stop":
            return Action(_thought(before), "stop", "")
        return None
    name = canonical_name(call.group(1))
    if name is None:
        return None
    return Action(_thought(before), name, clean_argument(call.group(2)))


def _thought(text: str) -> str:
    match = _THOUGHT.search(text)
    return (text[match.end():] if match else text).strip()


def json_objects(text: str):
    """Every JSON object embedded in a reply, in order (models wrap JSON in prose or code fences)."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            data, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(data, dict):
            yield data


def first_json_object(text: str) -> dict | None:
    """The first JSON object in a reply, or ``None``."""
    return next(json_objects(text), None)


def parse_reparse(text: str) -> Action | None:
    """The action in a re-parse reply: the first JSON object with ``action_name`` (and ``action_argument``)."""
    data = next((d for d in json_objects(text) if "action_name" in d), None)
    if data is None:
        return None
    name = canonical_name(str(data.get("action_name", "")))
    argument = data.get("action_argument", "")
    if name is None or not isinstance(argument, str | int | float):
        return None
    return Action(str(data.get("thought", "")).strip(), name, clean_argument(str(argument)))
