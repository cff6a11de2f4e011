"""Triple patterns read out of a (generated, untrusted) SPARQL query, for the type state and the [BLOCKED] check.

The query is read by the one SPARQL parser (:func:`sparqlab.sparql.tree.parse_query`) in its tolerant mode: an
agent's draft is checked before the KG sees it, so a pattern the parser cannot read is passed over and the rest
still counts. Prefixed names are expanded with the query's own PREFIX declarations and the KG profile's
predefined prefixes; ``;`` and ``,`` abbreviations are expanded; FILTER / BIND / VALUES expressions and the
solution modifiers hold no patterns (a FILTER's EXISTS patterns do). Terms under an unknown prefix are kept as
written, so they never match a property or a class. A property path stays one predicate (``<…P31>/<…P279>*``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from sparqlab.sparql.tree import (
    RDF,
    Filter,
    GraphOf,
    Group,
    Minus,
    Optional,
    Query,
    Service,
    SparqlParseError,
    SubSelect,
    Term,
    UnionOf,
    default_term,
    parse_query,
)
from sparqlab.sparql.tree import Triple as TreeTriple

RDF_TYPE = RDF + "type"


@dataclass(frozen=True)
class Triple:
    """One triple pattern: each term an expanded IRI, a ``?var``, a literal (quoted), or a path as ``<iri>``
    steps with their operators."""

    subject: str
    predicate: str
    object: str


def _text(term: Term) -> str:
    """An IRI bare, a variable as ``?name``, anything else in SPARQL syntax (a literal starts with a quote)."""
    return term.value if term.kind in ("iri", "pname") else default_term(term)


def _predicate(tokens: list) -> str:
    """One term bare; a path with each step as ``<iri>`` and its operators, without spaces."""
    if len(tokens) == 1 and isinstance(tokens[0], Term):
        return _text(tokens[0])
    return "".join(f"<{t.value}>" if isinstance(t, Term) and t.kind in ("iri", "pname") else
                   default_term(t) if isinstance(t, Term) else t for t in tokens)


def _tree_triples(query: Query) -> Iterator[TreeTriple]:
    """The query's triple patterns in the order they are written (named subqueries, CONSTRUCT template, WHERE)."""
    for _, named in query.named:
        yield from _tree_triples(named)
    yield from query.template
    yield from _group_triples(query.where)


def _group_triples(group: Group) -> Iterator[TreeTriple]:
    for element in group.elements:
        if isinstance(element, TreeTriple):
            yield element
        elif isinstance(element, Group):
            yield from _group_triples(element)
        elif isinstance(element, Optional | Minus | GraphOf | Service):
            yield from _group_triples(element.group)
        elif isinstance(element, UnionOf):
            for branch in element.groups:
                yield from _group_triples(branch)
        elif isinstance(element, Filter):
            for exists in element.exists:
                yield from _group_triples(exists)
        elif isinstance(element, SubSelect):
            yield from _tree_triples(element.query)


def triple_patterns(sparql: str, prefixes: Mapping[str, str] | None = None) -> list[Triple]:
    """Every triple pattern of ``sparql`` in textual order (see the module docstring for what is read); none for
    an empty query or one nested deeper than the parser's limit (the screen refuses those before they run)."""
    try:
        query = parse_query(sparql, prefixes, tolerant=True)
    except SparqlParseError:
        return []
    return [Triple(_text(t.subject), _predicate(t.predicate), _text(t.object)) for t in _tree_triples(query)]


def _first_step(predicate: str) -> str:
    """The first IRI of an expanded path (``<a>/<b>*`` -> ``a``); a plain predicate itself."""
    return predicate[1:predicate.index(">")] if predicate.startswith("<") and ">" in predicate else predicate


def type_patterns(triples: list[Triple], type_predicate: str) -> list[tuple[str, str]]:
    """``(term, class)`` for each ``term <type> <class>`` pattern (``rdf:type``/``a`` or the profile's type
    predicate, also as the first step of a ``type/subclass*`` path) whose class is an IRI."""
    return [(t.subject, t.object) for t in triples
            if _first_step(t.predicate) in (type_predicate, RDF_TYPE) and "://" in t.object
            and not t.object.startswith(("?", '"', "'"))]
