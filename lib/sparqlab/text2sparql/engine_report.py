"""Where one store's result of a query differs from another's, and why.

Scores differ between SPARQL engines (the challenge's users compare Fuseki, Virtuoso, Tentris and oxigraph) even
for the same query over the same KG (docs/engines.md). Two comparisons use the same causes:

- :func:`engine_report`: given an answers file and the organisers' **system result set** of the same answers
  (their store's flattened results), every qname whose flattened result on our store is not theirs;
- :func:`store_difference`: one query run on two stores of the workbench (the embedded store, oxigraph's server,
  Virtuoso: :func:`execution` of each), row for row, as ``benchmarks/engine_agreement.py`` and a method's answers
  on two engines compare them.

The evidence-based cause (:data:`CAUSES`, decided by :func:`explain_difference` from the query text, the two
value sets and each side's error) is one of:

- ``truncation``: a store cut the result at its row cap (Virtuoso's ``ResultSetMaxRows``, 10,000 by default);
- ``cast``: a store refuses a cast the query uses (oxigraph: ``xsd:int(...)`` and the other derived-integer
  casts);
- ``not a query``: the answer is empty or not a query; one store refuses it, the other answered a status line
  (Virtuoso's ``Commit -- done``) that then counts as a retrieved value;
- ``syntax``: one store refuses the query as malformed, the other answered it (a lenient parser);
- ``error``: one store fails the query at run time where the other answers it — Virtuoso stops a whole query at a
  division by zero (SPARQL leaves that one binding unbound) and refuses ``BNODE()`` in a SELECT;
- ``numeric form``: the same numbers written differently (``3`` / ``3.0`` / ``3E0``, a double printed with six
  digits, a boolean as ``1``), equal once read as numbers;
- ``integer division``: a division of integers, which Virtuoso evaluates as an integer (``7/2`` is ``3``) and
  SPARQL as a decimal (``3.5``);
- ``unordered rows``: the same rows in another order, and the query has no ORDER BY (each store its own order);
- ``ordering tie``: ORDER BY ... LIMIT/OFFSET, where the two stores keep different rows of equal sort key;
- ``unordered LIMIT``: LIMIT/OFFSET without ORDER BY, which keeps an unspecified subset of the rows (each store
  its own);
- ``path``: a property path (``/``, ``|``, ``^``, ``*``, ``+``, ``?``) whose evaluation differs (duplicates,
  zero-length paths);
- ``IRI comparison``: a FILTER comparing terms with ``<``, ``>``, ``=`` or ``!=`` where one side can be an IRI
  (engines differ on ordering and comparing IRIs, and on IRI-vs-literal equality);
- ``their failure``: the other store's result is empty while this one answers (its request failed or timed
  out; an organisers' result set records no error);
- ``unexplained``: none of the above.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from sparqlab.data.question import Question
from sparqlab.kg.base import KnowledgeGraph
from sparqlab.kg.errors import KGError

CAUSES = ("truncation", "cast", "not a query", "syntax", "error", "numeric form", "integer division",
          "unordered rows", "ordering tie", "unordered LIMIT", "path", "IRI comparison", "their failure",
          "unexplained")
"""The causes :func:`explain_difference` can name, in the order it tries them."""

STATUS_LINES = ("Commit -- done\n",)
"""Values a store answers a non-query with (Virtuoso): never a query result."""

_ORDER_LIMIT = re.compile(r"\bORDER\s+BY\b.*\b(LIMIT|OFFSET)\b", re.IGNORECASE | re.DOTALL)
_LIMIT = re.compile(r"\b(LIMIT|OFFSET)\s+\d", re.IGNORECASE)
_PATH = re.compile(r"(?:[\w:>])\s*(?:/|\|)\s*[\w<:^]|\^\s*[<\w]|[>\w]\s*[*+?](?:\s|\.|;|\))", re.UNICODE)
_DIVISION = re.compile(r"(?:\?\w+|\b\d+|\))\s*/\s*(?:\?\w+|\d|\()")
"""A division in an expression: a variable, number or parenthesis on either side (a path's ``/`` stands between
IRIs or prefixed names)."""
_ORDER_BY = re.compile(r"\bORDER\s+BY\b", re.IGNORECASE)
_SYNTAX_ERRORS = ("syntax_error", "update_refused")
_COMPARISON = re.compile(r"FILTER\s*\(?[^)]*(?:\?\w+|<[^>]*>)\s*(?:!=|=|<|>)\s*(?:\?\w+|<[^>]*>)",
                         re.IGNORECASE | re.DOTALL)


_BOOLEANS = {"true": 1.0, "false": 0.0}


def _number(value: str) -> float | None:
    """A value read as a number (a boolean as 1 or 0, as Virtuoso writes it); ``None`` for any other value."""
    try:
        return float(value)
    except ValueError:
        return _BOOLEANS.get(value)


def _numeric_equal(ours: Iterable[str], theirs: Iterable[str]) -> bool:
    """The two value sets are equal once every value that reads as a number is taken by its value, to six
    significant digits (Virtuoso prints doubles with six)."""
    def canonical(values: Iterable[str]) -> set[Any]:
        return {("n", float(f"{number:.6g}")) if (number := _number(v)) is not None else ("s", v) for v in values}

    return canonical(ours) == canonical(theirs)


def _all_numbers(*sides: Iterable[str]) -> bool:
    values = [v for side in sides for v in side]
    return bool(values) and all(_number(v) is not None for v in values)


def _strip_comments_and_strings(sparql: str) -> str:
    """The query without string literals, IRIs' insides kept; enough for the syntax cues below."""
    text = re.sub(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'', '""', sparql)
    return re.sub(r"#[^\n>]*$", "", text, flags=re.MULTILINE)


