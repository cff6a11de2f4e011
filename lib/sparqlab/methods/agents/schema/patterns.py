"""Triple patterns read out of a (generated, untrusted) SPARQL query, for the type state and the [BLOCKED] check.

This is a tokenizer, not a SPARQL evaluator: it walks the WHERE body, expands prefixed names with the query's
own PREFIX declarations and the KG profile's predefined prefixes, follows ``;`` and ``,`` abbreviations, and skips
the insides of FILTER / BIND / VALUES and similar expressions. Terms it cannot read are kept as they are
written, so they simply never match a property or a class. Property paths stay one token (``wdt:P31/wdt:P279*``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"""
    (?P<iri><[^<>"\s]*>)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')(?:@[\w-]+|\^\^\S+)?
  | (?P<var>[?$]\w+)
  | (?P<path>(?:[\w-]*:[\w.%-]*|<[^<>"\s]*>|\ba\b)(?:[/|^](?:\^?(?:[\w-]*:[\w.%-]*|<[^<>"\s]*>|\ba\b))[*+?]?)+[*+?]?
             |(?:[\w-]*:[\w.%-]*|<[^<>"\s]*>)[*+?])
  | (?P<pname>[\w-]*:[\w.%-]*(?<!\.))
  | (?P<number>[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<word>[A-Za-z_]\w*)
  | (?P<punct>[{}().;,\[\]])
  | (?P<other>\S)
""", re.VERBOSE)

_EXPRESSION_KEYWORDS = {"FILTER", "BIND", "HAVING", "ORDER", "GROUP"}
_PREFIX_DECL = re.compile(r"PREFIX\s+([\w-]*):\s*<([^>]*)>", re.IGNORECASE)
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


@dataclass(frozen=True)
class Triple:
    """One triple pattern: each term an expanded IRI, a ``?var``, a literal as written, or a path as written."""

    subject: str
    predicate: str
    object: str


def _expand(token: str, kind: str, prefixes: dict[str, str]) -> str:
    if kind == "iri":
        return token[1:-1]
    if kind == "var":
        return "?" + token[1:]
    if kind == "word" and token == "a":
        return RDF_TYPE
    if kind == "pname":
        prefix, _, local = token.partition(":")
        if prefix in prefixes:
            return prefixes[prefix] + local
    if kind == "path":  # each step as <expanded IRI>, operators kept: <...P31>/<...P279>*
        return re.sub(r"<[^<>\s]*>|[\w-]*:[\w.%-]*|\ba\b",
                      lambda m: "<" + _expand(m.group(), "word" if m.group() == "a" else
                                              "iri" if m.group().startswith("<") else "pname", prefixes) + ">",
                      token)
    return token


def _body(sparql: str) -> str:
    """The text from the first ``{`` on (prologue and projection are not patterns)."""
    index = sparql.find("{")
    return sparql[index:] if index >= 0 else ""


def triple_patterns(sparql: str, prefixes: dict[str, str] | None = None) -> list[Triple]:
    """Every triple pattern of ``sparql`` in textual order (see the module docstring for what is read)."""
    known = {**(prefixes or {}), **{name: iri for name, iri in _PREFIX_DECL.findall(sparql)}}
    tokens = [(m.lastgroup, m.group()) for m in _TOKEN.finditer(_body(sparql))]
    triples: list[Triple] = []
    terms: list[str] = []
    subject = predicate = None
    index = 0
    while index < len(tokens):
        kind, text = tokens[index]
        upper = text.upper()
        if kind == "word" and upper == "SELECT":  # a subquery's projection is no pattern
            while index < len(tokens) and tokens[index][1] != "{" and tokens[index][1].upper() != "WHERE":
                index += 1
            continue
        if kind == "word" and upper in _EXPRESSION_KEYWORDS or kind == "word" and upper == "VALUES":
            index = _skip_expression(tokens, index + 1, values=upper == "VALUES")
            terms, subject, predicate = [], None, None
            continue
        index += 1
        if kind == "punct":
            if text == ";" and subject is not None:
                terms, predicate = [subject], None
            elif text == "," and subject is not None and predicate is not None:
                terms = [subject, predicate]
            else:  # '.', braces and brackets end a pattern
                terms, subject, predicate = [], None, None
            continue
        if kind == "word" and text != "a":  # OPTIONAL, UNION, MINUS, SERVICE, GRAPH ...
            terms, subject, predicate = [], None, None
            continue
        terms.append(_expand(text, kind, known))
        if len(terms) == 3:
            subject, predicate = terms[0], terms[1]
            triples.append(Triple(*terms))
            terms = []
    return triples


def _skip_expression(tokens: list[tuple[str, str]], index: int, values: bool) -> int:
    """Index after a FILTER/BIND/... expression (balanced parentheses, function calls, ORDER/GROUP BY keys) or
    a VALUES block (up to its closing ``}``)."""
    if values:
        while index < len(tokens) and tokens[index][1] != "{":
            index += 1
        depth = 0
        while index < len(tokens):
            text = tokens[index][1]
            depth += text == "{"
            depth -= text == "}"
            index += 1
            if depth == 0:
                return index
        return index
    depth = 0
    while index < len(tokens):
        kind, text = tokens[index]
        followed_by_paren = index + 1 < len(tokens) and tokens[index + 1][1] == "("
        if text == "(":
            depth += 1
        elif text == ")":
            depth -= 1
            if depth <= 0:
                return index + 1
        elif depth == 0 and not (kind == "var" or kind == "word" and (
                followed_by_paren or text.upper() in ("NOT", "EXISTS", "BY"))):
            return index
        index += 1
    return index


def _first_step(predicate: str) -> str:
    """The first IRI of an expanded path (``<a>/<b>*`` -> ``a``); a plain predicate itself."""
    return predicate[1:predicate.index(">")] if predicate.startswith("<") and ">" in predicate else predicate


def type_patterns(triples: list[Triple], type_predicate: str) -> list[tuple[str, str]]:
    """``(term, class)`` for each ``term <type> <class>`` pattern (``rdf:type``/``a`` or the profile's type
    predicate, also as the first step of a ``type/subclass*`` path) whose class is an IRI."""
    return [(t.subject, t.object) for t in triples
            if _first_step(t.predicate) in (type_predicate, RDF_TYPE) and "://" in t.object
            and not t.object.startswith(("?", '"', "'"))]
