"""The parse tree of a model-written query for analysis (error subtypes, complexity features), bounded first.

These queries are untrusted and parsed in the caller's process, so the screen's linear scan
(:func:`sparqlab.sparql.screen.scan`) decides what reaches the parser (:func:`sparqlab.sparql.tree.parse_query`):
at most :data:`MAX_ANALYSED_CHARS` characters, brackets balanced and nested no deeper than the screen allows,
strings closed. Anything else has no tree here (``None``), like a query that does not parse; executing it is the
KG layer's business, under its own limits. Prefixes a query uses without declaring them are read with the KG
layer's predefined ones (:func:`sparqlab.kg.profiles.known_prefixes`), as structural EM reads them; a name under
an unknown prefix stays as written, so equal prefixed names stay equal.

What a query asks of the KG is read from :func:`analysed_parts`: a ``SERVICE`` group is another service's pattern
(on Wikidata mostly the label service), and an ``EXISTS`` pattern binds nothing — it is its FILTER's test, counted
as that filter, its constants the filter's — so neither adds triple patterns, relations or operators.
"""

from __future__ import annotations

from functools import lru_cache

from sparqlab.kg.profiles import known_prefixes
from sparqlab.sparql.screen import MAX_NESTING, scan
from sparqlab.sparql.tree import Group, Query, SparqlParseError, parse_query, parts_of

MAX_ANALYSED_CHARS = 50_000
"""Longest query parsed for analysis (model-written queries are a few hundred characters)."""


@lru_cache(maxsize=4096)
def analysed_query(sparql: str) -> Query | None:
    """The tree of ``sparql``, or ``None`` when it does not parse or is outside the bounds in the module
    docstring."""
    if not isinstance(sparql, str) or len(sparql) > MAX_ANALYSED_CHARS:
        return None
    found = scan(sparql)
    if found.max_depth > MAX_NESTING or not found.balanced or found.unterminated:
        return None
    try:
        return parse_query(sparql, known_prefixes())
    except SparqlParseError:
        return None


def analysed_parts(tree: Query) -> tuple[list[Query], list[Group]]:
    """The queries (the query and its sub-SELECTs) and the groups the analysis reads (module docstring)."""
    parts = list(parts_of(tree, services=False, exists=False))
    return [p for p in parts if isinstance(p, Query)], [p for p in parts if isinstance(p, Group)]
