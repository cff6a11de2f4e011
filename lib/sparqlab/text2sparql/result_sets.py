"""TEXT2SPARQL result-set and evaluation files: read them, score them without a KG, check them.

The organisers publish, per team and dataset, the **system result set** (2025: ``<ds>_system_result_set.json``;
2026: ``<ds>_pred_result_set.json``): each answer query run on their store and flattened as their client does
(``{qname: {value: 1}}``, an ASK as ``{"true": 1|0}``, a failed query as ``{}``), and the **evaluation** (2025:
``<ds>_eval.json``; 2026: ``<ds>_results.json``): per qname ``set_P``, ``set_recall``, ``set_F`` (``ndcg`` where
order matters) and the averages. Scoring a system result set against the true result set reproduces the
evaluation without any KG (:func:`score_result_set`); :func:`compare_with_published` says per qname whether it
does.

A file that cannot be a system's output is refused (:class:`NotGenuine`), never scored: a copy of the true
result set, a file carrying the true set's ``order_required`` list, relevance values a flattened result never
has (:func:`genuineness_problems`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparqlab.data.question import Question
from sparqlab.text2sparql.editions import ORDER_REQUIRED, edition_of
from sparqlab.text2sparql.metric import (
    COMBINED,
    OFFICIAL_METRIC,
    ORDER_METRIC,
    SET_MEASURES,
    OfficialScore,
    gold_relevance,
    language_of,
    official_scores,
    summarise_official,
)

MEASURES = (*SET_MEASURES, ORDER_METRIC)


class NotGenuine(ValueError):
    """A result-set file that cannot be a system's output; ``reasons`` says why (it is not scored)."""

    def __init__(self, path: str | Path, reasons: list[str]):
        self.path, self.reasons = str(path), reasons
        super().__init__(f"{path} is not a genuine system result set, so it is not scored: " + "; ".join(reasons))


@dataclass
class ResultSet:
    """One result-set file: ``{qname: {value: relevance}}`` and the ``order_required`` list if it has one."""

    path: str
    values: dict[str, dict[str, int]]
    order_required: list[str] | None = None


def _read_json_object(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"no file at {path}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} is not JSON: {error}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} must hold a JSON object keyed by qname, got {type(data).__name__}")
    return data


def read_result_set(path: str | Path) -> ResultSet:
    """A result-set file, each entry checked (an object of ``value: integer``); errors name the file and qname."""
    data = _read_json_object(path)
    order = data.pop(ORDER_REQUIRED, None)
    if order is not None and not (isinstance(order, list) and all(isinstance(q, str) for q in order)):
        raise ValueError(f"{path}: {ORDER_REQUIRED!r} must be a list of qnames")
    for qname, values in data.items():
        if not isinstance(values, dict) or not all(isinstance(v, int) and not isinstance(v, bool)
                                                   for v in values.values()):
            raise ValueError(f"{path}, {qname}: expected an object of value: integer relevance, got {values!r:.80}")
    return ResultSet(str(path), data, order)


def genuineness_problems(result_set: ResultSet, true_set: Mapping[str, Mapping[str, int]]) -> list[str]:
    """Why ``result_set`` cannot be a system's output (empty list: nothing found).

    A system result set is the organisers' flattening of a system's query results: every value has relevance 1
    (only an ASK answered false gives ``{"true": 0}``) and it has no ``order_required`` list; and no system's
    queries reproduce the true result set on every question (the best published entries reach about 0.8)."""
    problems = []
    if result_set.order_required is not None:
        problems.append(f"it carries the true result set's {ORDER_REQUIRED!r} list: a true result set, "
                        "not a system's")
    odd = sorted(q for q, values in result_set.values.items()
                 if any(r != 1 for value, r in values.items() if value != "true") or
                 values.get("true", 1) not in (0, 1))
    if odd:
        problems.append(f"relevance values other than 1 on {len(odd)} qnames (e.g. {odd[0]}); a flattened result "
                        "gives every value 1")
    shared = [q for q in true_set if q in result_set.values]
    if shared and len(shared) == len(true_set) and all(dict(result_set.values[q]) == dict(true_set[q])
                                                       for q in shared):
        problems.append(f"identical to the official true result set on all {len(shared)} qnames: a copy of the "
                        "gold, not a system's output")
    return problems


def question_judgements(question: Question) -> dict[str, int]:
    """The official judgements of a question (its gold answers, the true result set entry)."""
    if question.gold_answers is None:
        raise ValueError(f"{question.id} has no gold answers to score against")
    return gold_relevance(question.gold_answers, question.answer_form)


