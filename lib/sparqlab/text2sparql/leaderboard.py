"""The TEXT2SPARQL leaderboard rebuilt from the organisers' published files, with sparqlab runs as extra rows.

A folder of published files holds one sub-folder per team (``data/text2sparql/published/<dataset>/<TEAM>/``, the
organisers' layout): its system result set (``*_system_result_set.json`` / ``*_pred_result_set.json``), its
evaluation (``*_eval.json`` / ``*_results.json``) and its answers. A team's row comes from

1. its system result set, scored against the true result set (:func:`sparqlab.text2sparql.result_sets.score_result_set`;
   when an evaluation file is there too, the row notes whether every per-question score equals it); or
2. its evaluation file's per-question scores when it has no result set, or when the result set is not genuine
   (:class:`~sparqlab.text2sparql.result_sets.NotGenuine`; the reasons are noted). Only the published convention can be
   read from an evaluation file, so under ``text2sparql-strict`` such a team is left out (noted);
3. its answers file (``*_answers.json``) when it has neither: the queries executed on the dataset's KG and scored
   like any answers file (:func:`sparqlab.text2sparql.answers.score_answers`, the result-set route).

``answers`` adds rows the same way from peers' output files (:mod:`sparqlab.text2sparql.peers`: an answers file, GRASP's
JSONL), e.g. GRASP's released CK25 runs beside the published teams.

A sparqlab run's row comes from its records' official scores (the official measures are registered metrics, so a
run scores TEXT2SPARQL questions with the published convention; :func:`sparqlab.text2sparql.metric.record_scores`);
the columns are those registered measures (:func:`score_measures`). Every row gets the published means
(:func:`sparqlab.text2sparql.metric.summarise_official`), overall and per language, 95 % percentile bootstrap
intervals over its questions, and against a ``baseline`` row the paired bootstrap interval of the set_F
difference and McNemar's exact test on the questions answered exactly (set_F = 1), over the questions both rows
have (:func:`sparqlab.eval.paired.paired_comparison`). Rows are ranked as the organisers rank: by set_F_ndcg
where the dataset has order-sensitive questions, else by set_F; several datasets give an ``overall`` group over
all their questions (the 2026 overall ranking, by set_F). The table renders as text, Markdown, LaTeX or CSV like
``sparqlab table`` (:func:`sparqlab.experiments.table.render`).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sparqlab.core.paths import data_dir
from sparqlab.data.question import Question
from sparqlab.eval.metrics import EM_KEY, F1_KEY, METRICS
from sparqlab.eval.paired import bootstrap_ci, paired_comparison
from sparqlab.eval.repeats import paired_repeats, two_level_interval
from sparqlab.experiments.table import ComparisonTable, Measure, score_measure
from sparqlab.text2sparql.metric import (
    COMBINED,
    OFFICIAL_KEYS,
    OFFICIAL_METRIC,
    ORDER_METRIC,
    OfficialScore,
    check_convention,
    language_of,
    score_from_record,
    summarise_official,
)
from sparqlab.text2sparql.result_sets import (
    NotGenuine,
    compare_with_published,
    read_published_scores,
    score_result_set,
)

if TYPE_CHECKING:
    from sparqlab.kg.base import KnowledgeGraph

RESULT_SET_PATTERNS = ("*_system_result_set.json", "*_pred_result_set.json")
EVALUATION_PATTERNS = ("*_eval.json", "*_results.json")
ANSWERS_PATTERNS = ("*_answers.json",)
OVERALL = "overall"
ALL = "all"
RUN_MARK = " [sparqlab]"



def score_measures() -> list[Measure]:
    """The official measures' columns, read from the metric registry (:data:`~sparqlab.text2sparql.metric.OFFICIAL_KEYS`):
    headed by the organisers' names, ranked as registered, to four digits as published."""
    return [Measure(measure, measure, score_measure(METRICS[key]).better, digits=4)
            for measure, key in OFFICIAL_KEYS.items()]


PAIRED_MEASURES = (Measure("f1_diff", "Δ set_F", None, digits=4), Measure("p_mcnemar", "p (exact)", None, digits=3),
                   Measure("flips", "flips", None, digits=0))


