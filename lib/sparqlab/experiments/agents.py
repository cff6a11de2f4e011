"""The agent experiments of the SAGA paper as library calls, so notebooks only hold parameters, calls and figures:
SPINACH vs SAGA (Tables 1, 3, 4 and the cost of each), component ablations (Table 5) and schema coverage with
seeds (Table 6). Every score comes from the runner's per-question records (``sparqlab.eval``'s F1 / EM / empty);
tables average them per question (macro), in percent, over the judged questions
(:func:`sparqlab.eval.answer_means`: a question whose gold query fails or returns nothing is a gold error, counted
by :func:`judged_counts` and left out of every mean; a question without a query scores 0).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from sparqlab.core.names import short_name
from sparqlab.eval import answer_means, judged_frame
from sparqlab.eval.metrics import ANSWER_METRICS, F1_KEY
from sparqlab.methods import make_method
from sparqlab.runs import RunConfig, RunResult, run

ABLATIONS: dict[str, dict[str, Any]] = {
    "Full SAGA": {},
    "- type-constrained filtering": {"features": {"type_filter": False}},
    "- persistent type state": {"features": {"type_state": False}},
    "- answer-type prior": {"features": {"answer_type_prior": False}},
}
"""Table 5's variants as SAGA options (each removes one of ``SagaConfig.features``)."""

CALL_KINDS = ("controller", "reparse", "prune", "answer_type")
"""Model call kinds of the agents (``model_calls`` keys)."""


def run_variants(variants: Mapping[str, tuple[str, Mapping[str, Any]]], datasets: Sequence[str],
                 settings: Mapping[str, Any], **selection: Any) -> tuple[pd.DataFrame, list[RunResult]]:
    """Run each ``label -> (method name, options)`` on each dataset; returns every prediction (columns
    ``variant`` and ``dataset`` added, plus :func:`add_costs`) and the run results. ``settings`` are RunConfig
    fields shared by all runs; ``selection`` the question selection (``split``, ``sample``, ``sample_seed``,
    ``limit``, ``select``)."""
    frames, results = [], []
    for label, (method, options) in variants.items():
        for dataset in datasets:
            result = run(make_method(method, **dict(options)),
                         config=RunConfig(**dict(settings), dataset=dataset, **selection))
            frame = result.predictions()
            frame["variant"], frame["dataset"] = label, short_name(dataset)
            frames.append(frame)
            results.append(result)
    return add_costs(pd.concat(frames, ignore_index=True)), results


def coverage_sweep(coverages: Iterable[float], seeds: Iterable[int], datasets: Sequence[str],
                   settings: Mapping[str, Any], options: Mapping[str, Any] | None = None,
                   **selection: Any) -> tuple[pd.DataFrame, list[RunResult]]:
    """SAGA at each schema coverage × coverage seed (Table 6); columns ``coverage`` and ``coverage_seed`` added.
    Coverage 1.0 masks nothing, so it runs once (seed 0) and is repeated for every seed in the table."""
    seeds = list(seeds)
    frames, results = [], []
    for coverage in coverages:
        for seed in seeds[:1] if coverage == 1.0 else seeds:
            variant = {f"{coverage:.0%} seed {seed}": ("saga", {**dict(options or {}), "schema_coverage": coverage,
                                                                "coverage_seed": seed})}
            frame, runs = run_variants(variant, datasets, settings, **selection)
            copies = seeds if coverage == 1.0 else [seed]
            for copy in copies:
                frames.append(frame.assign(coverage=coverage, coverage_seed=copy))
            results += runs
    return pd.concat(frames, ignore_index=True), results


def add_costs(frame: pd.DataFrame) -> pd.DataFrame:
    """Per-question cost columns: ``actions``, ``model_calls_total``, ``calls.<kind>`` for each agent call kind,
    ``tokens_total`` (0 where a method has no such calls)."""
    frame = frame.copy()
    calls = frame["model_calls"].map(lambda c: c if isinstance(c, dict) else {})
    frame["model_calls_total"] = calls.map(lambda c: sum(c.values()))
    for kind in CALL_KINDS:
        frame[f"calls.{kind}"] = calls.map(lambda c, k=kind: c.get(k, 0))
    frame["tokens_total"] = frame["tokens"].map(lambda t: t.get("total", 0) if isinstance(t, dict) else 0)
    frame["actions"] = frame.get("extra.actions", pd.Series(0, index=frame.index)).fillna(0)
    return frame


