"""Reading model replies: the one place where untrusted model text becomes SPARQL, JSON or a verdict. It is parsed,
never evaluated.

Real models wrap what they carry: reasoning models think aloud inline (``<think>…</think>`` when the server has no
reasoning parser, a bare ``</think>`` when the chat template opened the block, gpt-oss's harmony channels), chat
models use Markdown fences with or without a language tag, several code blocks, prose before and after; JSON
comes with trailing commas, single quotes or comments. Every reader here first drops the reasoning
(:func:`sparqlab.llm.replies.visible_text`) and then finds the carried content, or returns ``None`` so that the caller
records a typed failure (:func:`sparqlab.llm.replies.reply_error`) instead of guessing. Where a query sits in the
visible text is SPARQL knowledge, so it lives with the rest of SPARQL text (:mod:`sparqlab.sparql.extract`); the
fences and bracket matching both readers share are plain text (:mod:`sparqlab.core.text`). The reply shapes and
what each reader makes of them are in ``tests/data/replies/corpus.json`` and ``docs/replies.md``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import json5

from sparqlab.core.text import closing_bracket, code_blocks
from sparqlab.llm.replies import visible_text
from sparqlab.sparql.extract import find_query


def extract_sparql(text: str | None) -> str | None:
    """The SPARQL query in a model reply (:func:`sparqlab.sparql.extract.find_query` in its visible text), or
    ``None`` if there is none."""
    return find_query(visible_text(text))


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
