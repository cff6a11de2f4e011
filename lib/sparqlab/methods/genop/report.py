"""Notebook-facing helpers: build an oracle from notebook parameters, run the worked examples, and turn results
and their event traces into tables and figures (the notebook itself holds no logic)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from sparqlab.core.labels import note_model
from sparqlab.methods.genop.oracle import Oracle, ScriptedModel
from sparqlab.methods.genop.semantics import EvalSettings, GenResult, run_genop

SCRIPTED = "scripted"
"""The ``model`` parameter value that selects the scripted model (the paper's assumed outputs)."""


def oracle_for(model: str, script: Mapping[str, Any] | str | Path | None = None, model_url: str | None = None, *,
               memoise: bool = True, aggregation: str = "majority",
               params: Mapping[str, Any] | None = None) -> Oracle:
    """``model == "scripted"``: the scripted model over ``script``; otherwise the named model (a ``standin-*`` or
    the name a server at ``model_url`` serves) behind the response cache."""
    if model == SCRIPTED:
        chat_model = ScriptedModel(script or {})
        note_model(chat_model.name, chat_model.is_standin)
    else:
        from sparqlab.llm.factory import make_model

        chat_model = make_model({"model": model, **({"base_url": model_url} if model_url else {})})
    return Oracle.for_model(chat_model, memoise=memoise, aggregation=aggregation, params=params)


def run_examples(examples: Mapping[str, Mapping[str, Any]], kg, model: str = SCRIPTED, model_url: str | None = None,
                 settings: EvalSettings | None = None, memoise: bool = True,
                 aggregation: str = "majority") -> dict[str, GenResult]:
    """Evaluate each example (``{"query", "script"}``) on ``kg`` with a fresh oracle; name -> result."""
    return {name: run_genop(example["query"], kg,
                            oracle_for(model, example.get("script"), model_url, memoise=memoise,
                                       aggregation=aggregation), settings)
            for name, example in examples.items()}


def summary(results: Mapping[str, GenResult]) -> pd.DataFrame:
    """One row per result: class, semantics, strata, rows, model calls by kind, memo hits."""
    rows = []
    for name, result in results.items():
        deps = result.dependencies.describe()
        stats = result.oracle_stats
        rows.append({"example": name, "class": result.query_class, "semantics": result.semantics,
                     "edges": " ".join(f"{e['from']}{e['sign']}>{e['to']}" for e in deps["edges"]) or "-",
                     "strata": deps["strata"], "rows": len(result.rows), "model_calls": result.model_calls,
                     "propose": stats["calls"].get("propose", 0), "validate": stats["calls"].get("validate", 0),
                     "memo_hits": sum(stats["memo_hits"].values())})
    return pd.DataFrame(rows)


def typed_rows(result: GenResult, kg=None, undefined: bool = False) -> pd.DataFrame:
    """The final typed mappings (``undefined``: the well-founded semantics' undefined ones), one column per
    projected variable, each cell ``value (origin)``; with ``kg``, IRIs are shown by their labels."""
    rows = result.undefined if undefined else result.rows
    labels: dict[str, str] = {}
    if kg is not None:
        from sparqlab.kg.neighbourhood import fetch_labels

        labels = fetch_labels(kg, {t.value for m in rows for t in m.values() if t.kind == "uri"})

    def cell(term) -> str:
        return f"{labels.get(term.value, term.value)} ({term.origin})"

    return pd.DataFrame([{v: cell(m[v]) for v in result.query.projection if v in m} for m in rows],
                        columns=list(result.query.projection))


def events(result: GenResult, kind: str) -> pd.DataFrame:
    """The trace events of one kind (``propose``, ``domains``, ``candidate``, ``validate``, ``repair``,
    ``iteration``, ``scc``, ``alternation``) as a table."""
    return pd.DataFrame([{k: v for k, v in e.items() if k != "event"} for e in result.events if e["event"] == kind])


def memo_comparison(examples: Mapping[str, Mapping[str, Any]], kg, model: str = SCRIPTED,
                    model_url: str | None = None, settings: EvalSettings | None = None) -> pd.DataFrame:
    """Model calls of each example with and without the proposal/validation memo tables (long format:
    ``example``, ``memoisation``, ``model_calls``), and whether both gave the same rows."""
    rows = []
    for memoise in (True, False):
        for name, result in run_examples(examples, kg, model, model_url, settings, memoise).items():
            rows.append({"example": name, "memoisation": "on" if memoise else "off",
                         "model_calls": result.model_calls, "rows": len(result.rows)})
    return pd.DataFrame(rows)
