"""What a gold query asks for (select / ask / count) and gold answers from a benchmark's stored results.

Benchmarks store gold results as SPARQL 1.1 JSON (QALD) or as bare binding lists (WWQ); both become the answer
strings :class:`~sparqlab.data.question.Question` keeps in ``gold_answers`` through the eval layer's own
normalisation (:func:`sparqlab.eval.answers_from_result`), so gold and predicted answers are normalised by one
function. The full stored result is kept alongside in ``metadata["gold_result"]`` for metrics that need whole rows
(SPINACH's row F1).
"""

from __future__ import annotations

import re
from typing import Any

from sparqlab.data.question import AnswerForm
from sparqlab.eval.normalise import answers_from_result
from sparqlab.kg.results import QueryResult

_PROLOGUE = re.compile(r"(?:\s+|#[^\n]*\n|(?:PREFIX\s+[\w.-]*:|BASE)\s*<[^>]*>)*", re.IGNORECASE)
_FIRST_SELECT = re.compile(r"\bSELECT\b", re.IGNORECASE)
_COUNT_PROJECTION = re.compile(
    r"SELECT\s+(?:DISTINCT\s+|REDUCED\s+)?"
    r"\(\s*COUNT\s*\((?:[^()]|\([^()]*\))*\)\s*AS\s+\?\w+\s*\)"
    r"\s*(?:WHERE\b|\{|FROM\b)",
    re.IGNORECASE,
)


def answer_form(sparql: str | None, gold_result: dict[str, Any] | None = None) -> AnswerForm:
    """``ask`` for ASK queries (or a boolean gold result), ``count`` when the outer SELECT projects only a COUNT,
    else ``select``."""
    if gold_result is not None and "boolean" in gold_result:
        return "ask"
    if not sparql:
        return "select"
    body = sparql[_PROLOGUE.match(sparql).end() :]
    if body[:3].upper() == "ASK":
        return "ask"
    select = _FIRST_SELECT.search(body)
    if select and _COUNT_PROJECTION.match(body, select.start()):
        return "count"
    return "select"


def results_json(bindings: list[dict[str, Any]]) -> dict[str, Any]:
    """A bare list of SPARQL-JSON bindings as a full SPARQL-JSON result (variables in order of first use)."""
    variables = list(dict.fromkeys(var for row in bindings for var in row))
    return {"head": {"vars": variables}, "results": {"bindings": bindings}}


def answers_from_json(result: dict[str, Any]) -> list[str]:
    """The sorted normalised answer set of a SPARQL-JSON result (ASK gives ``["true"]`` or ``["false"]``)."""
    return sorted(answers_from_result(QueryResult.from_json(result)))
