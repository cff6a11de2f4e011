"""Reading SPARQL out of model output. Model output is untrusted text: it is parsed, never evaluated.

Chat models wrap queries in Markdown fences, add prose before and after, or (reasoning models) think aloud
first. :func:`extract_sparql` takes the last fenced block if there is one, else the text from the first SPARQL
keyword on; it returns ``None`` when nothing query-like is found, so the caller can ask for a re-parse.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"```[ \t]*(?:sparql|SPARQL|sql)?[ \t]*\n(.*?)```", re.DOTALL)
_QUERY_START = re.compile(r"^\s*(PREFIX|BASE|SELECT|ASK|CONSTRUCT|DESCRIBE)\b", re.IGNORECASE | re.MULTILINE)


def extract_sparql(text: str) -> str | None:
    """The SPARQL query in a model response, or ``None`` if there is none."""
    blocks = [block.strip() for block in _FENCE.findall(text) if _QUERY_START.search(block)]
    if blocks:
        return blocks[-1]
    match = _QUERY_START.search(text)
    if not match:
        return None
    query = text[match.start():].strip()
    # Prose after the query usually follows a blank line once the braces are balanced.
    depth, end = 0, len(query)
    for index, char in enumerate(query):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                rest = query[index + 1:]
                tail = re.match(r"[^\n]*(?:\n[ \t]*(?:LIMIT|OFFSET|ORDER|GROUP|HAVING|VALUES)\b[^\n]*)*", rest,
                                re.IGNORECASE)
                end = index + 1 + (tail.end() if tail else 0)
    return query[:end].strip() or None