def published_folder(dataset: str) -> Path:
    """The shipped published files of a dataset: ``data/text2sparql/published/<dataset>``."""
    return data_dir() / "text2sparql/published" / dataset


@dataclass
class Entry:
    """One leaderboard row: its name, where its scores come from, per-qname scores and notes."""

    name: str
    source: str
    scores: dict[str, OfficialScore]
    notes: list[str] = field(default_factory=list)
    repeats: list[dict[str, OfficialScore]] = field(default_factory=list)
    """A run group's row: each repeat's scores (``scores`` are the first's), for mean ± sd between runs and
    intervals over questions and repeats."""


def _first(folder: Path, patterns: Iterable[str], dataset: str) -> Path | None:
    found = sorted(p for pattern in patterns for p in folder.glob(pattern) if p.name.startswith(dataset))
    return found[0] if found else None


def team_entry(folder: Path, questions: Sequence[Question], dataset: str, convention: str,
               kg: Callable[[], KnowledgeGraph] | None = None) -> Entry | None:
    """A team's row from its folder (see the module docstring); ``None`` with nothing usable (noted by caller).
    ``kg`` opens the dataset's KG, for a folder holding only an answers file."""
    result_set = _first(folder, RESULT_SET_PATTERNS, dataset)
    evaluation = _first(folder, EVALUATION_PATTERNS, dataset)
    answers = _first(folder, ANSWERS_PATTERNS, dataset)
    notes: list[str] = []
    if result_set is not None:
        try:
            table = score_result_set(result_set, questions, convention=convention)
        except NotGenuine as error:
            notes.append(f"{result_set.name} not used: " + "; ".join(error.reasons))
        else:
            if evaluation is not None and convention == OFFICIAL_METRIC:
                agreement = compare_with_published(table, read_published_scores(evaluation))
                notes.append(f"{result_set.name} scored; {agreement.counts} with {evaluation.name}, averages "
                             f"within {agreement.max_average_difference():.1g}")
            return Entry(folder.name, result_set.name, _scores_of(table), notes)
    if evaluation is None:
        if answers is None or kg is None:
            return None
        return answers_entry(folder.name, answers, questions, dataset, kg(), convention)
    if check_convention(convention):
        notes.append(f"left out: only {evaluation.name}, which holds the published convention's scores")
        return Entry(folder.name, evaluation.name, {}, notes)
    published = read_published_scores(evaluation)
    known = {q.id for q in questions}
    return Entry(folder.name, evaluation.name, {q: s for q, s in published.questions.items() if q in known}, notes)


def answers_entry(name: str, path: Path, questions: Sequence[Question], dataset: str, kg: KnowledgeGraph,
                  convention: str) -> Entry:
    """A row from a system's answers (an answers file or another peer output format, :mod:`sparqlab.text2sparql.peers`):
    each query executed on ``kg`` and scored (:func:`sparqlab.text2sparql.answers.score_answers`)."""
    from sparqlab.text2sparql.answers import score_answers
    from sparqlab.text2sparql.peers import as_answers_file, read_peer_output

    answers = read_peer_output(path, prefix=dataset)
    table = score_answers(as_answers_file(answers), questions, kg, convention=convention)
    rows = table["questions"].values()
    without = sum(1 for row in rows if row["answered"] and row["error"] == "no_query")
    failed = sum(1 for row in rows if row["answered"] and row["error"] not in (None, "no_query"))
    notes = [f"{path.name}: {len(answers)} answers executed on {kg.profile.name}"
             + (f", {without} without a query" if without else "") + (f", {failed} failed there" if failed else "")]
    return Entry(name, path.name, _scores_of(table), notes)


def _scores_of(table: Mapping[str, Any]) -> dict[str, OfficialScore]:
    return {qname: OfficialScore(row["set_P"], row["set_recall"], row["set_F"], row.get(ORDER_METRIC))
            for qname, row in table["questions"].items()}


