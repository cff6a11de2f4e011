"""rdflib's SPARQL algebra of a query, for analysis only (error subtypes, complexity features).

These queries are model-written and parsed in the caller's process, so the parse is bounded first: rdflib's
pure-Python parser takes time without limit on a very long query and recurses on deep nesting. The guard's linear
scan (:func:`sparqlab.kg.guard.scan`) decides what is handed to it: at most :data:`MAX_ANALYSED_CHARS` characters,
brackets balanced and nested no deeper than the guard allows, strings closed. Anything else has no algebra here
(``None``), like a query that does not parse; executing it is the KG layer's business, under its own limits.

Prefixes a query uses without declaring them (KG profiles add them at execution time) are declared under a
placeholder namespace, so the query parses and equal prefixed names stay equal.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from sparqlab.kg.guard import MAX_NESTING, scan

MAX_ANALYSED_CHARS = 50_000
"""Longest query parsed for analysis (model-written queries are a few hundred characters)."""

PLACEHOLDER_NAMESPACE = "urn:sparqlab:prefix:{prefix}/"


@lru_cache(maxsize=4096)
def parse_algebra(sparql: str) -> Any | None:
    """The rdflib algebra (``Query.algebra``) of ``sparql``, or ``None`` when it does not parse or is outside
    the bounds in the module docstring."""
    if not isinstance(sparql, str) or len(sparql) > MAX_ANALYSED_CHARS:
        return None
    found = scan(sparql)
    if found.max_depth > MAX_NESTING or not found.balanced or found.unterminated:
        return None
    from rdflib.plugins.sparql.algebra import translateQuery
    from rdflib.plugins.sparql.parser import parseQuery

    missing = sorted(found.used_prefixes - found.declared_prefixes)
    prologue = "".join(f"PREFIX {p}: <{PLACEHOLDER_NAMESPACE.format(prefix=p)}>\n" for p in missing)
    try:
        return translateQuery(parseQuery(prologue + sparql)).algebra
    except Exception:  # noqa: BLE001 - rdflib raises pyparsing errors, its own and bare Exceptions alike
        return None
