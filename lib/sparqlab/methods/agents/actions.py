"""Reading the controller's actions. Model output is untrusted text: it is parsed with regular expressions and
a JSON reader, never evaluated.

The controller answers ``Thought: … Action: name(argument)``. One action per reply:
:func:`read_actions` takes the first complete action, with the argument running to the parenthesis that closes
the call (SPARQL has parentheses of its own) and code fences or quotes around it removed, and reports every later
``Action:`` as dropped; names from the paper's prompt (``execute_sparql``, ``get_wikidata_entry`` …) are
accepted as aliases. When that fails, the controller makes one temperature-0 re-parse call whose JSON answer
:func:`parse_reparse` reads. With ``action_format=tools`` the actions are native function calls, read by
:func:`read_tool_actions` (JSON arguments, read but never evaluated), with the same re-parse when unreadable.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sparqlab.core.text import closing_bracket
from sparqlab.llm.replies import visible_text
from sparqlab.platform.parsing import first_json_object

ACTION_NAMES = ("search", "lookup", "examples", "execute", "stop")
"""The five actions of the agentic loop (method section, "Problem Setup")."""

ALIASES = {
    "search_wikidata": "search", "search_kg": "search", "get_wikidata_entry": "lookup", "get_entry": "lookup",
    "get_property_examples": "examples", "property_examples": "examples", "execute_sparql": "execute",
    "run_sparql": "execute", "sparql": "execute", "finish": "stop",
}

_ACTION = re.compile(r"^[ \t>*\-•#]*\**[ \t]*action\**[ \t]*\**[ \t]*:[ \t]*\**[ \t]*", re.IGNORECASE | re.MULTILINE)
_THOUGHT = re.compile(r"^[ \t>*\-•#]*\**[ \t]*thought\**[ \t]*\**[ \t]*:[ \t]*\**[ \t]*", re.IGNORECASE | re.MULTILINE)
_NAME = re.compile(r"[`*\s]*([A-Za-z_]\w*)[`*]*")
_FENCE = re.compile(r"^```[\w+-]*[ \t]*\n?(.*?)\n?```$", re.DOTALL)
_KEYWORD = re.compile(r"^(?:entity|entity_id|id|text|query|sparql|property|property_id|argument|arg|input)\s*=\s*",
                      re.IGNORECASE)

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
    """Strip whitespace, a keyword (``entity=``), one level of code fence and matching quotes around an
    argument."""
    text = text.strip()
    keyword = _KEYWORD.match(text)
    if keyword and text[keyword.end():keyword.end() + 1] in ("'", '"', "`"):
        text = text[keyword.end():].strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        text = text[1:-1].strip()
    return text


@dataclass(frozen=True)
class ActionReading:
    """What a controller reply holds: its first complete action (``None`` if there is none) and the raw text of
    every further ``Action:`` line, which one-action-per-reply drops (they are traced, never run)."""

    action: Action | None
    dropped: tuple[str, ...] = ()


def read_actions(text: str) -> ActionReading:
    """The first complete ``Action: name(argument)`` of a controller reply and the dropped later ones.

    Reasoning is removed first (:func:`~sparqlab.llm.replies.visible_text`). An action runs from its marker
    (``Action:``, ``**Action:**``, ``- Action:``) to the parenthesis that closes its call (SPARQL strings and
    nested parentheses respected), so prose after it is ignored; ``Action: execute`` followed by a fenced block
    takes the block as argument; a bare ``stop`` is a complete action. An action that is not complete (an unknown
    name, an unclosed call) does not count, and the next one is tried.
    """
    text = visible_text(text)
    markers = list(_ACTION.finditer(text))
    action, dropped = None, []
    for number, marker in enumerate(markers):
        limit = markers[number + 1].start() if number + 1 < len(markers) else len(text)
        if action is not None:
            dropped.append(text[marker.end():limit].strip())
            continue
        action = _action_at(text, marker.start(), marker.end(), limit)
    return ActionReading(action, tuple(dropped))


def parse_action(text: str) -> Action | None:
    """The first complete action of a controller reply (:func:`read_actions`), or ``None``."""
    return read_actions(text).action


def _action_at(text: str, marker: int, start: int, limit: int) -> Action | None:
    thought = _thought(text[:marker])
    name_match = _NAME.match(text, start)
    if not name_match:
        return None
    name = canonical_name(name_match.group(1))
    if name is None:
        return None
    rest = text[name_match.end():limit]
    opening = re.match(r"[ \t]*\(", rest)
    if opening:
        closing = closing_bracket(rest, opening.end(), "(", ")", fences=True)
        if closing is None:
            return None
        return Action(thought, name, clean_argument(rest[opening.end():closing]))
    # No call parentheses: the argument is a fenced block right after the name (``Action: execute`` + ```sparql),
    # a quoted or plain argument on the same line (``Action: search "Ridley Scott"``), or nothing (stop).
    block = re.match(r"[ \t:]*\n?[ \t]*```[\w+-]*[ \t]*\n(.*?)```", rest, re.DOTALL)
    if block:
        return Action(thought, name, block.group(1).strip())
    if name == "stop":
        return Action(thought, "stop", "")
    same_line = rest.split("\n", 1)[0].strip().strip("`*").lstrip(":").strip()
    if len(same_line) >= 3 and same_line[0] in "\"'" and same_line[-1] == same_line[0]:
        return Action(thought, name, clean_argument(same_line))
    return None


def _thought(text: str) -> str:
    markers = list(_THOUGHT.finditer(text))
    match = markers[-1] if markers else None
    return (text[match.end():] if match else text).strip()


def read_tool_actions(text: str, calls: list[dict[str, Any]], parameters: Mapping[str, str | None]) -> ActionReading:
    """The action of a reply that called functions (``action_format=tools``): its first call, with the reply's
    visible text as the thought; later calls are dropped like later ``Action:`` lines. ``parameters`` maps each
    action to the name of its argument (``None``: it takes none). The arguments are untrusted text read as JSON
    (never evaluated): an object holding the argument under its name, or as its only value; anything else
    (unknown function, invalid JSON, a non-scalar value) is no action, for the same re-parse and failure path as
    an unreadable text reply."""
    if not calls:
        return ActionReading(None)
    first, *later = calls
    dropped = tuple(tool_calls_text([call]).removeprefix("Action: ") for call in later)
    function = first["function"]
    name = canonical_name(function["name"])
    if name is None or name not in parameters:
        return ActionReading(None, dropped)
    try:
        arguments = json.loads(function["arguments"] or "{}")
    except (ValueError, RecursionError):  # invalid JSON, or JSON nested too deeply
        return ActionReading(None, dropped)
    if not isinstance(arguments, dict):
        return ActionReading(None, dropped)
    wanted = parameters[name]
    if wanted is None:
        value: Any = ""
    elif wanted in arguments:
        value = arguments[wanted]
    elif len(arguments) == 1:
        value = next(iter(arguments.values()))
    else:
        return ActionReading(None, dropped)
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        return ActionReading(None, dropped)
    return ActionReading(Action(visible_text(text), name, clean_argument(str(value))), dropped)


def tool_calls_text(calls: list[dict[str, Any]] | None) -> str:
    """Function calls as ``Action: name(arguments)`` lines, as the re-parse call and a failure's trace see them."""
    return "\n".join(f"Action: {call['function']['name']}({call['function']['arguments']})" for call in calls or ())


def parse_reparse(text: str) -> Action | None:
    """The action in a re-parse reply: the first JSON object with ``action_name`` (and ``action_argument``)."""
    data = first_json_object(text, "action_name")
    if data is None:
        return None
    name = canonical_name(str(data.get("action_name", "")))
    argument = data.get("action_argument", "")
    if name is None or not isinstance(argument, str | int | float):
        return None
    return Action(str(data.get("thought", "")).strip(), name, clean_argument(str(argument)))


def parse_answer_type(text: str) -> tuple[str, str] | None:
    """SAGA's answer-type prior (appendix F.1): ``(answer_type_label, answer_type_id)`` from the first JSON object
    with an ``answer_type_label``, or ``None`` when the reply has none."""
    data = first_json_object(text, "answer_type_label")
    if data is None:
        return None
    return str(data.get("answer_type_label") or "").strip(), str(data.get("answer_type_id") or "").strip()