def run_entry(run: str | Path, questions: Sequence[Question], label: str | None = None) -> Entry:
    """A sparqlab run's row from its records' official scores (records of other questions are ignored), named
    ``label`` (default: the run folder's name) with `` [sparqlab]``; a run group's row (``sparqlab run
    --repeats``, named by the group) holds each repeat's scores. A record whose scores are not fractions (edited,
    damaged) is refused naming the file and line."""
    from sparqlab.core.jsonl import scan_jsonl
    from sparqlab.runs.groups import find_group, group_members
    from sparqlab.runs.results import find_run
    from sparqlab.runs.store import PREDICTIONS, read_json

    group = find_group(run)
    if group is not None:
        members = [run_entry(member, questions, label or group.name) for member in group_members(group)]
        return Entry(members[0].name, "sparqlab run group", members[0].scores, members[0].notes,
                     [member.scores for member in members])
    folder = Path(run) if Path(run).is_dir() else find_run(str(run))
    known = {q.id for q in questions}
    scores = {}
    scan = scan_jsonl(folder / PREDICTIONS)
    if scan.damaged:
        raise ValueError(str(scan.damaged[0]))
    for number, record in zip(scan.numbers, scan.records, strict=True):
        try:
            score = score_from_record(record.get("scores") or {})
        except ValueError as error:
            raise ValueError(f"{folder / PREDICTIONS}, line {number}: {error}; the leaderboard shows no score it "
                             "cannot trust: rescore the run (sparqlab runs score) or rerun it") from None
        if record.get("id") in known and score is not None:
            scores[record["id"]] = score
    if not scores:
        raise ValueError(f"run {folder} has no TEXT2SPARQL-scored question of this dataset")
    metrics = read_json(folder / "metrics.json") if (folder / "metrics.json").exists() else {}
    mark = " [standin]" if metrics.get("model_is_standin") and "[standin]" not in (label or "") else ""
    notes = [] if len(scores) == len(known) else [f"covers {len(scores)} of {len(known)} qnames"]
    return Entry((label or folder.name) + RUN_MARK + mark, "sparqlab run", scores, notes)


def group_summaries(scores: Mapping[str, OfficialScore], datasets: Sequence[str], convention: str,
                    years: Mapping[str, int]) -> dict[str, tuple[dict[str, OfficialScore], dict[str, Any]]]:
    """Column groups of one row, each with its questions' scores and means as published: per dataset
    (``ck26``), per dataset language (``ck26-de``: the dataset's language block) and, for several datasets,
    ``overall`` (every question of them)."""
    groups: dict[str, tuple[dict[str, OfficialScore], dict[str, Any]]] = {}
    if len(datasets) > 1 and scores:
        groups[OVERALL] = (dict(scores), summarise_official(scores, convention=convention))
    for dataset in datasets:
        mine = {q: s for q, s in scores.items() if q.partition(":")[0] == dataset}
        if not mine:
            continue
        summary = summarise_official(mine, convention=convention, edition=years[dataset])
        groups[dataset] = (mine, summary)
        for language, block in (summary.get("languages") or {}).items():
            groups[f"{dataset}-{language}"] = ({q: s for q, s in mine.items() if language_of(q) == language},
                                               block)
    return groups


class _KGs:
    """The KGs answers files are executed on: ``given`` for every dataset, else each dataset's own KG, opened on
    first use and closed on leaving the ``with`` block."""

    def __init__(self, given: KnowledgeGraph | None):
        self.given = given
        self.opened: dict[str, KnowledgeGraph] = {}

    def opener(self, name: str) -> Callable[[], KnowledgeGraph]:
        def open_once() -> KnowledgeGraph:
            if self.given is not None:
                return self.given
            if name not in self.opened:
                from sparqlab.kg import open_kg

                self.opened[name] = open_kg(name)
            return self.opened[name]
        return open_once

    def __enter__(self) -> _KGs:
        return self

    def __exit__(self, *exc: object) -> None:
        for kg in self.opened.values():
            kg.close()