def explain_difference(query: str | None, ours: Mapping[str, int], theirs: Mapping[str, int],
                       error: str | None, their_error: str | None = None, *, truncated: bool = False,
                       same_rows_reordered: bool = False) -> tuple[str, str]:
    """``(cause, why)`` for one differing query (see :data:`CAUSES`): ``ours`` / ``theirs`` are the two stores'
    flattened results, ``error`` / ``their_error`` their error kinds (``None``: it answered; an organisers' result
    set records none), ``truncated`` whether either result was cut at a row cap, ``same_rows_reordered`` whether
    the two results hold the same rows in another order."""
    text = _strip_comments_and_strings(query or "")
    errors = {error, their_error} - {None}
    if truncated:
        return "truncation", "a store cut the result at its row cap (Virtuoso's ResultSetMaxRows), the other did not"
    if "unsupported_function" in errors:
        return "cast", "a store refuses a cast function the query uses (e.g. xsd:int on oxigraph); the other evaluates it"
    if not (query or "").strip() or set(theirs) & set(STATUS_LINES):
        return "not a query", ("the answer holds no query; one store answered a status line "
                               f"({', '.join(repr(v) for v in set(theirs) & set(STATUS_LINES)) or 'nothing'}), "
                               "the other refuses it")
    if errors & set(_SYNTAX_ERRORS):
        other = theirs if error in _SYNTAX_ERRORS else ours
        kind = error if error in _SYNTAX_ERRORS else their_error
        return "syntax", (f"a store refuses the query ({kind}); the other "
                          + ("answered it" if other else "returned nothing either"))
    if errors:
        return "error", (f"a store fails the query at run time ({' / '.join(sorted(errors))}: e.g. Virtuoso's division "
                         "by zero or its refusal of BNODE()); the other answers it")
    if same_rows_reordered:
        if _ORDER_BY.search(text):
            return "ordering tie", "the same rows; those of equal sort key come in each store's own order"
        return "unordered rows", "the same rows in another order: without ORDER BY each store keeps its own order"
    if ours and _numeric_equal(ours, theirs):
        return "numeric form", "the same numbers, written differently (read as numbers they are equal)"
    if _DIVISION.search(text) and _all_numbers(ours, theirs):
        return "integer division", ("a division of integers: Virtuoso keeps it an integer (7/2 = 3), SPARQL "
                                    "makes it a decimal (3.5)")
    if _ORDER_LIMIT.search(text):
        return "ordering tie", "ORDER BY ... LIMIT/OFFSET keeps other rows of equal sort key on each store"
    if _LIMIT.search(text):
        return "unordered LIMIT", "LIMIT/OFFSET without ORDER BY keeps an unspecified subset of the rows on each store"
    if _PATH.search(text.split("{", 1)[-1]):
        return "path", "a property path, evaluated differently by the two stores"
    if _COMPARISON.search(text):
        return "IRI comparison", "a FILTER comparing terms that can be IRIs (ordering / equality differs)"
    if ours and not theirs:
        return "their failure", "the other store returned nothing (the request failed or timed out there)"
    return "unexplained", "none of the known causes matches"


