"""How complex a SPARQL query is, in a few bucketed features, so results can be broken down by query complexity.

Features are read from rdflib's SPARQL algebra of the query (not from its text, so a ``FILTER`` in a string
literal or comment does not count): the number of triple patterns (basic graph patterns and property paths, in
every group, optional and subquery), and whether the query filters, aggregates (``GROUP BY`` / ``COUNT`` ...),
orders (``ORDER BY``), has an ``OPTIONAL`` or a ``UNION``. Prefixes need not be declared: an undeclared prefix is
given a placeholder namespace, which changes no feature.
"""

from __future__ import annotations

from typing import Any

from sparqlab.eval.algebra import parse_algebra

TRIPLE_BUCKETS = ((1, "1"), (2, "2"), (4, "3-4"), (None, "5+"))
"""Upper bounds (inclusive) and names of the ``triples_bucket`` feature; 0 triples is ``"0"``."""

FEATURES = ("triples", "triples_bucket", "filter", "aggregate", "order_by", "optional", "union")
"""The keys :func:`query_complexity` returns (each ``None`` when the query does not parse)."""


def triples_bucket(count: int) -> str:
    """The bucket of a triple-pattern count (see :data:`TRIPLE_BUCKETS`)."""
    if count == 0:
        return "0"
    return next(name for bound, name in TRIPLE_BUCKETS if bound is None or count <= bound)


def query_complexity(sparql: str | None) -> dict[str, Any]:
    """The features of :data:`FEATURES` for one query; all ``None`` for no query or one that does not parse."""
    algebra = parse_algebra(sparql) if sparql else None  # parses each distinct query once (cached there)
    if algebra is None:
        return dict.fromkeys(FEATURES)
    found = {"triples": 0, "filter": False, "aggregate": False, "order_by": False, "optional": False,
             "union": False}
    _walk(algebra, found, set())
    found["triples_bucket"] = triples_bucket(found["triples"])
    return {key: found[key] for key in FEATURES}


def _walk(node: Any, found: dict[str, Any], seen: set[int]) -> None:
    """Visit every algebra node once, counting triples and noting the operators of interest."""
    if id(node) in seen:
        return
    seen.add(id(node))
    name = getattr(node, "name", None)
    if name == "BGP":
        found["triples"] += len(node.get("triples") or [])
    elif name == "Filter" and getattr(node.get("expr"), "name", "") != "TrueFilter":
        found["filter"] = True
    elif name in ("AggregateJoin", "Group"):
        found["aggregate"] = True
    elif name == "OrderBy":
        found["order_by"] = True
    elif name == "LeftJoin":
        found["optional"] = True
    elif name == "Union":
        found["union"] = True
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list | tuple) else ()
    for child in children:
        if isinstance(child, dict | list | tuple):
            _walk(child, found, seen)