def _percent(frame: pd.DataFrame, index: str, columns: str, metrics: Sequence[str],
             order: Sequence[str] | None = None) -> pd.DataFrame:
    """Mean ``metrics`` (%) over the judged questions (:func:`sparqlab.eval.answer_means`) per ``index`` value,
    grouped by ``columns`` value (in ``order``, else as they first appear)."""
    means = answer_means(frame, [index, columns], metrics) * 100
    table = means.unstack(columns).swaplevel(0, 1, axis=1)
    rows = list(dict.fromkeys(frame[index]))
    order = list(order or dict.fromkeys(frame[columns]))
    return table.reindex(index=rows, columns=pd.MultiIndex.from_product([order, list(metrics)])).round(2)


def score_table(frame: pd.DataFrame, by: str = "variant") -> pd.DataFrame:
    """Table 1 layout: one row per ``by`` value, F1 and EM (%) per dataset, over the judged questions."""
    return _percent(frame, by, "dataset", ANSWER_METRICS)


def ablation_table(frame: pd.DataFrame, by: str = "variant") -> pd.DataFrame:
    """Table 5 layout: F1 (%) per dataset and the unweighted macro average across the datasets (``Avg``), one row
    per ``by`` value in order of appearance."""
    table = _percent(frame, by, "dataset", (F1_KEY,)).droplevel(1, axis=1)
    table["Avg"] = table.mean(axis=1, skipna=False)
    return table.round(2)


def judged_counts(frame: pd.DataFrame, by: str = "variant") -> pd.DataFrame:
    """Per ``by`` value and dataset: the questions, how many are judged, and the gold errors left out of the
    means (:func:`sparqlab.eval.judged_frame`)."""
    from sparqlab.eval.errors import is_no_gold_record
    from sparqlab.eval.metrics import is_gold_error_record

    rows = frame.to_dict("records")
    counted = frame.assign(_judged=False,
                           _gold_error=[is_gold_error_record(r) and not is_no_gold_record(r) for r in rows])
    counted.loc[judged_frame(frame).index, "_judged"] = True
    groups = counted.groupby([by, "dataset"], sort=False)
    return pd.DataFrame({"questions": groups.size(), "judged": groups["_judged"].sum(),
                         "gold errors": groups["_gold_error"].sum()})


def _has_query(frame: pd.DataFrame) -> pd.Series:
    return frame["predicted_sparql"].fillna("").astype(str).str.strip() != ""


def _rate(frame: pd.DataFrame, values: pd.Series, by: str, datasets: list[str]) -> pd.DataFrame:
    table = frame.assign(_rate=values.astype(float)).pivot_table(index=by, columns="dataset", values="_rate",
                                                                 aggfunc="mean", sort=False) * 100
    return table.reindex(columns=datasets).round(1)


def empty_rate_table(frame: pd.DataFrame, by: str = "variant", over: str = "generated") -> pd.DataFrame:
    """Table 4 layout: empty-result rate (%) per dataset over the judged questions (the ones F1 / EM average).
    ``over="generated"`` (the paper's definition, as
    ``sparqlab.eval.empty_rates``): among the questions with a final query, the share whose query returned no
    answer; questions without one are :func:`no_query_table`. ``over="all"``: the share of all questions without
    answers (no final query counts as empty). Frames without ``predicted_sparql`` can only give the latter."""
    if over not in ("generated", "all"):
        raise ValueError(f"over must be 'generated' or 'all'; got {over!r}")
    datasets = list(dict.fromkeys(frame["dataset"]))
    judged = judged_frame(frame)
    rows = judged[_has_query(judged)] if over == "generated" and "predicted_sparql" in judged else judged
    return _rate(rows, rows["empty"], by, datasets)


def no_query_table(frame: pd.DataFrame, by: str = "variant") -> pd.DataFrame:
    """Share (%) of the judged questions per dataset that ended without a final query (beside Table 4's empty
    rate)."""
    judged = judged_frame(frame)
    return _rate(judged, ~_has_query(judged), by, list(dict.fromkeys(frame["dataset"])))


def question_kind(frame: pd.DataFrame) -> pd.Series:
    """``Boolean`` for ASK questions, ``Factoid`` otherwise (Table 3's split)."""
    return frame["answer_form"].map(lambda form: "Boolean" if form == "ask" else "Factoid")