def execution(kg: KnowledgeGraph, sparql: str, timeout_s: float | None = None) -> dict[str, Any]:
    """One query on one store, as :func:`store_difference` compares it: its rows (each a sorted tuple of
    ``(variable, value)``, in the store's order; ASK as one ``("boolean", "true"/"false")`` row), ``error`` kind
    and ``message``, and whether the store ``truncated`` it."""
    try:
        result = kg.query(sparql, timeout_s=timeout_s, use_cache=False)
    except KGError as failure:
        return {"rows": [], "error": failure.kind, "message": str(failure), "truncated": False}
    rows = ([(("boolean", "true" if result.boolean else "false"),)] if result.kind == "ask" else
            [tuple(sorted((name, term.value) for name, term in row.items())) for row in result.rows])
    return {"rows": rows, "error": None, "message": None, "truncated": result.truncated}


def store_difference(query: str, first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, Any]:
    """How two :func:`execution` s of ``query`` compare: ``agreement`` is ``identical`` (same rows, same order),
    ``reordered`` (same rows, another order), ``same set`` (the same values once flattened, as the TEXT2SPARQL
    metric reads them) or ``different``; for every agreement but ``identical`` the ``cause`` and ``why``
    (:func:`explain_difference`)."""
    if first["rows"] == second["rows"] and first["error"] == second["error"]:
        return {"agreement": "identical", "cause": None, "why": None}
    reordered = first["error"] is None and second["error"] is None and sorted(first["rows"]) == sorted(second["rows"])
    values = [{value: 1 for row in side["rows"] for _, value in row} for side in (first, second)]
    cause, why = explain_difference(query, values[0], values[1], first["error"], second["error"],
                                    truncated=first["truncated"] or second["truncated"],
                                    same_rows_reordered=reordered)
    agreement = "reordered" if reordered else "same set" if values[0] == values[1] and not (
        first["error"] or second["error"]) else "different"
    return {"agreement": agreement, "cause": cause, "why": why}


def engine_report(answers: Mapping[str, Mapping[str, Any]], executed: Mapping[str, Mapping[str, Any]],
                  system: Mapping[str, Mapping[str, int]], questions: Iterable[Question]) -> list[dict[str, Any]]:
    """One row per qname whose flattened result on our store (``executed[qname]["run"]``, with its ``error``)
    is not the organisers' (``system[qname]``): sizes, a few values only one side has, the cause and why."""
    rows = []
    for question in questions:
        ours = executed[question.id]["run"]
        theirs = system.get(question.id, {})
        if set(ours) == set(theirs) and {k: bool(v) for k, v in ours.items()} == \
                {k: bool(v) for k, v in theirs.items()}:
            continue
        query = (answers.get(question.id) or {}).get("query")
        error = executed[question.id]["error"]
        cause, why = explain_difference(query, ours, theirs, None if error == "no_query" else error)
        rows.append({"qname": question.id, "ours": len(ours), "theirs": len(theirs),
                     "only_ours": sorted(set(ours) - set(theirs))[:3],
                     "only_theirs": sorted(set(theirs) - set(ours))[:3], "error": error,
                     "cause": cause, "why": why})
    return rows
