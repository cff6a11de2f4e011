"""Where a SPARQL query sits in free text (a model's reply, after its reasoning is dropped:
:func:`sparqlab.platform.parsing.extract_sparql`).

Chat models use Markdown fences with or without a language tag, several code blocks, prose before and after. The
query is found, never evaluated nor parsed: its start is a line that begins with a query keyword, its end the brace
that balances its group graph pattern, followed only by solution modifiers. The reply shapes and what becomes of
them are in ``tests/data/replies/corpus.json`` and ``docs/replies.md``.
"""

from __future__ import annotations

import re

from sparqlab.core.text import closing_bracket, code_blocks

_QUERY_START = re.compile(r"^[ \t>*-]*(?:[A-Za-z][\w ]{0,24}:[ \t]*)?((?:PREFIX|BASE|SELECT|ASK|CONSTRUCT|DESCRIBE)\b)",
                          re.IGNORECASE | re.MULTILINE)
_PAREN = r"\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"
_ORDER_KEY = rf"(?:(?:ASC|DESC)\s*{_PAREN}|\?\w+|{_PAREN})"
_MODIFIER = re.compile(rf"\s*(?:(?:ORDER|GROUP)\s+BY(?:\s*{_ORDER_KEY})+|HAVING(?:\s*{_PAREN})+|LIMIT\s+\d+|OFFSET\s+\d+"
                       rf"|VALUES\s*(?:\?\w+|{_PAREN})\s*\{{[^{{}}]*\}})", re.IGNORECASE)


def find_query(text: str) -> str | None:
    """The SPARQL query in ``text``, or ``None`` if there is none.

    The last fenced block holding a query wins (models show a draft, then the answer); without fences, the text
    from the first line that starts a query. The query ends where its braces balance, followed only by solution
    modifiers (``LIMIT``, ``ORDER BY`` …); prose, a trailing period or an explanation line after it are cut. A
    query whose braces never balance (a reply cut by ``max_tokens``) is no query.
    """
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
