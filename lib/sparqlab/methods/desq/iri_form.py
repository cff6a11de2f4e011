"""IRI-form gold queries for the movie KG: every label constraint resolved to the IRI that yields the gold answers.

The movie sets' gold SPARQL finds entities and relations by label (``?e1 rdfs:label "Wind"``, the GGC paper's
style). DeSQ grounds URI placeholders to ids, so it works on each query's IRI form: the variable of every
``?x rdfs:label "literal"`` pattern (not a projected variable) is replaced by the IRI it stands for and the label
pattern is dropped. A name used in two roles ("Wind" is a film and a tag) has two IRIs; the combination whose IRI
query returns the gold answer set is chosen (best answer-set F1 if none matches exactly, the first in IRI order on
a tie), so placeholders carry the ids the answers need and homonyms are real errors for a model to make. Triple
patterns left without variables (``<Person/X> a mclass:Person``) hold by construction and are dropped.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence

from sparqlab.eval.metrics import set_f1
from sparqlab.kg.base import KnowledgeGraph
from sparqlab.kg.profiles import RDFS, known_prefixes
from sparqlab.sparql.tree import Group, Query, Term, Triple, parse_query, query_text

MAX_COMBINATIONS = 16
"""IRI combinations executed per query at most (a query with several homonymous names)."""

_indexes: dict[str, dict[str, list[str]]] = {}
_lock = threading.Lock()


def label_index(kg: KnowledgeGraph) -> dict[str, list[str]]:
    """Label -> sorted IRIs carrying it, read once per KG (per process) with one bulk query."""
    with _lock:
        if kg.identity not in _indexes:
            rows = kg.bulk_values(f"SELECT ?x ?l WHERE {{ ?x <{kg.profile.label_predicate}> ?l . FILTER(isIRI(?x)) }}")
            index: dict[str, list[str]] = {}
            for row in rows:
                index.setdefault(row["l"], []).append(row["x"])
            _indexes[kg.identity] = {label: sorted(set(iris)) for label, iris in index.items()}
        return _indexes[kg.identity]


def _label_constraints(query: Query) -> dict[Term, str]:
    projected = {p.variable for p in query.projection or []}
    found = {}
    for element in query.where.elements:
        if (isinstance(element, Triple) and element.subject.kind == "var" and element.subject not in projected
                and len(element.predicate) == 1 and element.predicate[0] == Term("iri", RDFS + "label")
                and element.object.kind == "literal"):
            found[element.subject] = element.object.value
    return found


def _substitute(query: Query, mapping: dict[Term, Term], drop_ground: bool) -> Query:
    def term(t: Term) -> Term:
        return mapping.get(t, t)

    elements = []
    for element in query.where.elements:
        if isinstance(element, Triple):
            if element.subject in mapping and element.predicate == [Term("iri", RDFS + "label")] \
                    and element.object.kind == "literal":
                continue
            triple = Triple(term(element.subject), [term(t) if isinstance(t, Term) else t for t in element.predicate],
                            term(element.object))
            terms = [triple.subject, triple.object, *(t for t in triple.predicate if isinstance(t, Term))]
            if drop_ground and not any(t.is_variable for t in terms):
                continue
            elements.append(triple)
        else:
            elements.append(element)
    return Query(**{**query.__dict__, "where": Group(elements)})


def iri_form(gold_sparql: str, gold_answers: Sequence[str] | None, kg: KnowledgeGraph) -> str:
    """The IRI form of a label-based gold query (module docstring). A query with no label constraints comes
    back reprinted unchanged. Raises ``ValueError`` when a label names nothing in the KG."""
    from sparqlab.data.movieqa import result_labels

    tree = parse_query(gold_sparql, known_prefixes())
    constraints = _label_constraints(tree)
    if not constraints:
        return query_text(tree)
    index = label_index(kg)
    variables = list(constraints)
    options = []
    for variable in variables:
        iris = index.get(constraints[variable], [])
        if not iris:
            raise ValueError(f"no KG element is labelled {constraints[variable]!r}")
        options.append(iris)
    combinations = list(itertools.islice(itertools.product(*options), MAX_COMBINATIONS))
    chosen = combinations[0]
    if len(combinations) > 1 and gold_answers is not None:
        best = -1.0
        for combination in combinations:
            mapping = {v: Term("iri", iri) for v, iri in zip(variables, combination, strict=True)}
            result = kg.query(query_text(_substitute(tree, mapping, drop_ground=False)), timeout_s=120,
                              max_rows=1_000_000)
            score = set_f1(result_labels(result), list(gold_answers))
            if score > best:
                best, chosen = score, combination
            if score == 1.0:
                break
    mapping = {v: Term("iri", iri) for v, iri in zip(variables, chosen, strict=True)}
    return query_text(_substitute(tree, mapping, drop_ground=True))
