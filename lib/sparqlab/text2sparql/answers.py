"""Scoring TEXT2SPARQL answers files on a store with the official metric (:mod:`sparqlab.text2sparql.metric`).

An answers file is what the official client's ``ask`` writes: a JSON list of ``{"dataset", "question", "query",
"qname", ...}``, one per question asked, from any system (ours, served by ``sparqlab serve``, or a published
challenge entry). :func:`score_answers` executes each query on the KG under the read-only guard and the
timeout, flattens the result as the organisers do and scores it (:func:`sparqlab.text2sparql.result_sets.score_runs`)
against the gold judgements:

* ``gold="official"`` (default): the question's gold answers, i.e. the challenge's official true result set, what
  the challenge ranks entries with;
* ``gold="execute"``: the reference query re-executed on the same KG, what the client's ``query`` step does on
  the endpoint it is given (so its per-question numbers equal ours, checked in tests/end_to_end/ck25).

A question with no answer in the file scores as an empty result, as in the client. ``rewrite`` applies the
documented ``xsd:int(...)`` rewrite (:mod:`sparqlab.sparql.rewrite`) to a query the engine refuses for it, and
records the rewritten query in that question's row. Given the organisers' system result set of the same answers,
the table also holds the engine report (:mod:`sparqlab.text2sparql.engine_report`). Result-set files without a KG are
scored by :mod:`sparqlab.text2sparql.result_sets`. A peer's output files become run folders of method ``imported``
(:func:`import_peer_outputs`, ``sparqlab import``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from sparqlab.data.question import Question
from sparqlab.eval.metrics import cost_amount
from sparqlab.kg.base import KnowledgeGraph
from sparqlab.kg.errors import KGError, UnsupportedFunction
from sparqlab.sparql.rewrite import rewrite_casts
from sparqlab.text2sparql.editions import read_answers  # noqa: F401  (callers read answers files from here too)
from sparqlab.text2sparql.engine_report import engine_report
from sparqlab.text2sparql.metric import OFFICIAL_METRIC, flatten_result
from sparqlab.text2sparql.result_sets import ResultSet, score_runs

GoldSource = Literal["official", "execute"]
ANSWER_KEYS = ("qname", "query")


def execute_flat(kg: KnowledgeGraph, sparql: str | None, *, rewrite: bool = False,
                 timeout_s: float | None = None) -> dict[str, Any]:
    """Run one query and flatten its result as the client does: ``{"run": {value: score}, "error": kind or
    None, "message", "rewritten_query"}``. A failing query gives an empty run, as the client's failed request."""
    row: dict[str, Any] = {"run": {}, "error": None, "message": None, "rewritten_query": None}
    if not sparql:
        row["error"] = "no_query"
        return row
    try:
        row["run"] = flatten_result(kg.query(sparql, timeout_s=timeout_s))
    except UnsupportedFunction as error:
        rewritten, changes = rewrite_casts(sparql, kg.profile.prefixes) if rewrite else (sparql, [])
        if not changes:
            row.update(error=error.kind, message=str(error))
            return row
        row["rewritten_query"] = rewritten
        return {**execute_flat(kg, rewritten, timeout_s=timeout_s), "rewritten_query": rewritten}
    except KGError as error:
        row.update(error=error.kind, message=str(error))
    return row


def reference_judgements(questions: Iterable[Question], kg: KnowledgeGraph) -> dict[str, dict[str, int]]:
    """The reference queries re-executed on ``kg`` and flattened (``gold="execute"``)."""
    return {q.id: execute_flat(kg, q.gold_sparql)["run"] for q in questions}


def score_answers(answers: Sequence[Mapping[str, Any]], questions: Iterable[Question], kg: KnowledgeGraph, *,
                  gold: GoldSource = "official", rewrite: bool = False, convention: str = OFFICIAL_METRIC,
                  system: ResultSet | None = None) -> dict[str, Any]:
    """Per-question official scores of an answers file, each query executed on ``kg``, and their means.

    Returns :func:`~sparqlab.text2sparql.result_sets.score_runs`' table with, per qname, ``answered``, ``error``,
    ``message``, ``rewritten_query`` and ``seconds`` added, ``store`` (which store produced the results) and,
    given the organisers' ``system`` result set of the same answers, ``engine_report``
    (:func:`engine_report`). A qname answered twice is an error (which answer counts would be arbitrary).
    """
    by_qname: dict[str, Mapping[str, Any]] = {}
    for entry in answers:
        if entry["qname"] in by_qname:
            raise ValueError(f"qname {entry['qname']} is answered twice in the answers file")
        by_qname[entry["qname"]] = entry
    questions = list(questions)
    executed: dict[str, dict[str, Any]] = {}
    for question in questions:
        start = time.perf_counter()
        entry = by_qname.get(question.id)
        executed[question.id] = {**execute_flat(kg, entry.get("query") if entry else None, rewrite=rewrite),
                                 "seconds": round(time.perf_counter() - start, 4)}
    judgements = None if gold == "official" else reference_judgements(questions, kg)
    runs = {**{qname: {} for qname in by_qname}, **{qname: row["run"] for qname, row in executed.items()}}
    table = score_runs(runs, questions, convention=convention, judgements=judgements)
    for qname, row in table["questions"].items():
        row.update({"answered": qname in by_qname, **{k: executed[qname][k] for k in
                                                      ("error", "message", "rewritten_query", "seconds")}})
    table["store"] = kg.describe()
    if system is not None:
        table["engine_report"] = engine_report(by_qname, executed, system.values, questions)
    return table


