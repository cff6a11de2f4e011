"""GGC metrics from run folders: pipeline accuracy, item-level P/R/F1, gate metrics, threshold sweeps, the subset
analysis of appendix D.1 and per-stage inference time.

:func:`stage_frame` reads one GGC run and, per question, judges both the initial query s(0) and (where the run
called the corrector) the corrected query s(c) against the gold answers, with the same answer code the runner
uses. Everything else is arithmetic on that frame: a threshold τ selects ŝ = s(c) where P ≥ τ, else s(0), so
one gated run at the smallest τ of a sweep serves every larger τ with no generator or corrector call repeated.

Conventions (paper, section 4.1): query-level accuracy is the share of questions whose final answer set equals
the gold answer set; item-level precision/recall/F1 are micro-averaged over answers (Σ|Â∩A*| / Σ|Â|, Σ|Â∩A*| /
Σ|A*|). A question whose gold query fails or returns nothing ("ground-truth SPARQL error") counts, by default, as
a generator error that no correction fixes, as the paper's Table 3 counts it among the generator's errors
(``gold_errors="count"``); ``gold_errors="exclude"`` leaves such questions out (ours before). For the gate, "correction required"
(s(0) wrong) is the positive class; the trigger rate is the share of questions routed to the corrector.
Inference time of a setting is the sum of its stages' wall times (generator, KG feedback, gate, and corrector
for the triggered questions). A model reply served from the response cache is left out of it, as a run's
``model_latency_s`` counts a cached reply as 0 s: its replay took ~0 s and says nothing of the model's cost; the
setting's ``cached_calls`` says how many were left out, and a time ratio between settings with such calls is NaN.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sparqlab.core.jsonl import read_jsonl
from sparqlab.eval import answers_from_result
from sparqlab.eval.metrics import binary_decisions, gold_failed, is_gold_error_record, judge
from sparqlab.eval.normalise import answer_set
from sparqlab.kg.errors import KGError
from sparqlab.methods.ggc.gate import decide

STAGES = ("generator", "feedback", "gate", "corrector")
MODEL_STAGES = ("generator", "corrector")
"""The stages that call a model, whose reply may come from the response cache."""


def execute_answers(kg: Any, sparql: str | None) -> list[str] | None:
    """The normalised answers of ``sparql`` on ``kg`` as the runner computes them; ``None`` when it fails."""
    if not sparql:
        return None
    try:
        return sorted(answers_from_result(kg.query(sparql), kg))
    except KGError:
        return None


def _overlap(predicted: Iterable[str] | None, gold: set[str], gold_failed: bool,
             rule: str) -> tuple[int, int, bool]:
    """(hits, predicted size, query-level correctness) of one answer list against the gold set; correctness is
    the judged EM (:func:`sparqlab.eval.metrics.judge`: no answers are never correct, a gold error is wrong under
    ``count``)."""
    found = None if predicted is None else answer_set(predicted)
    score = judge(found, gold, gold_failed, rule)
    return len((found or set()) & gold), len(found or ()), bool(score is not None and score.em)


def initial_correct(answers: Iterable[str] | None, gold: Iterable[str] | None) -> bool:
    """Query-level correctness: the answer set equals the gold answer set; no answers are wrong, and so is any
    query of a question whose gold query failed (``gold=None``) or returned nothing (the ``count`` rule of
    :func:`sparqlab.eval.metrics.judge`, as Table 3 counts ground-truth errors among the generator's errors)."""
    found = None if answers is None else answer_set(answers)
    return _overlap(found, answer_set(gold or ()), gold is None, "count")[2]


GOLD_ERRORS = ("count", "exclude")


def cached_stages(record: Mapping[str, Any]) -> set[str]:
    """The model stages of a GGC prediction record whose reply came from the response cache
    (``extra.cached_stages``). A record written before GGC named them has only the runner's count
    (``model_calls_uncached``): when one of its calls was cached, each of its model stages counts as cached, since
    which one is not recorded."""
    extra = record.get("extra") or {}
    if "cached_stages" in extra:
        return set(extra["cached_stages"])
    calls = sum((record.get("model_calls") or {}).values())
    if int(record.get("model_calls_uncached", calls)) >= calls:
        return set()
    return {stage for stage in MODEL_STAGES if f"t_{stage}_s" in extra}


def stage_frame(run_dir: str | Path, kg: Any, gold_errors: str = "count") -> pd.DataFrame:
    """One row per question of a GGC run: the gate probability, whether the run corrected it, the outcome of s(0)
    and of s(c) (``*_hits``, ``*_size``, ``*_correct``), the gold size, ``gold_error`` and the stage times (NaN for
    a stage whose model reply came from the response cache, :func:`cached_stages`: not a time the model took).

    s(0)'s answers are the record's own when the run kept s(0); otherwise s(0) is executed on ``kg`` (cached).
    A question the corrector was not called on has s(c) = s(0). ``gold_errors``: ``count`` (default, Table 3) —
    a question with a gold error is wrong for s(0) and s(c); ``exclude`` — left out. The frame's
    ``attrs["gold_errors"]`` records which.
    """
    if gold_errors not in GOLD_ERRORS:
        raise ValueError(f"gold_errors must be one of {GOLD_ERRORS}; got {gold_errors!r}")
    rows = []
    for record in read_jsonl(Path(run_dir) / "predictions.jsonl"):
        gold_error = is_gold_error_record(record)
        if gold_error and gold_errors == "exclude":
            continue
        extra = record.get("extra") or {}
        if "initial_sparql" not in extra:
            raise ValueError(f"{run_dir} is not a GGC run (question {record['id']} has no initial_sparql)")
        gold, failed = answer_set(record["gold_answers"] or ()), gold_failed(record.get("gold_source"))
        triggered, cached = bool(extra.get("triggered")), cached_stages(record)
        final = record.get("predicted_answers")
        initial = execute_answers(kg, extra["initial_sparql"]) if triggered else final
        h0, n0, ok0 = _overlap(initial, gold, failed, gold_errors)
        hc, nc, okc = _overlap(final, gold, failed, gold_errors) if triggered else (h0, n0, ok0)
        rows.append({
            "id": record["id"], "gate_prob": extra.get("gate_prob"), "corrected": triggered,
            "initial_hits": h0, "initial_size": n0, "initial_correct": ok0,
            "corrected_hits": hc, "corrected_size": nc, "corrected_correct": okc, "gold_size": len(gold),
            "gold_error": gold_error,
            **{f"t_{stage}_s": float("nan") if stage in cached else float(extra.get(f"t_{stage}_s") or 0.0)
               for stage in STAGES},
            "model_calls": sum((record.get("model_calls") or {}).values()),
        })
    if not rows:
        raise ValueError(f"{run_dir} has no judgeable questions")
    frame = pd.DataFrame(rows)
    frame.attrs["gold_errors"] = gold_errors
    return frame


def triggers(frame: pd.DataFrame, threshold: float | None) -> np.ndarray:
    """Which questions a threshold routes to the corrector: g = 1[P ≥ τ]; ``None`` means the run's own
    decisions (``mode="all"`` / ``"none"`` runs have no gate probabilities). Refuses a τ that would trigger a
    question the run did not correct (τ below the run's own)."""
    if threshold is None:
        return frame["corrected"].to_numpy(bool)
    if frame["gate_prob"].isna().any():
        raise ValueError("this run has no gate probabilities (mode='all' or 'none'); pass threshold=None")
    chosen = np.array([decide(p, threshold) for p in frame["gate_prob"]], dtype=bool)
    if (chosen & ~frame["corrected"].to_numpy(bool)).any():
        raise ValueError(f"τ={threshold} triggers questions this run did not correct: sweep from a run whose "
                         "threshold is at most the smallest τ")
    return chosen


def gate_metrics(labels: Sequence[int] | np.ndarray, triggered: Sequence[bool] | np.ndarray) -> dict[str, float]:
    """Accuracy, precision, recall, F1, FPR and trigger rate of gate decisions against labels (1 = s(0) wrong,
    "correction required", the positive class; section 4.1). Undefined ratios (no positives predicted ...) are 0."""
    found = binary_decisions(np.asarray(labels, dtype=bool).tolist(), np.asarray(triggered, dtype=bool).tolist())
    counts = {k: found.pop(k) for k in ("tp", "fp", "fn", "tn")}
    return {**{f"gate_{k}": v for k, v in found.items()}, **counts}


def pipeline_metrics(frame: pd.DataFrame, threshold: float | None = None) -> dict[str, Any]:
    """Query-level accuracy, item-level micro P/R/F1, gate metrics and inference time of the pipeline whose
    corrector runs on the questions :func:`triggers` selects; ``cached_calls``: its model calls served from the
    response cache, whose time ``time_s`` leaves out (module docstring)."""
    chosen = triggers(frame, threshold)
    pick = lambda name: np.where(chosen, frame[f"corrected_{name}"], frame[f"initial_{name}"])  # noqa: E731
    hits, size, correct = pick("hits").sum(), pick("size").sum(), pick("correct").astype(bool)
    gold = frame["gold_size"].sum()
    precision, recall = (hits / size if size else 0.0), (hits / gold if gold else 0.0)
    time_s = float(frame[["t_generator_s", "t_feedback_s", "t_gate_s"]].sum().sum()
                   + frame["t_corrector_s"][chosen].sum())
    cached_calls = int(frame["t_generator_s"].isna().sum() + frame["t_corrector_s"][chosen].isna().sum())
    labels = ~frame["initial_correct"].to_numpy(bool)
    return {"threshold": threshold, "n": len(frame), "accuracy": float(correct.mean()),
            "item_precision": float(precision), "item_recall": float(recall),
            "item_f1": float(2 * precision * recall / (precision + recall)) if precision + recall else 0.0,
            **gate_metrics(labels, chosen), "corrector_calls": int(chosen.sum()),
            "time_s": time_s, "time_per_question_s": time_s / len(frame), "cached_calls": cached_calls}


def sweep(frame: pd.DataFrame, thresholds: Iterable[float]) -> pd.DataFrame:
    """Table 5a: :func:`pipeline_metrics` per τ, from one run's records."""
    return pd.DataFrame([pipeline_metrics(frame, t) for t in thresholds])


def subset_analysis(frame: pd.DataFrame, threshold: float | None = None) -> pd.DataFrame:
    """Appendix D.1: query-level accuracy of the final queries on the triggered questions, on the originally
    wrong ones and on the originally correct ones, with how many were fixed or broken, and how many of the
    subset's questions have a gold error (``gold_errors``: counted as wrong under the frame's default, or 0 when
    the frame excluded them; the table's ``attrs["gold_errors"]`` says which)."""
    chosen = triggers(frame, threshold)
    initial = frame["initial_correct"].to_numpy(bool)
    gold_error = frame["gold_error"].to_numpy(bool) if "gold_error" in frame else np.zeros(len(frame), bool)
    final = np.where(chosen, frame["corrected_correct"], frame["initial_correct"]).astype(bool)
    subsets = {"correction required (triggered)": chosen, "originally wrong": ~initial,
               "originally correct": initial}
    rows = []
    for name, mask in subsets.items():
        rows.append({"subset": name, "n": int(mask.sum()),
                     "accuracy": float(final[mask].mean()) if mask.any() else float("nan"),
                     "fixed": int((mask & ~initial & final).sum()), "broken": int((mask & initial & ~final).sum()),
                     "gold_errors": int((mask & gold_error).sum())})
    table = pd.DataFrame(rows).set_index("subset")
    table.attrs["gold_errors"] = frame.attrs.get("gold_errors", "count")
    return table


def compare(frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Table 2 layout: one row per setting (each frame evaluated with its run's own decisions), with time
    relative to the first setting (normally generator-only; NaN where either has cached calls)."""
    table = pd.DataFrame({label: pipeline_metrics(frame) for label, frame in frames.items()}).T
    measured = model_times(table)
    first = measured.iloc[0]
    table["time_vs_first"] = measured / first if first else float("nan")
    return table


def model_times(table: pd.DataFrame) -> pd.Series:
    """Each setting's ``time_s``, NaN where some of its model replies came from the response cache: its time then
    leaves their cost out and is no measure to compare settings by."""
    return table["time_s"].where(table["cached_calls"] == 0).astype(float)


def time_ratios(table: pd.DataFrame, gated: str = "gated", generator: str = "generator only",
                correct_all: str = "correct all") -> dict[str, float]:
    """The paper's cost shape: gated / generator-only and gated / correct-all inference time (NaN where a setting
    has cached calls, :func:`model_times`)."""
    times = model_times(table)
    return {"gated/generator": float(times[gated] / times[generator]),
            "gated/correct_all": float(times[gated] / times[correct_all])}


SWEEP_MEASURES = {"gate_trigger_rate": "trigger rate", "gate_precision": "gate precision", "gate_recall": "gate recall",
                  "gate_f1": "gate F1", "gate_fpr": "gate FPR", "accuracy": "query accuracy"}
"""Columns of a sweep table drawn against τ, with their legend names."""


UNDEFINED_WITHOUT = {"gate_precision": ("tp", "fp"), "gate_recall": ("tp", "fn"), "gate_fpr": ("fp", "tn")}
"""A gate ratio is undefined (0/0) when both of these counts are 0: precision when nothing is triggered."""


def sweep_long(table: pd.DataFrame) -> pd.DataFrame:
    """A sweep table as long rows (``threshold``, ``measure``, ``percent``) for a line plot per measure; a ratio
    that is undefined at a τ (:data:`UNDEFINED_WITHOUT`; F1 when precision or recall is) is NaN, not the 0 the
    table holds, so a figure draws it as missing."""
    table = table.copy()
    for measure, counts in UNDEFINED_WITHOUT.items():
        if set(counts) <= set(table.columns):
            table[measure] = table[measure].where(table[list(counts)].sum(axis=1) > 0)
    table["gate_f1"] = table["gate_f1"].where(table["gate_precision"].notna() & table["gate_recall"].notna())
    long = table.melt(id_vars=["threshold"], value_vars=list(SWEEP_MEASURES), var_name="measure", value_name="value")
    long["measure"] = long["measure"].map(SWEEP_MEASURES)
    long["percent"] = 100 * long["value"].astype(float)
    return long
