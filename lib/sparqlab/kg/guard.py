"""The read-only guard: every query is checked here before it reaches a store or an endpoint.

Two steps. (1) A small tokenizer skips comments, IRIs and string literals, reads the prologue (``BASE``,
``PREFIX``) and finds the operation keyword. In the SPARQL 1.1 grammar every update operation starts with one of
:data:`UPDATE_KEYWORDS`, so an update is recognised (and refused) even when it is malformed, whatever its case,
comments or literals. (2) Anything else must parse as a SPARQL 1.1 query: pyoxigraph's parser decides, against
an empty in-memory store, with the KG profile's predefined prefixes; a parse failure is a
:class:`~sparqlab.kg.errors.SparqlSyntaxError` carrying the parser's position and message.

pyoxigraph has no parse-only entry point, and on an empty store it evaluates ASK and aggregate queries at once,
which is free except for ``SERVICE`` (a network call). The copy given to the parser therefore has each
``SERVICE [SILENT]`` replaced by ``GRAPH`` padded to the same length: the grammar of the two clauses is the same
and error positions stay valid.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from sparqlab.kg.errors import SparqlSyntaxError, UpdateRefused

UPDATE_KEYWORDS = frozenset({"INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY", "WITH"})
"""The keywords an update operation (``Update1`` in the grammar) can start with."""

QueryForm = Literal["select", "ask", "graph"]

_TOKEN = re.compile(
    r"""(?P<space>\s+)
      | (?P<comment>\#[^\r\n]*)
      | (?P<iri><[^<>"{}|^`\\\x00-\x20]*>)
      | (?P<string>'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"
                  |'(?:[^'\\\r\n]|\\.)*'|"(?:[^"\\\r\n]|\\.)*")
      | (?P<var>[?$][^\s<>"'{}()\[\];,.\#?$=!&|*/+^-]+)
      | (?P<word>[^\s<>"'{}()\[\];,\#?$=!&|*/+^]+)
      | (?P<other>.)""",
    re.VERBOSE | re.DOTALL,
)

_MAX_MESSAGE = 400
_CHAR_RANGES = re.compile(r"(?:\[[^\[\]]*\.\.=[^\[\]]*\](?:, )?)+(?:\[_\])?")
"""The parser lists the Unicode ranges of name characters in full; one phrase says the same."""


@dataclass(frozen=True)
class Scan:
    """What the tokenizer found: the operation ``keyword`` (upper case, ``None`` if there is none), the
    prefixes the prologue declares, and the spans of ``SERVICE`` / ``SERVICE SILENT`` clauses' keywords."""

    keyword: str | None
    declared_prefixes: frozenset[str]
    service_spans: tuple[tuple[int, int], ...]

    @property
    def uses_service(self) -> bool:
        return bool(self.service_spans)


def scan(sparql: str) -> Scan:
    """Tokenize ``sparql`` (outside comments, IRIs and strings) without parsing it."""
    tokens = [(m.lastgroup, m.group(), m.start(), m.end()) for m in _TOKEN.finditer(sparql)]
    tokens = [t for t in tokens if t[0] not in ("space", "comment")]
    declared: set[str] = set()
    keyword = None
    i = 0
    while i < len(tokens):
        kind, text, _, _ = tokens[i]
        upper = text.upper() if kind == "word" else ""
        if upper == "BASE":
            i += 2
        elif upper == "PREFIX":
            if i + 1 < len(tokens) and tokens[i + 1][1].endswith(":"):
                declared.add(tokens[i + 1][1][:-1])
            i += 3
        else:
            keyword = upper or None
            break
    spans = []
    for j, (kind, text, start, end) in enumerate(tokens):
        if kind == "word" and text.upper() == "SERVICE":
            following = tokens[j + 1] if j + 1 < len(tokens) else None
            if following and following[0] == "word" and following[1].upper() == "SILENT":
                end = following[3]
            spans.append((start, end))
    return Scan(keyword, frozenset(declared), tuple(spans))


def check_read_only(sparql: str, prefixes: dict[str, str] | None = None) -> QueryForm:
    """Refuse SPARQL Update, require a parseable query; returns its form (``select``, ``ask`` or ``graph``).

    ``prefixes`` are those the KG predefines (its profile's). Raises :class:`UpdateRefused` or
    :class:`SparqlSyntaxError`.
    """
    import pyoxigraph

    found = scan(sparql)
    if found.keyword in UPDATE_KEYWORDS:
        raise UpdateRefused(
            f"SPARQL Update ({found.keyword}) refused: knowledge graphs are read-only here. "
            "Only SELECT, ASK, CONSTRUCT and DESCRIBE queries are run."
        )
    try:
        result = pyoxigraph.Store().query(_without_service(sparql, found), prefixes=prefixes or None)
    except SyntaxError as error:
        raise SparqlSyntaxError(_syntax_message(sparql, str(error))) from None
    if isinstance(result, pyoxigraph.QueryBoolean):
        return "ask"
    if isinstance(result, pyoxigraph.QueryTriples):
        return "graph"
    return "select"


def _without_service(sparql: str, found: Scan) -> str:
    for start, end in reversed(found.service_spans):
        sparql = sparql[:start] + "GRAPH".ljust(end - start) + sparql[end:]
    return sparql


def _syntax_message(sparql: str, message: str) -> str:
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