def build_leaderboard(datasets: Sequence[str], *, folders: Mapping[str, str | Path] | None = None,
                      runs: Sequence[str | Path] | Mapping[str, str | Path] = (),
                      answers: Mapping[str, str | Path] | None = None, kg: KnowledgeGraph | None = None,
                      baseline: str | None = None, convention: str = OFFICIAL_METRIC, ci: float = 95.0,
                      resamples: int = 2000, seed: int = 0) -> ComparisonTable:
    """The leaderboard of ``datasets`` (one or several of ck25, db25, ck26, db26) from the published folders
    (default :func:`published_folder` per dataset), ``runs`` and ``answers``, as a :class:`ComparisonTable` (one
    column group per dataset, per dataset-language and ``overall``; rows in ranking order of the first group).
    ``runs`` is a list of run folders or names, or ``{label: run}`` (:func:`sparqlab.text2sparql.answers.run_methods`'
    output); ``answers`` is ``{row name: peer output file}`` of one dataset, executed on ``kg`` (default: the
    dataset's own KG, opened when an answers file needs it)."""
    from sparqlab.data import registry
    from sparqlab.text2sparql.editions import edition

    check_convention(convention)
    if answers and len(datasets) != 1:
        raise ValueError(f"answers files are rows of one dataset; got {len(datasets)} datasets")
    entries: dict[str, Entry] = {}
    notes: list[str] = []
    editions = {name: edition(name) for name in datasets}
    question_sets = {name: registry.load(name) for name in datasets}
    with _KGs(kg) as kgs:
        for name in datasets:
            folder = Path((folders or {}).get(name) or published_folder(name))
            if not folder.is_dir():
                raise FileNotFoundError(f"no published files for {name} at {folder}")
            for team in sorted(p for p in folder.iterdir() if p.is_dir()):
                entry = team_entry(team, question_sets[name], name, convention, kgs.opener(editions[name].kg))
                if entry is None:
                    notes.append(f"{name}/{team.name}: no result set, evaluation or answers file")
                    continue
                merged = entries.setdefault(team.name, Entry(team.name, entry.source, {}))
                merged.scores.update(entry.scores)
                notes += [f"{name}/{team.name}: {note}" for note in entry.notes]
        for label, path in (answers or {}).items():
            if label in entries:
                raise ValueError(f"answers row {label!r} has the name of a published team; choose another")
            entry = answers_entry(label, Path(path), question_sets[datasets[0]], datasets[0],
                                  kgs.opener(editions[datasets[0]].kg)(), convention)
            entries[label] = entry
            notes += [f"{label}: {note}" for note in entry.notes]
    all_questions = [q for name in datasets for q in question_sets[name]]
    labelled = runs.items() if isinstance(runs, Mapping) else [(None, run) for run in runs]
    for label, run in labelled:
        entry = run_entry(run, all_questions, label)
        entries[entry.name] = entry
        notes += [f"{entry.name}: {note}" for note in entry.notes]
    entries = {k: v for k, v in entries.items() if v.scores}
    if baseline is not None and baseline not in entries:
        raise ValueError(f"baseline {baseline!r} is not a row; rows: {', '.join(entries)}")
    lines = []
    years = {name: e.year for name, e in editions.items()}
    summaries = {name: group_summaries(entry.scores, datasets, convention, years) for name, entry in entries.items()}
    for name, entry in entries.items():
        for group, (scores, summary) in summaries[name].items():
            repeated = [group_summaries(repeat, datasets, convention, years).get(group) for repeat in entry.repeats]
            for measure in OFFICIAL_KEYS:
                if measure not in summary:
                    continue
                if repeated and None not in repeated:
                    lines.append({"row": name, "dataset": group, "measure": measure, "run": entry.source,
                                  **_repeated_values(repeated, measure, ci, resamples, seed)})
                    continue
                per_question = _per_question(scores, measure)
                low, high = bootstrap_ci(per_question, ci, resamples, seed) if per_question else (None, None)
                lines.append({"row": name, "dataset": group, "measure": measure, "value": summary[measure],
                              "ci_low": low, "ci_high": high, "run": entry.source})
            if baseline is not None and name != baseline and group in summaries[baseline]:
                lines += _paired_lines(baseline, _repeat_scores(entries[baseline], group, datasets, convention, years),
                                       entry.name, _repeat_scores(entry, group, datasets, convention, years), group,
                                       ci, resamples, seed, notes)
    frame = pd.DataFrame(lines, columns=["row", "dataset", "measure", "value", "ci_low", "ci_high", "sd", "run"])
    present = set(frame["dataset"])
    order = [g for g in [OVERALL, *(f"{d}{suffix}" for d in datasets
                                   for suffix in ["", *(f"-{lang}" for lang in editions[d].languages)])]
             if g in present]
    rows = _ranked(frame, list(entries), order[0] if order else None)
    measures = [*score_measures(), *(PAIRED_MEASURES if baseline else ())]
    return ComparisonTable(frame, measures, rows, order, baseline, notes)