def reference_answers(questions: Iterable[Question]) -> list[dict[str, Any]]:
    """The benchmark's reference queries as an answers file (what a perfect system would send)."""
    return [{"dataset": q.metadata.get("dataset"), "question": q.text, "query": q.gold_sparql, "qname": q.id}
            for q in questions]


def run_answers(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A run's final queries as an answers file (``qname`` = question id, ``query`` = ``predicted_sparql``)."""
    return [{"qname": r["id"], "query": r.get("predicted_sparql")} for r in records]


def official_frame(runs: Mapping[str, str | Path], questions: Sequence[Question], kg: KnowledgeGraph, *,
                   gold: GoldSource = "official", rewrite: bool = False):
    """One row per (run label, scored question the run answered, in the order of ``questions``): the official scores of its final query and its cost
    (``model_calls``, ``tokens``: totals; ``latency_s``), for tables and :func:`sparqlab.plots.metric_bars`.
    Also returns ``{label: summarise_official(...)}`` (the client's means, ``set_F_ndcg`` included)."""
    import pandas as pd

    from sparqlab.runs.store import RunStore

    rows, summaries = [], {}
    # dataset order, not finishing order: concurrent runs append predictions as questions finish
    position = {q.id: i for i, q in enumerate(questions)}
    for label, folder in runs.items():
        records = RunStore(folder).predictions()
        asked = {r["id"] for r in records}
        table = score_answers(run_answers(records), [q for q in questions if q.id in asked], kg, gold=gold,
                              rewrite=rewrite)
        summaries[label] = table["summary"]
        for record in sorted(records, key=lambda r: position.get(r["id"], len(position))):
            scores = table["questions"][record["id"]]
            rows.append({"method": label, "qname": record["id"], **{k: scores.get(k) for k in
                                                                    ("set_P", "set_recall", "set_F", "ndcg")},
                         "error": scores["error"], "model_calls": cost_amount(record["model_calls"]),
                         "tokens": cost_amount(record["tokens"]), "latency_s": record["latency_s"]})
    return pd.DataFrame(rows), summaries


def run_methods(methods: Sequence[str], models: Sequence[str], kg: KnowledgeGraph, *, dataset: str = "ck25",
                options: Mapping[str, Mapping[str, Any]] | None = None,
                roles: Mapping[str, Mapping[str, Any]] | None = None, **settings: Any) -> dict[str, Path]:
    """Run each method (with the model at the same position, ``options`` as its config fields and ``roles`` as
    its model roles) over ``dataset`` on ``kg``; returns ``{"method (model [standin])": run folder}`` for
    :func:`official_frame`. ``settings`` are further :class:`~sparqlab.runs.config.RunConfig` fields."""
    from sparqlab.platform.registry import get_method
    from sparqlab.runs.config import RunConfig
    from sparqlab.runs.results import model_label
    from sparqlab.runs.runner import run

    if len(models) != len(methods):
        raise ValueError(f"one model per method: {len(methods)} methods, {len(models)} models")
    folders = {}
    for name, model in zip(methods, models, strict=True):
        method_type = get_method(name)
        fields = {key: str(value) for key, value in (options or {}).get(name, {}).items()}
        method = method_type(method_type.config_class.from_options(fields))
        config = RunConfig(dataset=dataset, kg=kg.profile.name, model=model,
                           model_roles=dict((roles or {}).get(name, {})), **settings)
        result = run(method, config=config, kg=kg)
        folders[f"{name} ({model_label(model, result.metrics['model_is_standin'])})"] = result.run_dir
    return folders


def import_peer_outputs(files: Sequence[str], output_format: str, config: Any,
                        id_map: str | None = None) -> Iterator[tuple[str, Any]]:
    """Each of a peer's output ``files`` as one run folder of method ``imported`` under ``config`` (a
    :class:`~sparqlab.runs.config.RunConfig` naming the dataset the files answer), yielded ``(file, RunResult)``
    as each run finishes."""
    from sparqlab.runs.runner import run
    from sparqlab.text2sparql.external import ImportedOutput

    if not config.dataset:
        raise ValueError("name the dataset the files answer with --dataset (e.g. -d ck25 --kg ck25)")
    for path in files:
        method = ImportedOutput(file=path, output_format=output_format, language=config.language or "en",
                                id_map=id_map)
        yield path, run(method, config=config)


def peer_cost_line(predictions) -> str:
    """The peer's cost per question as its file recorded it (the run's model calls are the replay's: none)."""
    parts = []
    for column, label, unit in (("extra.peer_elapsed_s", "peer seconds", " s"),
                                ("extra.peer_model_calls", "model calls", ""),
                                ("extra.peer_tool_calls", "tool calls", "")):
        values = predictions[column].dropna() if column in predictions else []
        if len(values):
            parts.append(f"{label} per question: mean {values.mean():.1f}{unit}, "
                         f"median {values.median():.1f}{unit}")
    return "; ".join(parts) or "the file records no times or calls"
