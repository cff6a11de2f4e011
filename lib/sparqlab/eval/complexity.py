"""How complex a SPARQL query is, in a few bucketed features, so results can be broken down by query complexity.

Features are read from the query's parse tree (:func:`sparqlab.eval.analysis.analysed_query`; not from its text,
so a ``FILTER`` in a string literal or comment does not count): the number of triple patterns (in every group,
optional, union and subquery; not in SERVICE or EXISTS patterns: :mod:`sparqlab.eval.analysis`), and whether the
query filters (``FILTER`` or ``HAVING``), aggregates (``GROUP BY`` / ``COUNT`` ...), orders (``ORDER BY``), has an
``OPTIONAL`` or a ``UNION`` — anywhere, subqueries included. Prefixes need not be declared.
"""

from __future__ import annotations

from typing import Any

from sparqlab.eval.analysis import analysed_parts, analysed_query
from sparqlab.sparql.tree import Filter, Optional, Triple, UnionOf, aggregates

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
    tree = analysed_query(sparql) if sparql else None  # parses each distinct query once (cached there)
    if tree is None:
        return dict.fromkeys(FEATURES)
    queries, groups = analysed_parts(tree)
    elements = [e for group in groups for e in group.elements]
    triples = sum(isinstance(e, Triple) for e in elements)
    return {  # in the order of FEATURES
        "triples": triples,
        "triples_bucket": triples_bucket(triples),
        "filter": any(isinstance(e, Filter) for e in elements) or any(q.having is not None for q in queries),
        "aggregate": any(aggregates(q) for q in queries),
        "order_by": any(q.order_by is not None for q in queries),
        "optional": any(isinstance(e, Optional) for e in elements),
        "union": any(isinstance(e, UnionOf) for e in elements),
    }
