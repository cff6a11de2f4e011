"""The read-only screen: every untrusted query is screened here before it reaches a store or an endpoint.

Two stages, split by where a hostile query can do harm.

1. :func:`screen` runs in the caller and never parses: one linear pass of a small tokenizer (constant memory,
   possessive patterns, no token list) that skips comments, IRIs and string literals, reads the prologue
   (``BASE``, ``PREFIX``), finds the operation keyword and measures bracket nesting. In the SPARQL 1.1 grammar
   every update operation starts with one of :data:`UPDATE_KEYWORDS`, so an update is refused even when it is
   malformed, whatever its case, comments, literals or ``\\u`` escapes. Nesting deeper than :data:`MAX_NESTING`
   (pyoxigraph's recursive parser overflows its stack near 3,000 levels and takes its process down with SIGSEGV),
   unbalanced brackets, undeclared prefixes and queries longer than :data:`MAX_QUERY_CHARS` are refused here too.
   A refusal is a :class:`Refused` naming the kind of error it is (the KG layer raises its typed error of that
   kind: :func:`sparqlab.kg.base.check_read_only`).
2. Parsing happens only where a crash, a slow parse or a huge intermediate result cannot hurt the caller: in the
   embedded store's worker process (under the query's timeout and the worker's memory cap), which also decides
   with :func:`sparqlab.sparql.tree.uses_service` — from the parsed query, not from tokens — whether the query
   calls ``SERVICE``; or at a remote endpoint, which parses what it is sent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from sparqlab.core.text import lone_surrogate

UPDATE_KEYWORDS = frozenset({"INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY", "WITH"})
"""The keywords an update operation (``Update1`` in the grammar) can start with."""

QUERY_FORMS = {"SELECT": "select", "ASK": "ask", "CONSTRUCT": "graph", "DESCRIBE": "graph"}
"""Query keyword -> form of the result."""

MAX_NESTING = 64
"""Deepest bracket nesting (``{ ( [`` together) a query may have; real queries stay under 15."""

MAX_QUERY_CHARS = 1_000_000
"""Longest query accepted (long VALUES lists stay far below)."""

QueryForm = Literal["select", "ask", "graph"]


class Refused(ValueError):
    """A query the screen refuses. ``kind`` is the error kind it stands for (``update_refused``, ``syntax_error``,
    or ``endpoint_error`` for a query too long to send), the ``kind`` of the KG layer's typed error."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind

_NOT_WORD = r"\s<>\"'{}()\[\];,.\#?$=!&|*/+^"
# Possessive quantifiers and unrolled loops: no backtracking state per character, so a 5 MB literal costs O(1)
# extra memory. A quote or '<' that does not close becomes one token up to the end of its line (or of the text
# for a long string), so a failed attempt never rescans the same characters.
_TOKEN = re.compile(
    rf"""(?P<space>\s++)
      | (?P<comment>\#[^\r\n]*+)
      | (?P<iri><[^<>"{{}}|^`\\\x00-\x20]*+>)
      | (?P<string>'''[^'\\]*+(?:(?:\\.|'(?!''))[^'\\]*+)*+'''
                  |\"\"\"[^"\\]*+(?:(?:\\.|"(?!""))[^"\\]*+)*+\"\"\"
                  |'[^'\\\r\n]*+(?:\\[^\r\n][^'\\\r\n]*+)*+'
                  |"[^"\\\r\n]*+(?:\\[^\r\n][^"\\\r\n]*+)*+")
      | (?P<unterminated>'''.*+|\"\"\".*+|'[^\r\n]*+|"[^\r\n]*+)
      | (?P<var>[?$][^{_NOT_WORD}]++)
      | (?P<word>[^{_NOT_WORD}]++(?:\.[^{_NOT_WORD}]++)*+)
      | (?P<other>.)""",
    re.VERBOSE | re.DOTALL,
)
_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")
_OPEN, _CLOSE = "{([", "})]"

_MAX_MESSAGE = 400
_CHAR_RANGES = re.compile(r"(?:\[[^\[\]]*\.\.=[^\[\]]*\](?:, )?)+(?:\[_\])?")
"""The parser lists the Unicode ranges of name characters in full; one phrase says the same."""


@dataclass(frozen=True)
class Scan:
    """What the tokenizer found: the operation ``keyword`` (upper case, ``None`` if there is none), the
    prefixes the prologue declares, the prefixes the body uses, the deepest bracket nesting, whether brackets
    balance, whether a ``;`` separates operations at the top level, and whether a ``SERVICE`` keyword occurs."""

    keyword: str | None
    declared_prefixes: frozenset[str]
    used_prefixes: frozenset[str]
    max_depth: int
    balanced: bool
    top_level_semicolon: bool
    mentions_service: bool
    unterminated: bool = False


def _tokens(sparql: str) -> Iterator[tuple[str, str]]:
    for match in _TOKEN.finditer(sparql):
        kind = str(match.lastgroup)  # every alternative of the tokenizer is a named group
        if kind not in ("space", "comment"):
            yield kind, match.group()


def expand_escapes(sparql: str) -> str:
    """Apply SPARQL's ``\\uXXXX`` / ``\\UXXXXXXXX`` code-point escapes, which the grammar allows anywhere."""
    def char(match: re.Match) -> str:
        code = int(match.group(1) or match.group(2), 16)
        return chr(code) if code <= 0x10FFFF else match.group()

    return _ESCAPE.sub(char, sparql) if "\\" in sparql else sparql


def scan(sparql: str) -> Scan:
    """Tokenize ``sparql`` (outside comments, IRIs and strings) in one linear pass, without parsing it."""
    declared: set[str] = set()
    used: set[str] = set()
    keyword: str | None = None
    in_prologue, expect = True, ""
    depth = max_depth = 0
    balanced, semicolon, service, unterminated = True, False, False, False
    for kind, text in _tokens(expand_escapes(sparql)):
        unterminated = unterminated or kind == "unterminated"
        upper = text.upper() if kind == "word" else ""
        if in_prologue:
            if expect == "prefix_name":
                if text.endswith(":"):
                    declared.add(text[:-1])
                expect = "prefix_iri"
                continue
            if expect:
                expect = ""
                continue
            if upper in ("BASE", "PREFIX"):
                expect = "base_iri" if upper == "BASE" else "prefix_name"
                continue
            in_prologue = False
            keyword = upper or None
        if kind == "word":
            service = service or upper == "SERVICE"
            prefix, colon, _ = text.partition(":")
            if colon and prefix != "_" and not text.startswith("@"):
                used.add(prefix)
        elif kind != "other":
            continue
        elif text in _OPEN:
            depth += 1
            max_depth = max(max_depth, depth)
        elif text in _CLOSE:
            depth -= 1
            balanced = balanced and depth >= 0
        elif text == ";" and depth == 0:
            semicolon = True
    return Scan(keyword, frozenset(declared), frozenset(used), max_depth, balanced and depth == 0, semicolon,
                service, unterminated)


def screen(sparql: str, prefixes: dict[str, str] | None = None) -> Scan:
    """Stage 1 of the guard (see the module docstring): refuse updates and what no parser should be given.

    ``prefixes`` are those the KG predefines (its profile's). Raises :class:`Refused` (of kind
    ``update_refused``, ``syntax_error`` or, too long, ``endpoint_error``); returns the :class:`Scan`, whose
    ``keyword`` is one of :data:`QUERY_FORMS`.
    """
    if not isinstance(sparql, str):
        raise _syntax_error(f"a query is text, not {type(sparql).__name__}")
    if len(sparql) > MAX_QUERY_CHARS:
        raise Refused("endpoint_error", f"query refused: {len(sparql):,} characters, more than the limit of "
                      f"{MAX_QUERY_CHARS:,}; move long VALUES lists into several queries")
    surrogate = lone_surrogate(sparql)
    if surrogate:
        raise _syntax_error("the query holds a lone UTF-16 surrogate, which is not text "
                            + surrogate.removeprefix("value "))
    found = scan(sparql)
    if found.keyword in UPDATE_KEYWORDS:
        raise Refused("update_refused",
                      f"SPARQL Update ({found.keyword}) refused: knowledge graphs are read-only here. "
                      "Only SELECT, ASK, CONSTRUCT and DESCRIBE queries are run.")
    if found.keyword not in QUERY_FORMS:
        seen = f"found {found.keyword!r}" if found.keyword else "the query is empty"
        raise _syntax_error(f"expected SELECT, ASK, CONSTRUCT or DESCRIBE ({seen})")
    if found.max_depth > MAX_NESTING:
        raise _syntax_error(f"brackets nested {found.max_depth} deep, more than the limit of {MAX_NESTING}; "
                            "flatten the query (nested groups can be written as one group)")
    if found.unterminated:
        raise _syntax_error("a string literal is not closed (a quote is missing)")
    if not found.balanced:
        raise _syntax_error("unbalanced brackets ({ } ( ) [ ] do not pair up)")
    if found.top_level_semicolon:
        raise _syntax_error("';' after the query (one query per request)")
    undeclared = sorted(found.used_prefixes - found.declared_prefixes - set(prefixes or ()))
    if undeclared:
        predefined = f"; predefined here: {', '.join(p + ':' for p in sorted(prefixes))}" if prefixes else ""
        raise _syntax_error(f"undeclared prefix {', '.join(p + ':' for p in undeclared)}"
                            f" (declare it with PREFIX{predefined})")
    return found


def _syntax_error(message: str) -> Refused:
    return Refused("syntax_error", f"SPARQL syntax error: {message}")


_VIRTUOSO_OPERATORS = {"OR": "||", "AND": "&&"}


def portable_query(sparql: str, prefixes: dict[str, str] | None = None) -> str:
    """``sparql`` in a form every SPARQL 1.1 parser reads, meaning the same; nothing else changes:

    - a prefixed name whose local part holds two or more dots (Freebase's ``ns:location.country.languages_spoken``)
      becomes a full IRI: the grammar allows such names, but oxigraph 0.5's parser (the embedded store and
      ``oxigraph serve``) rejects them ("expected ['0'..='9']");
    - the bare words ``OR`` / ``AND`` (Virtuoso's spelling, used by every WebQSP and CWQ gold query) become
      ``||`` / ``&&``: outside strings, IRIs and comments no valid SPARQL 1.1 query holds them.

    Prefixes come from the query's own prologue, else ``prefixes`` (the profile's); names with an unknown prefix are
    left alone.
    """
    if sparql.count(".") < 2 and not re.search(r"\b(?:OR|AND)\b", sparql, re.IGNORECASE):
        return sparql
    table = dict(prefixes or {})
    parts: list[str] = []
    expect = ""
    for match in _TOKEN.finditer(sparql):
        kind, text = match.lastgroup, match.group()
        if kind in ("space", "comment"):
            parts.append(text)
            continue
        if expect == "prefix_name" and text.endswith(":"):
            expect, declaring = "prefix_iri", text[:-1]
        elif expect == "prefix_iri" and kind == "iri":
            table[declaring] = text[1:-1]
            expect = ""
        elif kind == "word" and text.upper() == "PREFIX":
            expect = "prefix_name"
        elif kind == "word" and text.upper() in _VIRTUOSO_OPERATORS:
            text = _VIRTUOSO_OPERATORS[text.upper()]
        elif kind == "word" and ":" in text:
            prefix, _, local = text.partition(":")
            if local.count(".") >= 2 and prefix in table and "\\" not in local:
                text = f"<{table[prefix]}{local}>"
        parts.append(text)
    return "".join(parts)


def syntax_message(sparql: str, message: str) -> str:
    """The parser's message, shortened, with the offending line so a reader (or an agent) can fix it."""
    message = " ".join(message.split())
    message = _CHAR_RANGES.sub("a name character", message)
    if len(message) > _MAX_MESSAGE:
        message = message[:_MAX_MESSAGE] + " …"
    position = re.match(r"error at (\d+):(\d+)", message)
    if position:
        lines = sparql.splitlines() or [""]
        line_no = min(int(position.group(1)), len(lines))
        message += f" | line {line_no}: {lines[line_no - 1].strip()[:200]}"
    return f"SPARQL syntax error: {message}"