def boolean_factoid_table(frame: pd.DataFrame, by: str = "variant") -> pd.DataFrame:
    """Table 3 layout: F1 and EM (%) on Boolean, Factoid and all questions."""
    both = pd.concat([frame.assign(kind=question_kind(frame)), frame.assign(kind="Overall")], ignore_index=True)
    kinds = [k for k in ("Boolean", "Factoid", "Overall") if k in set(both["kind"])]
    return _percent(both, by, "kind", ANSWER_METRICS, order=kinds)


def cost_table(frame: pd.DataFrame, by: str = "variant") -> pd.DataFrame:
    """Per question, averaged: actions, model calls (total and by kind), tokens, [BLOCKED] observations, and per
    lookup the properties shown, removed by the type filter and removed by LLM pruning."""
    columns = {"actions": "actions", "model calls": "model_calls_total",
               **{f"{kind} calls": f"calls.{kind}" for kind in CALL_KINDS}, "tokens": "tokens_total"}
    extra = {"blocked": "extra.blocked", "lookups": "extra.lookups", "shown": "extra.properties_shown",
             "filtered": "extra.properties_filtered", "pruned": "extra.properties_pruned"}
    columns.update({name: col for name, col in extra.items() if col in frame})
    table = frame.groupby(by, sort=False)[list(columns.values())].mean()
    table.columns = list(columns)
    if "lookups" in table:
        for name in ("shown", "filtered", "pruned"):
            table[f"{name} per lookup"] = (table.pop(name) / table["lookups"]).where(table["lookups"] > 0)
    table.insert(0, "questions", frame.groupby(by, sort=False).size())
    return table.round(2)


def coverage_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 6 layout: F1 (%) per coverage level and dataset, averaged over seeds, with an ``Avg`` column and the
    standard deviation across seeds of that average (``seed sd``)."""
    means = answer_means(frame, ["coverage", "coverage_seed", "dataset"], (F1_KEY,))[F1_KEY]
    per_seed = means.sort_index().mul(100).unstack()
    per_seed["Avg"] = per_seed.mean(axis=1)
    table = per_seed.groupby(level="coverage").mean()
    table["seed sd"] = per_seed["Avg"].groupby(level="coverage").std(ddof=0)
    table.index = [f"{c:.0%}" for c in table.index]
    table.index.name = "coverage"
    return table.round(2)


def type_blind(sparql: str | None, kg: Any, schema: Any) -> bool:
    """Whether a final query is type-blind (SAGA appendix A): one of its patterns uses a property whose known
    domain excludes the known types of its subject — the entity's declared types (τ(e), read from ``kg``) or a
    variable's type patterns in the same query; the conflict SAGA's [BLOCKED] check would have caught."""
    from sparqlab.methods.agents.schema.index import entity_types
    from sparqlab.methods.agents.schema.patterns import triple_patterns
    from sparqlab.methods.agents.schema.types import TypeState, domain_conflicts

    if not sparql or not str(sparql).strip():
        return False
    triples = triple_patterns(sparql, kg.profile.prefixes)
    state = TypeState()
    for subject in {t.subject for t in triples if not t.subject.startswith("?")}:
        state.add(subject, entity_types(kg, f"<{subject}>"))
    state.observe_query(triples, kg.profile.type_predicate)
    return bool(domain_conflicts(triples, state, schema))


def type_blindness_table(frame: pd.DataFrame, kg: Any, by: str = "variant") -> pd.DataFrame:
    """SAGA appendix A's error analysis from the runs' final queries: per ``by`` value, the failed judged
    questions (F1 < 1), how many of them are type-blind (:func:`type_blind`) and their share (%) — the paper
    finds 36.9 % of SPINACH's failures (41 of 111). The schema index is the KG's default one."""
    from sparqlab.methods.agents.schema.index import default_schema_folder, load_or_build

    schema = load_or_build(kg, default_schema_folder(kg))
    failed = judged_frame(frame)
    failed = failed[failed[F1_KEY] < 1]
    blind = failed.assign(_blind=[type_blind(s, kg, schema) for s in failed["predicted_sparql"]])
    groups = blind.groupby(by, sort=False)
    table = pd.DataFrame({"failures": groups.size(), "type-blind": groups["_blind"].sum()})
    table["type-blind (%)"] = (100 * table["type-blind"] / table["failures"]).round(1)
    return table
