"""Text from outside the workbench (model output, input files) may hold lone UTF-16 surrogates (``"\\ud800"`` in
JSON), which Python strings allow but UTF-8 cannot encode: one such character used to abort a run at its first
write. Model text is scrubbed where it enters (:class:`sparqlab.llm.base.ChatResponse`); input files are refused
with the place of the character (:func:`lone_surrogate`).

Also the plain-text pieces that readers of model replies share (SPARQL extraction, lenient JSON, agent actions):
Markdown code fences (:func:`code_blocks`) and the bracket that closes an opened one (:func:`closing_bracket`); and
the one layout of the plain-text tables commands print (:func:`text_table`)."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[ \t]*\n(.*?)```", re.DOTALL)
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


def closing_bracket(text: str, start: int, opening: str, closing: str, *, comments: bool = False,
                    fences: bool = False) -> int | None:
    """Index of the ``closing`` bracket that closes the one opened just before ``start``, or ``None`` when it
    never closes. Brackets nest; those inside quoted strings (either quote, backslash escapes; an apostrophe
    inside a word such as ``Ridley's`` opens nothing) do not count, nor, on request, those in ``#`` comments
    (SPARQL) or Markdown code fences."""
    depth, index, quote = 1, start, None
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = None
        elif fences and text.startswith("```", index):
            end = text.find("```", index + 3)
            if end == -1:
                return None
            index = end + 3
            continue
        elif comments and char == "#" and (index == 0 or text[index - 1] in " \t\n"):
            newline = text.find("\n", index)
            index = len(text) if newline == -1 else newline
            continue
        elif char in "\"'" and not _inside_word(text, index):
            quote = char
        elif char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return None


def _inside_word(text: str, index: int) -> bool:
    """An apostrophe between two letters or digits (``Ridley's``), which opens no string."""
    return (text[index] == "'" and 0 < index < len(text) - 1 and text[index - 1].isalnum()
            and text[index + 1].isalnum())


def code_blocks(text: str) -> list[tuple[str, str]]:
    """``(language tag, body)`` of every closed Markdown code fence, in order."""
    return [(tag.lower(), body.strip()) for tag, body in _FENCE.findall(text)]


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, rule: bool = True,
               right: Collection[int] = ()) -> str:
    """Cells already formatted, laid out in columns two spaces apart, left-aligned unless their index is in
    ``right`` (numbers), with a dashed rule under the header when ``rule``. The terminal tables of ``kg query``,
    ``runs list/show/compare`` and ``eval`` are all this layout; pandas' ``to_string`` cannot give it (one space
    between columns, right-aligned text), and the tests and docs read these tables by column."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(cell.rjust(width) if i in right else cell.ljust(width)
                         for i, (cell, width) in enumerate(zip(cells, widths, strict=True))).rstrip()

    ruled = [["-" * width for width in widths]] if rule else []
    return "\n".join(line(cells) for cells in [header, *ruled, *rows])


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub-flavoured Markdown table of ``rows`` under ``header``, each cell as ``str()`` gives it (the
    benchmarks' reports, pasted into docs)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows])
