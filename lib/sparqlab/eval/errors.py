"""Error categories of a prediction, shared by every method (GGC paper, section 4.3 and Table 3).

Every prediction line gets one ``error_type``:

* ``correct`` — the predicted answer set equals the gold answer set (query-level accuracy);
* ``gold_error`` — the gold query itself fails or returns nothing, so the question cannot be judged;
* ``no_gold`` — the question has no gold at all (neither answers nor a query: a question served to the
  TEXT2SPARQL endpoint, a test set without answers), so it is not judged;
* ``no_query`` — the method produced no query (parse failure, timeout, method error);
* ``syntax_error`` — the query does not parse;
* ``execution_error`` — it parses but the KG did not answer it (timeout, endpoint error, refused update);
* ``empty_result`` — it executes and returns nothing while the gold answers are not empty;
* ``semantic:<subtype>`` — it executes, returns something, and the answers are wrong. The subtype comes from
  comparing the predicted query with the gold query (:func:`semantic_subtype`): ``wrong_answer_form``,
  ``missing_constraint``, ``extra_constraint``, ``wrong_entity``, ``wrong_relation``, ``over_broad``,
  ``wrong_structure`` (same constants, arranged differently: role or variable-binding confusion) and
  ``unknown`` (no gold query to compare with, or one of the two does not parse here).

The paper's three-way split (syntax / semantic / gold) is :func:`coarse_category`. :func:`error_table` counts
categories per run in the layout of the paper's Table 3.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from sparqlab.eval.analysis import analysed_parts, analysed_query
from sparqlab.eval.metrics import (
    check_answers,
    gold_failed,
    normalised_scores,
    normalised_set_scores,
)
from sparqlab.eval.normalise import answer_set
from sparqlab.sparql.tree import Filter, Term, Triple, aggregates

if TYPE_CHECKING:
    import pandas as pd

CORRECT, GOLD_ERROR, NO_GOLD, NO_QUERY = "correct", "gold_error", "no_gold", "no_query"
SYNTAX_ERROR, EXECUTION_ERROR, EMPTY_RESULT = "syntax_error", "execution_error", "empty_result"
SEMANTIC_SUBTYPES = ("wrong_answer_form", "missing_constraint", "extra_constraint", "wrong_entity",
                     "wrong_relation", "over_broad", "wrong_structure", "unknown")
CATEGORIES = (CORRECT, GOLD_ERROR, NO_GOLD, NO_QUERY, SYNTAX_ERROR, EXECUTION_ERROR, EMPTY_RESULT,
              *(f"semantic:{s}" for s in SEMANTIC_SUBTYPES))
"""Every value :func:`categorise` can return, in table order."""

SYNTAX_KINDS = frozenset({"syntax_error"})
"""Error kinds (``KGError.kind`` / a record's ``error_category``) meaning the query does not parse."""

LABEL_PREDICATES = frozenset({
    "http://www.w3.org/2000/01/rdf-schema#label", "http://www.w3.org/2004/02/skos/core#prefLabel",
    "http://schema.org/name", "http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
})
"""Predicates that name or type a node rather than relate two entities; they are not counted as relations."""


def categorise(predicted_sparql: str | None, predicted_answers: Iterable[Any] | None, query_error: str | None,
               gold_answers: Iterable[Any] | None, gold_sparql: str | None = None,
               gold_source: str | None = None) -> str:
    """The error category of one prediction (see the module docstring).

    ``predicted_answers`` is ``None`` when the final query did not run; ``query_error`` is the record's error
    kind (a ``KGError.kind`` such as ``syntax_error``/``timeout``, or a method's reason such as
    ``parse_failure``). ``gold_source`` is the record's (``error: ...`` when the gold query failed).
    """
    return _categorise_sets(predicted_sparql, _normalised(predicted_answers), query_error, _normalised(gold_answers),
                            gold_sparql, gold_source)


def score_and_categorise(predicted_sparql: str | None, predicted_answers: Iterable[Any] | None,
                         query_error: str | None, gold_answers: Iterable[Any] | None, gold_sparql: str | None = None,
                         gold_source: str | None = None) -> tuple[dict[str, Any] | None, str]:
    """:func:`sparqlab.eval.score_prediction` (``None`` without gold answers) and :func:`categorise` of one
    prediction, each answer set checked and normalised once for both (what a run records per question)."""
    predicted = _normalised(check_answers(predicted_answers, "predicted answers"))
    gold = _normalised(check_answers(gold_answers, "gold answers"))
    scores = None if gold is None else normalised_scores(predicted, gold)
    return scores, _categorise_sets(predicted_sparql, predicted, query_error, gold, gold_sparql, gold_source)


def _normalised(answers: Iterable[Any] | None) -> set[str] | None:
    return None if answers is None else answer_set(answers)


def _categorise_sets(predicted_sparql: str | None, predicted: set[str] | None, query_error: str | None,
                     gold: set[str] | None, gold_sparql: str | None, gold_source: str | None) -> str:
    """:func:`categorise` on normalised answer sets (``None``: the query did not run / no gold)."""
    if _no_gold(gold, gold_sparql, gold_source):
        return NO_GOLD
    if gold is None or _gold_error(gold, gold_source):
        return GOLD_ERROR
    if not predicted_sparql:
        return NO_QUERY
    if predicted is None:
        return SYNTAX_ERROR if query_error in SYNTAX_KINDS else EXECUTION_ERROR
    if normalised_set_scores(predicted, gold).em:
        return CORRECT
    if not predicted:
        return EMPTY_RESULT
    return "semantic:" + semantic_subtype(predicted_sparql, gold_sparql, predicted, gold)


def gold_error_source(error: BaseException) -> str:
    """``gold_source`` of a question whose gold query failed, ``error: <kind>: <message>`` (the error's ``kind``,
    else ``answer_error``): one form for a run's lines and for queries scored later."""
    return f"error: {getattr(error, 'kind', 'answer_error')}: {error}"


def _gold_error(gold: set[str] | None, gold_source: str | None) -> bool:
    return gold_failed(gold_source) or not gold


def _no_gold(gold: Any, gold_sparql: str | None, gold_source: str | None) -> bool:
    return gold is None and not gold_sparql and not gold_source


def is_no_gold_record(record: Mapping[str, Any]) -> bool:
    """Whether a ``predictions.jsonl`` record's question has no gold at all (``no_gold``: nothing to judge)."""
    return _no_gold(record.get("gold_answers"), record.get("gold_sparql"), record.get("gold_source"))


def categorise_record(record: Mapping[str, Any]) -> str:
    """:func:`categorise` on a ``predictions.jsonl`` record (``predicted_sparql``, ``predicted_answers``,
    ``error_category``, ``gold_answers``, ``gold_sparql``, ``gold_source``)."""
    return categorise(record.get("predicted_sparql"), record.get("predicted_answers"), record.get("error_category"),
                      record.get("gold_answers"), record.get("gold_sparql"), record.get("gold_source"))


def coarse_category(error_type: str) -> str:
    """The paper's Table 3 grouping: ``correct``, ``gold_error``, ``syntax`` (no query, does not parse, does not
    execute) or ``semantic`` (executes with wrong or empty answers); ``no_gold`` stays apart (not judged)."""
    if error_type in (CORRECT, GOLD_ERROR, NO_GOLD):
        return error_type
    if error_type in (NO_QUERY, SYNTAX_ERROR, EXECUTION_ERROR):
        return "syntax"
    return "semantic"


# -- comparing a query with the gold query ----------------------------------------------------------------------


@dataclass(frozen=True)
class QueryShape:
    """What :func:`semantic_subtype` compares: the answer form, the constants in entity and relation roles, and
    the number of constraints (triple patterns plus filters)."""

    form: str
    entities: frozenset[str]
    relations: frozenset[str]
    constraints: int


@lru_cache(maxsize=4096)
def query_shape(sparql: str) -> QueryShape | None:
    """The :class:`QueryShape` of a query, or ``None`` when it has no tree (:func:`analysed_query`). Triple
    patterns count in every group (OPTIONAL, UNION, sub-SELECT ...; not in SERVICE or EXISTS patterns:
    :mod:`sparqlab.eval.analysis`); each FILTER and each HAVING is one constraint, and its constants (IRIs and
    literals) are entities."""
    tree = analysed_query(sparql)
    if tree is None:
        return None
    queries, groups = analysed_parts(tree)
    elements = [e for group in groups for e in group.elements]
    triples = [e for e in elements if isinstance(e, Triple)]
    filters = [e.expression for e in elements if isinstance(e, Filter)]
    filters += [q.having for q in queries if q.having is not None]
    predicate_vars = {t.predicate[0] for t in triples
                      if len(t.predicate) == 1 and isinstance(t.predicate[0], Term) and t.predicate[0].is_variable}
    relations: set[str] = set()
    entities: set[str] = set()
    for triple in triples:
        single = triple.predicate[0] if len(triple.predicate) == 1 and isinstance(triple.predicate[0], Term) else None
        if single is None:  # a property path: every IRI in it is a relation
            relations.update(t.value for t in triple.predicate if isinstance(t, Term) and _is_constant(t))
        elif _is_constant(single) and single.value not in LABEL_PREDICATES:
            relations.add(single.value)
        names_a_relation = single is not None and single.value in LABEL_PREDICATES and triple.subject in predicate_vars
        if _is_constant(triple.subject):
            entities.add(triple.subject.value)
        if _is_constant(triple.object):
            (relations if names_a_relation else entities).add(triple.object.value)
    entities.update(t.value for tokens in filters for t in tokens if isinstance(t, Term) and _is_constant(t))
    form = {"ASK": "ask", "CONSTRUCT": "graph", "DESCRIBE": "graph"}.get(tree.form, "select")
    if any(aggregates(q) for q in queries):
        form = "count"
    return QueryShape(form, frozenset(entities), frozenset(relations), len(triples) + len(filters))


def _is_constant(term: Term) -> bool:
    """IRIs (also under an unknown prefix) and literals (strings, numbers, booleans); not variables or blank
    nodes."""
    return not term.is_variable


def semantic_subtype(predicted_sparql: str, gold_sparql: str | None, predicted: set[str], gold: set[str]) -> str:
    """The subtype of an executable, non-empty, wrong query, checked in this order:

    1. ``wrong_answer_form`` — ASK vs SELECT vs COUNT differ;
    2. ``missing_constraint`` / ``extra_constraint`` — the predicted constants (entities and relations) are a
       strict subset / superset of the gold ones;
    3. ``wrong_entity`` — the entity constants differ; 4. ``wrong_relation`` — the relation constants differ;
    5. ``missing_constraint`` / ``extra_constraint`` — same constants, fewer / more triple patterns and filters;
    6. ``over_broad`` — the predicted answers strictly contain the gold answers;
    7. ``wrong_structure`` — same constants and size, arranged differently.

    Without a gold query (or when a query does not parse here) only ``over_broad`` can be told from the
    answers; otherwise ``unknown``.
    """
    mine = query_shape(predicted_sparql)
    theirs = query_shape(gold_sparql) if gold_sparql else None
    if mine is None or theirs is None:
        return "over_broad" if predicted > gold else "unknown"
    if mine.form != theirs.form:
        return "wrong_answer_form"
    own = (mine.entities | {f"rel:{r}" for r in mine.relations})
    ref = (theirs.entities | {f"rel:{r}" for r in theirs.relations})
    if own < ref:
        return "missing_constraint"
    if own > ref:
        return "extra_constraint"
    if mine.entities != theirs.entities:
        return "wrong_entity"
    if mine.relations != theirs.relations:
        return "wrong_relation"
    if mine.constraints != theirs.constraints:
        return "missing_constraint" if mine.constraints < theirs.constraints else "extra_constraint"
    if predicted > gold:
        return "over_broad"
    return "wrong_structure"


# -- tables -----------------------------------------------------------------------------------------------------


def with_error_types(predictions: pd.DataFrame) -> pd.DataFrame:
    """``predictions`` with an ``error_type`` column, computed with :func:`categorise_record` for rows that lack
    one (runs recorded before every record carried it)."""
    frame = predictions.copy()
    have = frame["error_type"].tolist() if "error_type" in frame else [None] * len(frame)
    frame["error_type"] = [h if isinstance(h, str) else categorise_record(row)
                           for h, row in zip(have, frame.to_dict("records"), strict=True)]
    return frame


GOLD_ERROR_BASES = ("share", "exclude")
"""How :func:`error_table` treats gold errors in its percentages: ``share`` (GGC §4.3 / Table 3: ground-truth
SPARQL errors are their own share of all errors, 77.70 + 21.07 + 1.23 = 100) or ``exclude`` (Table 13a, SciQA:
"Gold SPARQL errors are not included")."""


def error_table(runs: Mapping[str, pd.DataFrame], errors_only: bool = True, coarse: bool = False,
                gold_errors: str = "share") -> pd.DataFrame:
    """Table 3 layout: one row per error category, per run a count and a percentage column.

    ``runs`` maps a label (``generator``, ``after correction``, ``spinach`` ...) to its predictions (as
    :func:`sparqlab.runs.load_predictions` returns them). With ``errors_only`` ``correct`` is left out and the
    percentages are over the run's errors; ``gold_errors`` (:data:`GOLD_ERROR_BASES`) says whether gold errors
    are one of the shares (``share``, the default: Table 3) or counted but left out of the base (``exclude``).
    ``coarse`` groups into the paper's syntax / semantic / gold rows (:func:`coarse_category`). Categories no
    run has are omitted.
    """
    import pandas as pd

    if gold_errors not in GOLD_ERROR_BASES:
        raise ValueError(f"gold_errors must be one of {', '.join(GOLD_ERROR_BASES)}; got {gold_errors!r}")
    left_out = [CORRECT, NO_GOLD] + ([GOLD_ERROR] if gold_errors == "exclude" else [])
    columns = {}
    for label, predictions in runs.items():
        types = with_error_types(predictions)["error_type"]
        counts = (types.map(coarse_category) if coarse else types).value_counts()
        shared = counts.drop(left_out, errors="ignore") if errors_only else counts
        columns[(label, "n")] = counts
        columns[(label, "%")] = (100 * shared / shared.sum()).round(2) if shared.sum() else shared * 0.0
    table = pd.DataFrame(columns)
    known = (CORRECT, GOLD_ERROR, NO_GOLD, "syntax", "semantic") if coarse else CATEGORIES
    order = [c for c in known if c in table.index and not (errors_only and c == CORRECT)]
    table = table.loc[order]
    for label, kind in table.columns:
        if kind == "n":
            table[(label, kind)] = table[(label, kind)].fillna(0).astype(int)
        else:
            unshared = table.index.isin(left_out[1:] if errors_only else [])
            table.loc[~unshared, (label, kind)] = table.loc[~unshared, (label, kind)].fillna(0.0)
    table.columns = pd.MultiIndex.from_tuples(table.columns)
    return table


def no_query_causes(runs: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Why predictions ended without a query, per run: one row per ``error_category`` of the ``no_query``
    predictions (``parse_failure``, ``truncated_reply``, ``reasoning_exhausted``, ``context_overflow``,
    ``question_timeout``, ``budget_exhausted`` ...), one count column per run label; the row Table 3 counts as
    ``no_query``, split by cause."""
    import pandas as pd

    columns = {}
    for label, predictions in runs.items():
        typed = with_error_types(predictions)
        causes = typed.loc[typed["error_type"] == NO_QUERY, "error_category"].fillna("none")
        columns[label] = causes.value_counts()
    return pd.DataFrame(columns).fillna(0).astype(int).sort_index()
