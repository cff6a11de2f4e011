"""Where our store's result of a query differs from the organisers' store's, and why.

Scores differ between SPARQL engines (the challenge's users compare Fuseki, Virtuoso, Tentris and oxigraph) even
for the same query over the same KG. Given an answers file and the organisers' **system result set** of the same
answers (their store's flattened results), :func:`engine_report` lists every qname whose flattened result on our
store is not the organisers', with the evidence-based cause (:data:`CAUSES`, decided by
:func:`explain_difference` from the query text and the two value sets):

- ``cast``: our store refuses a cast the query uses (``xsd:int(...)`` and the other derived-integer casts);
- ``numeric form``: the same numbers written differently (``3`` / ``3.0`` / ``3E0``, a COUNT or AVG serialised
  another way), equal once read as numbers;
- ``ordering tie``: ORDER BY ... LIMIT/OFFSET, where the two stores keep different rows of equal sort key;
- ``unordered LIMIT``: LIMIT/OFFSET without ORDER BY, which keeps an unspecified subset of the rows (each store
  its own);
- ``path``: a property path (``/``, ``|``, ``^``, ``*``, ``+``, ``?``) whose evaluation differs (duplicates,
  zero-length paths);
- ``IRI comparison``: a FILTER comparing terms with ``<``, ``>``, ``=`` or ``!=`` where one side can be an IRI
  (engines differ on ordering and comparing IRIs, and on IRI-vs-literal equality);
- ``not a query``: the answer is empty or not a query; our store refuses it, theirs answered a status line
  (Virtuoso's ``Commit -- done``) that then counts as a retrieved value;
- ``syntax``: our store refuses the query as malformed, theirs answered it (a lenient parser);
- ``their failure``: theirs is empty while ours answers (their request failed or timed out);
- ``unexplained``: none of the above.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from sparqlab.data.question import Question

CAUSES = ("cast", "not a query", "syntax", "numeric form", "ordering tie", "unordered LIMIT", "path",
          "IRI comparison", "their failure", "unexplained")
"""The causes :func:`explain_difference` can name, in the order it tries them."""

STATUS_LINES = ("Commit -- done\n",)
"""Values a store answers a non-query with (Virtuoso): never a query result."""

_ORDER_LIMIT = re.compile(r"\bORDER\s+BY\b.*\b(LIMIT|OFFSET)\b", re.IGNORECASE | re.DOTALL)
_LIMIT = re.compile(r"\b(LIMIT|OFFSET)\s+\d", re.IGNORECASE)
_PATH = re.compile(r"(?:[\w:>])\s*(?:/|\|)\s*[\w<:^]|\^\s*[<\w]|[>\w]\s*[*+?](?:\s|\.|;|\))", re.UNICODE)
_COMPARISON = re.compile(r"FILTER\s*\(?[^)]*(?:\?\w+|<[^>]*>)\s*(?:!=|=|<|>)\s*(?:\?\w+|<[^>]*>)",
                         re.IGNORECASE | re.DOTALL)


def _number(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


def _numeric_equal(ours: Iterable[str], theirs: Iterable[str]) -> bool:
    """The two value sets are equal once every value that reads as a number is taken by its value."""
    def canonical(values: Iterable[str]) -> set[Any]:
        return {("n", number) if (number := _number(v)) is not None else ("s", v) for v in values}

    return canonical(ours) == canonical(theirs)


def _strip_comments_and_strings(sparql: str) -> str:
    """The query without string literals, IRIs' insides kept; enough for the syntax cues below."""
    text = re.sub(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'', '""', sparql)
    return re.sub(r"#[^\n>]*$", "", text, flags=re.MULTILINE)


def explain_difference(query: str | None, ours: Mapping[str, int], theirs: Mapping[str, int],
                       error: str | None) -> tuple[str, str]:
    """``(cause, why)`` for one differing qname (see :data:`CAUSES`); ``error`` is our store's error kind."""
    text = _strip_comments_and_strings(query or "")
    if error == "unsupported_function":
        return "cast", "our store refuses a cast function the query uses (e.g. xsd:int); theirs evaluates it"
    if not (query or "").strip() or set(theirs) & set(STATUS_LINES):
        return "not a query", ("the answer holds no query; their store answered a status line "
                               f"({', '.join(repr(v) for v in set(theirs) & set(STATUS_LINES)) or 'nothing'}), "
                               "ours refuses it")
    if error in ("syntax_error", "update_refused"):
        return "syntax", (f"our store refuses the query ({error}); theirs "
                          + ("answered it" if theirs else "returned nothing either"))
    if error is None and ours and _numeric_equal(ours, theirs):
        return "numeric form", "the same numbers, written differently (read as numbers they are equal)"
    if error is None and _ORDER_LIMIT.search(text):
        return "ordering tie", "ORDER BY ... LIMIT/OFFSET keeps other rows of equal sort key on each store"
    if error is None and _LIMIT.search(text):
        return "unordered LIMIT", "LIMIT/OFFSET without ORDER BY keeps an unspecified subset of the rows on each store"
    if error is None and _PATH.search(text.split("{", 1)[-1]):
        return "path", "a property path, evaluated differently by the two stores"
    if error is None and _COMPARISON.search(text):
        return "IRI comparison", "a FILTER comparing terms that can be IRIs (ordering / equality differs)"
    if error is None and ours and not theirs:
        return "their failure", "their store returned nothing (the request failed or timed out there)"
    if error is not None:
        return "unexplained", f"our store: {error}"
    return "unexplained", "none of the known causes matches"


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
