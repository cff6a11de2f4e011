"""Reading model replies: the one place where untrusted model text becomes SPARQL, JSON or a verdict. It is parsed,
never evaluated.

Real models wrap what they carry: reasoning models think aloud inline (``<think>…</think>`` when the server has no
reasoning parser, a bare ``</think>`` when the chat template opened the block, gpt-oss's harmony channels), chat
models use Markdown fences with or without a language tag, several code blocks, prose before and after; JSON
comes with trailing commas, single quotes or comments. Every reader here first drops the reasoning
(:func:`sparqlab.llm.replies.visible_text`) and then finds the carried content, or returns ``None`` so that the caller
records a typed failure (:func:`sparqlab.llm.replies.reply_error`) instead of guessing. The reply shapes and what each
reader makes of them are in
``tests/data/replies/corpus.json`` and ``docs/replies.md``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import json5

from sparqlab.llm.replies import visible_text

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[ \t]*\n(.*?)```", re.DOTALL)
_QUERY_START = re.compile(r"^[ \t>*-]*(?:[A-Za-z][\w ]{0,24}:[ \t]*)?((?:PREFIX|BASE|SELECT|ASK|CONSTRUCT|DESCRIBE)\b)",
                          re.IGNORECASE | re.MULTILINE)
_PAREN = r"\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"
_ORDER_KEY = rf"(?:(?:ASC|DESC)\s*{_PAREN}|\?\w+|{_PAREN})"
_MODIFIER = re.compile(rf"\s*(?:(?:ORDER|GROUP)\s+BY(?:\s*{_ORDER_KEY})+|HAVING(?:\s*{_PAREN})+|LIMIT\s+\d+|OFFSET\s+\d+"
                       rf"|VALUES\s*(?:\?\w+|{_PAREN})\s*\{{[^{{}}]*\}})", re.IGNORECASE)

def code_blocks(text: str) -> list[tuple[str, str]]:
    """``(language tag, body)`` of every closed Markdown code fence, in order."""
    return [(tag.lower(), body.strip()) for tag, body in _FENCE.findall(text)]


# -- SPARQL ----------------------------------------------------------------------------------------------------

def extract_sparql(text: str | None) -> str | None:
    """The SPARQL query in a model reply, or ``None`` if there is none.

    The last fenced block holding a query wins (models show a draft, then the answer); without fences, the text
    from the first line that starts a query. The query ends where its braces balance, followed only by solution
    modifiers (``LIMIT``, ``ORDER BY`` …); prose, a trailing period or an explanation line after it are cut. A
    query whose braces never balance (a reply cut by ``max_tokens``) is no query.
    """
    text = visible_text(text)
    for _, body in reversed(code_blocks(text)):
        query = _query_in(body)
        if query is not None:
            return query
    return _query_in(text)


def _query_in(text: str) -> str | None:
    for match in _QUERY_START.finditer(text):
        query = _balanced_query(text[match.start(1):])
        if query is not None:
            return query
    return None


def _balanced_query(text: str) -> str | None:
    """The query at the start of ``text`` up to its balanced closing brace and modifiers; ``None`` when it has no
    group graph pattern or the braces never balance."""
    opening = text.find("{")
    if opening == -1 or "}" in text[:opening]:
        return None
    end = closing_bracket(text, opening + 1, "{", "}", comments=True)
    if end is None:
        return None
    end += 1
    while modifier := _MODIFIER.match(text, end):  # solution modifiers after the closing brace
        end = modifier.end()
    return text[:end].strip()


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


# -- JSON ------------------------------------------------------------------------------------------------------

def _spans(text: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of brace-balanced ``{…}`` spans (strings in either quote respected), in order of their
    opening brace."""
    start = text.find("{")
    while start != -1:
        end = closing_bracket(text, start + 1, "{", "}")
        if end is not None:
            yield start, end + 1
        start = text.find("{", start + 1)


def _load_object(span: str) -> dict | None:
    """A JSON object, tolerating JSON5 (trailing commas, single quotes, comments, unquoted keys) and Python's
    ``True`` / ``False`` / ``None``; never evaluated."""
    try:
        value = json.loads(span)
    except ValueError:
        value = None
        for candidate in (span, re.sub(r"\b(True|False|None)\b",
                                       lambda m: {"True": "true", "False": "false", "None": "null"}[m.group(1)],
                                       span)):
            try:
                value = json5.loads(candidate)
                break
            except (ValueError, TypeError, RecursionError):
                continue
    return value if isinstance(value, dict) else None


def json_objects(text: str | None) -> Iterator[dict]:
    """Every JSON object in a reply, outermost first and in order: fenced blocks first (a ```json block is what
    the model meant), then the rest of the visible text. Lenient about JSON5-isms (:func:`_load_object`)."""
    text = visible_text(text)
    seen: list[dict] = []
    for candidate in [body for _, body in code_blocks(text)] + [text]:
        covered_until = 0
        for start, end in _spans(candidate):
            if start < covered_until:
                continue  # inside an object already read
            obj = _load_object(candidate[start:end])
            if obj is not None:
                covered_until = end
                if obj not in seen:  # a fenced object is met again in the whole text
                    seen.append(obj)
                    yield obj


def first_json_object(text: str | None, *keys: str) -> dict | None:
    """The first JSON object in a reply having all of ``keys`` (any object when none are given), or ``None``."""
    return next((obj for obj in json_objects(text) if all(key in obj for key in keys)), None)


# -- verdicts --------------------------------------------------------------------------------------------------

_VERDICT = re.compile(r"^[\W_]*(yes|no)\b", re.IGNORECASE)
_VERDICT_LINE = re.compile(r"^[\W_]*(?:final\s+)?(?:answer|verdict)\s*[:：]\s*[\W_]*(yes|no)\b",
                           re.IGNORECASE | re.MULTILINE)


def parse_yes_no(text: str | None) -> bool | None:
    """A YES/NO verdict: the reply's first word, or an ``Answer: YES`` / ``Verdict: no`` line; a JSON object
    ``{"answer": "yes"}`` counts too. ``None`` when the reply commits to neither."""
    text = visible_text(text)
    match = _VERDICT.match(text) or _VERDICT_LINE.search(text)
    if match is None:
        obj = first_json_object(text)
        value = next((obj[k] for k in ("answer", "verdict", "valid", "admissible") if obj and k in obj), None)
        if isinstance(value, bool):
            return value
        match = _VERDICT.match(str(value)) if value is not None else None
    return None if match is None else match.group(1).lower() == "yes"
