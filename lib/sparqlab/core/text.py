"""Text from outside the workbench (model output, input files) may hold lone UTF-16 surrogates (``"\\ud800"`` in
JSON), which Python strings allow but UTF-8 cannot encode: one such character used to abort a run at its first
write. Model text is scrubbed where it enters (:class:`sparqlab.llm.base.ChatResponse`); input files are refused
with the place of the character (:func:`lone_surrogate`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"
"""What a lone surrogate becomes: U+FFFD, the Unicode replacement character."""


def scrub(text: str) -> str:
    """``text`` with every lone surrogate replaced by :data:`REPLACEMENT` (a no-op on ordinary text)."""
    return _SURROGATE.sub(REPLACEMENT, text)


def lone_surrogate(value: Any, path: str = "") -> str | None:
    """Where in a parsed JSON value the first lone surrogate is (``"text"``, ``"gold_answers[2]"``), or ``None``."""
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            found = _SURROGATE.search(item)
            if found:
                return f"{where or 'value'} (character {found.start() + 1}, U+{ord(found.group()):04X})"
        elif isinstance(item, Mapping):
            stack.extend((f"{where}.{key}" if where else str(key), inner) for key, inner in item.items())
            stack.extend((f"{where or 'value'} key", key) for key in item if isinstance(key, str))
        elif isinstance(item, list | tuple):
            stack.extend((f"{where}[{index}]", inner) for index, inner in enumerate(item))
    return None