def score_runs(runs: Mapping[str, Mapping[str, int]], questions: Iterable[Question], *,
               convention: str = OFFICIAL_METRIC,
               judgements: Mapping[str, Mapping[str, int]] | None = None) -> dict[str, Any]:
    """Per-qname official scores of flattened results (``{qname: {value: score}}``; a qname the mapping lacks is
    an empty result, as the organisers' ``query`` step writes it) and their means as published.

    ``judgements`` replaces the questions' official ones (``{qname: {value: relevance}}``, e.g. reference queries
    re-executed). Returns ``{"questions": {qname: {set_P, set_recall, set_F, [ndcg], "retrieved"}}, "summary":
    {...}, "unknown_qnames": [...]}`` (``retrieved``: the number of values; qnames of ``runs`` the questions lack
    are listed, not scored, except those of a language the questions leave out: scoring one language of a file
    that has two)."""
    questions = list(questions)
    rows: dict[str, dict[str, Any]] = {}
    scores: dict[str, OfficialScore] = {}
    for question in questions:
        run = runs.get(question.id, {})
        judged = judgements[question.id] if judgements is not None else question_judgements(question)
        scores[question.id] = official_scores(run, judged, bool(question.metadata.get("order_matters")),
                                              ask=question.answer_form == "ask", convention=convention)
        rows[question.id] = {**scores[question.id].to_json(), "retrieved": len(run)}
    edition = questions[0].metadata.get("edition", 2026) if questions else 2026
    known = {q.id for q in questions}
    languages = {language_of(q.id) for q in questions}
    unknown = sorted(q for q in set(runs) - known if language_of(q) in languages)
    return {"questions": rows, "summary": summarise_official(scores, convention=convention, edition=edition),
            "unknown_qnames": unknown}


def score_result_set(path: str | Path, questions: Iterable[Question], *,
                     convention: str = OFFICIAL_METRIC) -> dict[str, Any]:
    """:func:`score_runs` of a system result-set file, after :func:`genuineness_problems` (raises
    :class:`NotGenuine` with the reasons)."""
    questions = list(questions)
    result_set = read_result_set(path)
    true_set = {q.id: question_judgements(q) for q in questions}
    problems = genuineness_problems(result_set, true_set)
    if problems:
        raise NotGenuine(path, problems)
    return {**score_runs(result_set.values, questions, convention=convention), "file": str(path),
            "dataset": edition_of(questions).name}


# -- published evaluation files ----------------------------------------------------------------------------------


@dataclass
class PublishedScores:
    """An evaluation file: per-qname scores and the averages, normalised to :func:`summarise_official`'s shape
    (``{"set_P", ..., "languages": {lang: {...}}}``) from either edition's layout (2025: ``average`` with
    ``set_F-en`` keys; 2026: ``average-en`` blocks)."""

    path: str
    questions: dict[str, OfficialScore]
    averages: dict[str, Any] = field(default_factory=dict)


def read_published_scores(path: str | Path) -> PublishedScores:
    """An organisers' evaluation file (``*_eval.json`` / ``*_results.json``)."""
    data = _read_json_object(path)
    questions: dict[str, OfficialScore] = {}
    averages: dict[str, Any] = {}
    for key, block in data.items():
        if not isinstance(block, dict):
            raise ValueError(f"{path}, {key}: expected an object of measures")
        if key == "average" or key.startswith("average-"):
            language = key.partition("-")[2] or None
            for measure, value in block.items():
                name, _, suffix = measure.partition("-")
                target_language = suffix or language
                target = averages.setdefault("languages", {}).setdefault(target_language, {}) \
                    if target_language else averages
                target[name] = value
            continue
        missing = [m for m in SET_MEASURES if not isinstance(block.get(m), int | float)]
        if missing:
            raise ValueError(f"{path}, {key}: missing {', '.join(missing)}")
        questions[key] = OfficialScore(*(float(block[m]) for m in SET_MEASURES),
                                       float(block[ORDER_METRIC]) if ORDER_METRIC in block else None)
    return PublishedScores(str(path), questions, averages)


@dataclass
class Agreement:
    """Our scores against a published evaluation: qnames equal on every published measure, those that differ
    (``{qname: {"ours": {...}, "published": {...}}}``), qnames only one side has, and each published average
    against ours (``{name: (published, ours)}``; language averages as ``name-lang``)."""

    agree: list[str]
    differ: dict[str, dict[str, dict[str, float]]]
    only_published: list[str]
    only_ours: list[str]
    averages: dict[str, tuple[float, float | None]]

    @property
    def counts(self) -> str:
        total = len(self.agree) + len(self.differ)
        return f"{len(self.agree)}/{total} qnames agree"

    def max_average_difference(self) -> float:
        """The largest |published - ours| over the averages both have (``inf`` when ours lacks one)."""
        gaps = [abs(p - o) if o is not None else float("inf") for p, o in self.averages.values()]
        return max(gaps, default=0.0)


def _flat_averages(summary: Mapping[str, Any]) -> dict[str, float]:
    flat = {k: v for k, v in summary.items() if k in (*MEASURES, COMBINED)}
    for language, block in (summary.get("languages") or {}).items():
        flat.update({f"{k}-{language}": v for k, v in block.items() if k in (*MEASURES, COMBINED)})
    return flat


def compare_with_published(ours: Mapping[str, Any], published: PublishedScores) -> Agreement:
    """Per qname, are our scores (``score_runs`` output) *exactly* the published ones (same floats)?"""
    rows = ours["questions"]
    agree, differ = [], {}
    for qname, theirs in published.questions.items():
        if qname not in rows:
            continue
        mine = rows[qname]
        wanted = {m: v for m, v in theirs.to_json().items()}
        got = {m: mine.get(m) for m in wanted}
        if got == wanted:
            agree.append(qname)
        else:
            differ[qname] = {"ours": got, "published": wanted}
    flat_ours = _flat_averages(ours["summary"])
    averages = {name: (value, flat_ours.get(name)) for name, value in _flat_averages(published.averages).items()}
    return Agreement(agree, differ, sorted(set(published.questions) - set(rows)),
                     sorted(set(rows) - set(published.questions)), averages)