def _per_question(scores: Mapping[str, OfficialScore], measure: str) -> list[float]:
    values = [_question_value(s, measure) for s in scores.values()]
    return [v for v in values if v is not None]


def _question_value(score: OfficialScore, measure: str) -> float | None:
    """One question's ``measure`` (set_F_ndcg falls back to set_F where the question has no order)."""
    if measure == COMBINED:
        return score.ndcg if score.ndcg is not None else score.set_F
    return getattr(score, measure)


def _repeated_values(repeated: Sequence[tuple[dict[str, OfficialScore], dict[str, Any]]], measure: str, ci: float,
                     resamples: int, seed: int) -> dict[str, Any]:
    """A run group's cell: the mean over repeats of their published means, the sd between runs and the two-level
    interval over the questions every repeat scored (:func:`sparqlab.eval.repeats.two_level_interval`)."""
    means = [summary[measure] for _, summary in repeated]
    common = [q for q in repeated[0][0] if all(q in scores for scores, _ in repeated)]
    values = np.array([[_question_value(scores[q], measure) for scores, _ in repeated] for q in common], dtype=float)
    values = values[~np.isnan(values).any(axis=1)] if values.size else values
    low, high = two_level_interval(values, ci, resamples, seed) if values.size else (None, None)
    return {"value": statistics.fmean(means), "ci_low": low, "ci_high": high,
            "sd": statistics.stdev(means) if len(means) > 1 else 0.0}


def _repeat_scores(entry: Entry, group: str, datasets: Sequence[str], convention: str,
                   years: Mapping[str, int]) -> list[dict[str, OfficialScore]]:
    """The row's scores in column group ``group``, one dict per repeat (one for a single run)."""
    return [group_summaries(scores, datasets, convention, years).get(group, ({}, {}))[0]
            for scores in (entry.repeats or [entry.scores])]


def _paired_lines(base: str, base_scores: Sequence[Mapping[str, OfficialScore]], name: str,
                  scores: Sequence[Mapping[str, OfficialScore]], group: str, ci: float, resamples: int, seed: int,
                  notes: list[str]) -> list[dict[str, Any]]:
    """Δ set_F against the baseline in one group: for two single runs the paired bootstrap with McNemar on
    set_F = 1 and the flips; when either row is a run group the paired two-level bootstrap over questions and
    repeats (:func:`sparqlab.eval.repeats.paired_repeats`)."""
    def records(values: Mapping[str, OfficialScore]) -> list[dict[str, Any]]:
        return [{"id": q, F1_KEY: s.set_F, EM_KEY: s.set_F == 1.0} for q, s in values.items()]

    try:
        if len(base_scores) > 1 or len(scores) > 1:
            compared = paired_repeats([records(r) for r in base_scores], [records(r) for r in scores], base, name,
                                      (F1_KEY,), ci, resamples, seed)
            values = {"f1_diff": (compared.differences[F1_KEY]["mean"], *compared.differences[F1_KEY]["interval"])}
        else:
            paired = paired_comparison(records(base_scores[0]), records(scores[0]), base, name, ci, resamples, seed)
            values = {"f1_diff": (paired.f1_diff, *paired.f1_diff_ci), "p_mcnemar": (paired.mcnemar_p, None, None),
                      "flips": (len(paired.a_only) + len(paired.b_only), None, None)}
    except ValueError as error:
        notes.append(f"{name} ({group}): not compared with {base}: {error}")
        return []
    return [{"row": name, "dataset": group, "measure": key, "value": float(value), "ci_low": low,
             "ci_high": high, "run": "paired"} for key, (value, low, high) in values.items()]


def _ranked(frame: pd.DataFrame, names: list[str], group: str | None) -> list[str]:
    """Rows by the organisers' ranking measure in ``group``: set_F_ndcg where present, else set_F (best first,
    ties by name)."""
    if group is None:
        return names
    here = frame[frame["dataset"] == group]
    measure = COMBINED if (here["measure"] == COMBINED).any() and group != OVERALL else "set_F"
    value = {row["row"]: row["value"] for _, row in here[here["measure"] == measure].iterrows()}
    return sorted(names, key=lambda name: (-value.get(name, float("-inf")), name))
