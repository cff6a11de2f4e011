"""How predicted answers are compared with gold answers: by IRI, by label, or by either — an explicit rule.

Gold answers come as IRIs (Wikidata benchmarks) or as names (MetaQA), and a method may select entities or their
labels. Each KG profile has a default (``answer_key``: the movie KG compares labels, Wikidata IRIs); a run can
state the rule instead (``RunConfig.answer_match``), and the rule used is recorded in ``metrics.json``:

- ``iri``: a predicted entity is its IRI; it matches a gold IRI only.
- ``label``: a predicted entity is replaced by its label (:func:`sparqlab.eval.answers_from_result` with a
  label-keyed profile); it matches a gold name only.
- ``either``: a predicted entity matches a gold answer equal to its IRI *or* to its label (per answer, the form
  that appears in the gold set); an entity matching neither is written as the profile's rule writes it (so on
  the movie KG two wrong entities with one name count once, as under ``label``). Label-only gold answers and IRI
  gold answers are both scored by one stated rule, never below the profile's rule. Literals are compared as
  they are in every mode.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal, get_args

from sparqlab.eval.normalise import answers_from_result, fetch_labels, normalise_answer

if TYPE_CHECKING:
    from sparqlab.kg.base import KnowledgeGraph
    from sparqlab.kg.results import QueryResult

AnswerMatch = Literal["iri", "label", "either"]
ANSWER_MATCH_MODES = get_args(AnswerMatch)


def resolve_mode(mode: str | None, kg: KnowledgeGraph | None) -> str:
    """``mode``, or the KG profile's ``answer_key`` when ``None`` (``iri`` without a KG); unknown is an error."""
    resolved = mode or (kg.profile.answer_key if kg is not None else "iri")
    if resolved not in ANSWER_MATCH_MODES:
        raise ValueError(f"answer_match must be one of {', '.join(ANSWER_MATCH_MODES)}; got {mode!r}")
    return resolved


class _Keyed:
    """A KG seen with another ``answer_key`` (everything else is the KG's own)."""

    def __init__(self, kg: KnowledgeGraph, answer_key: Literal["iri", "label"]):
        self._kg = kg
        self.profile = dataclasses.replace(kg.profile, answer_key=answer_key)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._kg, name)


def result_answers(result: QueryResult, kg: KnowledgeGraph | None, mode: str) -> set[str]:
    """The normalised answers of a result under ``mode`` (``either`` keeps IRIs; see :func:`match_either`)."""
    if kg is None:
        return answers_from_result(result, None)
    return answers_from_result(result, _Keyed(kg, "label" if mode == "label" else "iri"))  # type: ignore[arg-type]


def match_either(predicted: Iterable[str], gold: Iterable[str], kg: KnowledgeGraph) -> list[str]:
    """Predicted answers (IRIs kept) rewritten to the gold form they match: an IRI in the gold set stays, an IRI
    whose label is in the gold set becomes that label; any other IRI becomes its label on a label-keyed KG and
    stays an IRI otherwise (it counts as wrong either way)."""
    predicted, gold = sorted(set(predicted)), set(gold)
    iris = [p for p in predicted if p not in gold and p.startswith(("http://", "https://"))]
    labels = {iri: normalise_answer(label) for iri, label in fetch_labels(kg, iris).items()} if iris else {}
    by_label = kg.profile.answer_key == "label"
    return sorted({labels[p] if p in labels and (labels[p] in gold or by_label) else p for p in predicted})
