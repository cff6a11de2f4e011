"""DeSQ's multi-granular evaluation of one structured output (section 3.5, appendix A) and the strategy table.

For one question: fragment EM (key- and position-aligned), URI EM per field (id, label, description), and for
every URI correction strategy the id EM after correction, the EM of the assembled query (the paper's
first-appearance EM, :func:`~sparqlab.eval.structural.query_em`; the isomorphism-based structural EM beside it),
and how many wrong ids the strategy fixed and how many correct ids it broke (the columns of the paper's Tables
4–7). None of this needs a SPARQL endpoint. :func:`strategy_table` aggregates the per-question scores of a run.
A gold slot whose id no label source knows (``Decomposition.unknown``) counts for id EM only: its label and
description are unknown, not empty, and ``uri_unknown`` counts such slots.

Aggregation (section 3.5): "EM is computed per fragment and averaged across all fragments in the test set", and
URI EM is "the average across all URIs slots in the test set" — micro averages. Every question therefore scores
its matched and total counts (``<name>_matched``, ``<name>_total``), from which :func:`micro_scores` (and a
run's ``metrics.json``, ``method_scores.<name>_micro``) pool them; the per-question rates (``<name>``) stay, and
their mean over questions is our earlier per-question reading.

A run's ``metrics.json`` carries the paper's aggregates, registered here as metrics
(:func:`sparqlab.eval.metrics.register_metric`): the id EM of each strategy averaged over all URI slots
(``desq_id_em_<strategy>``, :func:`slot_averaged`; ``desq_id_em_none`` is the raw id EM) and the corpus BLEU of
the structured outputs (``desq_bleu``, :func:`corpus_output_bleu`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sparqlab.eval.metrics import F1_KEY, answer_means, field_value, register_metric
from sparqlab.eval.structural import fragment_em, query_em, structural_em, uri_em
from sparqlab.methods.desq.correction import STRATEGIES, Retriever, apply, correct_slots, roundtrip_flag
from sparqlab.methods.desq.fragments import AssemblyError, Decomposition, IdScheme, assemble, placeholders_in
from sparqlab.methods.desq.kb_memory import KBMemory
from sparqlab.methods.desq.structured import ParsedOutput

if TYPE_CHECKING:
    import pandas as pd

    from sparqlab.data.question import Question
    from sparqlab.kg.base import KnowledgeGraph


def slot_kinds(parsed: ParsedOutput, scheme: IdScheme) -> dict[str, str]:
    """Each predicted slot's kind, from the prefix it is used with and its id (``None``-free: unknown kinds are
    left out, so retrieval searches the whole memory for them)."""
    prefixes = {placeholder: prefix for f in parsed.fragments for prefix, placeholder in placeholders_in(f.text)}
    kinds = {}
    for slot in parsed.slots:
        prefix = prefixes.get(slot.placeholder)
        kind = scheme.kind_of(prefix, slot.id)
        if kind is None and prefix is not None:
            kind = next((k for p, _, _, k in scheme.prefixed if p == prefix), None)
        if kind is not None:
            kinds[slot.placeholder] = kind
    return kinds


def gold_sparql_for(question: Question, kg: KnowledgeGraph | None) -> str:
    """The gold query DeSQ works on: its IRI form on a KG whose gold answers are labels and whose gold queries find
    entities by label (the movie KG, ``answer_key="label"``), the gold query itself elsewhere."""
    if not question.gold_sparql:
        raise ValueError(f"question {question.id} has no gold SPARQL")
    if kg is not None and kg.profile.answer_key == "label":
        from sparqlab.methods.desq.iri_form import iri_form

        return iri_form(question.gold_sparql, question.gold_answers, kg)
    return question.gold_sparql


ALIGNMENTS = ("key", "position")


def score_output(parsed: ParsedOutput, gold: Decomposition, gold_sparql: str, memory: KBMemory, scheme: IdScheme, *,
                 threshold: float, jaccard: float, strategies: Sequence[str] = STRATEGIES,
                 retrieve: Callable | None = None, alignment: str = "key",
                 restrict_kind: bool = False) -> dict[str, Any]:
    """Every execution-free score of one prediction against its gold decomposition (module docstring).

    Keys: ``fragment_em_key``, ``fragment_em_position``, ``fragment_em`` (the one ``alignment`` names, recorded as
    ``fragment_alignment``), ``fragments`` (gold count), ``uri_{id,label,description}_em``, ``uri_slots``, the
    ``_matched`` / ``_total`` counts of each of these rates, ``uri_unknown`` (gold slots without a known label,
    left out of label / description EM), and per strategy ``<strategy>.id_em``, ``.final_em`` (first-appearance EM),
    ``.final_structural_em``, ``.fixed``, ``.broken``; with ``always-retrieve`` among the strategies also
    ``retrievals``: per retrieved slot ``[predicted id, retrieved id, cosine, gold id, round-trip flag]``, from which
    :func:`threshold_sweep` replays score-threshold and combined at any threshold. Rates of a question with nothing to compare (no gold slots) are
    ``None``. ``restrict_kind``: retrieval among memory entries of the slot's kind only (an extension of the paper).
    """
    if alignment not in ALIGNMENTS:
        raise ValueError(f"alignment must be one of {ALIGNMENTS}; got {alignment!r}")
    predicted_pairs = [(f.constraint, f.text) for f in parsed.fragments]
    gold_pairs = [(f.constraint, f.text) for f in gold.fragments]
    scores: dict[str, Any] = {"fragment_alignment": alignment}
    for name in ALIGNMENTS:
        matched, total = fragment_em(predicted_pairs, gold_pairs, name)
        scores.update(_counted(f"fragment_em_{name}", matched, total))
        if name == alignment:
            scores.update(_counted("fragment_em", matched, total))
    scores["fragments"] = len(gold_pairs)
    per_field = uri_em([s.to_dict() for s in parsed.slots], [s.to_dict() for s in gold.slots],
                       unknown=gold.unknown)
    for name, (matched, count) in per_field.items():
        scores.update(_counted(f"uri_{name}_em", matched, count))
    scores["uri_slots"] = len(gold.slots)
    scores["uri_unknown"] = len(gold.unknown)
    gold_ids = {s.placeholder: s.id for s in gold.slots}
    kinds = slot_kinds(parsed, scheme)
    retrieve = retrieve or Retriever(memory)
    predicted_ids = {s.placeholder: s.id for s in parsed.slots}
    for strategy in strategies:
        corrections = correct_slots(parsed.slots, memory, strategy, kinds=kinds, threshold=threshold,
                                    jaccard=jaccard, gold_ids=gold_ids, retrieve=retrieve,
                                    restrict_kind=restrict_kind)
        if strategy == "always-retrieve":
            scores["retrievals"] = [
                [c.predicted_id, c.retrieved_id, c.score, gold_ids.get(c.placeholder),
                 roundtrip_flag(slot, memory, fuzzy=False, jaccard=jaccard)]
                for slot, c in zip(parsed.slots, corrections, strict=True) if c.retrieved_id is not None]
        final = {c.placeholder: c.final_id for c in corrections}
        scores[f"{strategy}.id_em"] = _rate(sum(final.get(p) == g for p, g in gold_ids.items()), len(gold_ids))
        scores[f"{strategy}.fixed"] = sum(predicted_ids.get(p) != g and final.get(p) == g for p, g in gold_ids.items())
        scores[f"{strategy}.broken"] = sum(predicted_ids.get(p) == g and final.get(p) != g
                                           for p, g in gold_ids.items())
        try:
            assembled = assemble(parsed.fragments, apply(parsed.slots, corrections), scheme)
        except AssemblyError:
            assembled = None
        scores[f"{strategy}.final_em"] = query_em(assembled, gold_sparql)
        scores[f"{strategy}.final_structural_em"] = structural_em(assembled, gold_sparql)
    return scores


def _rate(matched: int, total: int) -> float | None:
    return matched / total if total else None


def _counted(name: str, matched: int, total: int) -> dict[str, Any]:
    return {name: _rate(matched, total), f"{name}_matched": matched, f"{name}_total": total}


MICRO_SCORES = {"fragment_em": "fragment EM", "fragment_em_key": "fragment EM, key-aligned",
                "fragment_em_position": "fragment EM, position-aligned", "uri_id_em": "URI id EM",
                "uri_label_em": "URI label EM", "uri_description_em": "URI description EM"}
"""The scores the paper averages over all fragments / URI slots of the test set, with their display names."""


def micro_scores(predictions: pd.DataFrame) -> pd.DataFrame:
    """Each of :data:`MICRO_SCORES` averaged over all fragments / URI slots (``micro``, the paper's section 3.5)
    and over questions (``per question``, a question with no gold slot left out), from a run's per-question
    scores (``scores.<name>_matched`` / ``_total`` columns, or the same without ``scores.``)."""
    import pandas as pd

    rows = {}
    for name, label in MICRO_SCORES.items():
        matched, total, rate = (_column(predictions, f"{name}{suffix}") for suffix in ("_matched", "_total", ""))
        rows[label] = {"micro": matched.sum() / total.sum() if total.sum() else float("nan"),
                       "per question": rate.mean(), "units": int(total.sum())}
    return pd.DataFrame(rows).T


def _column(predictions: pd.DataFrame, name: str) -> pd.Series:
    import pandas as pd

    for candidate in (f"scores.{name}", name):
        if candidate in predictions:
            return pd.to_numeric(predictions[candidate], errors="coerce")
    raise KeyError(f"no column {name!r} (nor scores.{name}) in the predictions")


def _optional(predictions: pd.DataFrame, name: str) -> pd.Series:
    """:func:`_column`, or all-NaN for a score a run did not record (runs scored before it existed)."""
    import pandas as pd

    try:
        return _column(predictions, name)
    except KeyError:
        return pd.Series(float("nan"), index=predictions.index)


def strategy_table(predictions: pd.DataFrame, strategies: Sequence[str] = STRATEGIES,
                   average: str = "micro", metrics: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """One row per strategy from per-question scores (``scores.<strategy>.id_em`` ... columns of
    ``load_predictions``, or the same keys without ``scores.``): id EM raw and corrected — ``average="micro"``
    over all URI slots of the test set (the paper, section 3.5), ``"question"`` the mean over questions with
    slots — final-query EM (per question; ``final_em`` the paper's first-appearance EM, ``final_structural_em``
    the isomorphism-based one), and the wrong ids fixed / correct ids broken in total. ``metrics``: the run's
    ``metrics.json``, whose slot-averaged id EM (``desq_id_em_<strategy>``) is read instead of recomputed."""
    import pandas as pd

    if average not in ("micro", "question"):
        raise ValueError(f"average must be 'micro' or 'question'; got {average!r}")
    column = lambda name: _column(predictions, name)  # noqa: E731
    records = predictions.to_dict("records")

    def mean(strategy: str) -> float:
        if average == "question":
            return column(f"{strategy}.id_em").mean()
        value = metrics.get(id_em_key(strategy)) if metrics is not None else slot_averaged(records, strategy)
        return float("nan") if value is None else value

    raw = column("none.id_em")
    rows = []
    for strategy in strategies:
        rows.append({"strategy": strategy, "id_em_raw": mean("none"), "id_em_corrected": mean(strategy),
                     "final_em": column(f"{strategy}.final_em").mean(),
                     "final_structural_em": _optional(predictions, f"{strategy}.final_structural_em").mean(),
                     "fixed": int(column(f"{strategy}.fixed").sum()),
                     "broken": int(column(f"{strategy}.broken").sum()), "n": int(raw.notna().sum())})
    table = pd.DataFrame(rows).set_index("strategy")
    table.attrs["average"] = average
    return table


def _retrievals(predictions: pd.DataFrame) -> list[list]:
    """The ``retrievals`` rows of every question (from a run's nested ``scores`` column or an offline
    ``scores.retrievals`` column), pooled."""
    if "scores.retrievals" in predictions:
        lists = predictions["scores.retrievals"]
    elif "scores" in predictions:
        lists = predictions["scores"].map(lambda scores: (scores or {}).get("retrievals"))
    else:
        raise KeyError("no retrievals in the predictions (score them with the always-retrieve strategy)")
    return [row for rows in lists if isinstance(rows, list) for row in rows]


def threshold_sweep(predictions: pd.DataFrame, thresholds: Sequence[float]) -> pd.DataFrame:
    """Id EM over the retrieved slots of a run after score-threshold and after combined at each threshold, replayed
    from the recorded retrievals (no new embedding): a candidate replaces the predicted id when its cosine is at
    least the threshold (combined: and round trip flagged the slot). ``gain``: fixed minus broken ids. How a cut
    trades fixes for breaks on held-out questions (``scripts/calibrate_desq_threshold.py``)."""
    import pandas as pd

    rows = _retrievals(predictions)
    if not rows:
        raise ValueError("no retrieved slots to sweep (no always-retrieve retrievals in the predictions)")
    out = []
    for t in thresholds:
        line = {"threshold": float(t), "slots": len(rows)}
        for name, gate in (("score-threshold", lambda flag: True), ("combined", lambda flag: flag)):
            final = [r[1] if r[2] >= t and gate(r[4]) else r[0] for r in rows]
            line[f"{name}.id_em"] = sum(f == r[3] for f, r in zip(final, rows, strict=True)) / len(rows)
            line[f"{name}.gain"] = sum((f == r[3]) - (r[0] == r[3]) for f, r in zip(final, rows, strict=True))
        out.append(line)
    return pd.DataFrame(out).set_index("threshold")


def slot_averaged(records: Sequence[Mapping[str, Any]], strategy: str) -> float | None:
    """Id EM after ``strategy`` (``"none"``: raw) averaged over all URI slots of the records (section 3.5: "the
    average across all URIs slots in the test set"): each question's rate weighted by its gold slots; ``None``
    without a slot. ``records``: prediction lines (``scores`` nested) or flat rows (``scores.<key>`` columns)."""
    matched = total = 0.0
    for record in records:
        rate, slots = field_value(record, f"scores.{strategy}.id_em"), field_value(record, "scores.uri_slots")
        if rate is None and slots is None:  # offline records name the scores without the prefix
            rate, slots = field_value(record, f"{strategy}.id_em"), field_value(record, "uri_slots")
        if rate is not None and slots:
            matched += rate * slots
            total += slots
    return matched / total if total else None


def corpus_output_bleu(records: Sequence[Mapping[str, Any]]) -> float | None:
    """Corpus BLEU (sacreBLEU, in [0, 1]) of the predicted structured outputs against the gold ones over the full
    output sequences (section 3.5), from the records' ``extra.structured_output`` and ``scores.gold_output`` (a
    missing output counts as empty); ``None`` when no record has a gold output."""
    from sparqlab.eval.structural import corpus_bleu

    pairs = [(field_value(record, "extra.structured_output"), gold) for record in records
             if (gold := field_value(record, "scores.gold_output")) is not None]
    if not pairs:
        return None
    return corpus_bleu([str(p or "") for p, _ in pairs], [str(g) for _, g in pairs])


def output_bleu(predictions: pd.DataFrame) -> float:
    """:func:`corpus_output_bleu` of a predictions frame (``load_predictions`` or offline records); NaN without a
    gold output."""
    value = corpus_output_bleu(predictions.to_dict("records"))
    return float("nan") if value is None else value


def id_em_key(strategy: str) -> str:
    """The ``metrics.json`` key of ``strategy``'s slot-averaged id EM (``none``: raw)."""
    return "desq_id_em_" + strategy.replace("-", "_")


for _strategy in STRATEGIES:
    register_metric(id_em_key(_strategy), f"DeSQ id EM ({_strategy})",
                    lambda records, strategy=_strategy: slot_averaged(records, strategy),
                    field=f"scores.{_strategy}.id_em", judged=False, optional=True,
                    views=frozenset({"show"}) if _strategy == "none" else frozenset())
register_metric("desq_bleu", "DeSQ output BLEU", corpus_output_bleu, judged=False, optional=True,
                views=frozenset({"show"}))


def query_em_table(predictions: pd.DataFrame) -> pd.DataFrame:
    """RQ1's comparison of any runs (a ``direct`` run beside a DeSQ run) by DeSQ's execution-free EM: per run, the
    mean §3.5 EM (``query_em``, first-appearance variables) and structural EM of each predicted query against the
    question's gold query as the dataset gives it, beside execution F1. A question without a predicted query
    scores 0; one whose gold query does not parse is left out (``unscored``). ``predictions``: the concatenated
    :func:`~sparqlab.runs.results.load_predictions` frames."""
    import pandas as pd

    from sparqlab.sparql.tree import SparqlParseError

    rows = []
    execution_f1 = answer_means(predictions, "run", (F1_KEY,))[F1_KEY] if F1_KEY in predictions else {}
    for run, frame in predictions.groupby("run", sort=False):
        em, structural, unscored = [], [], 0
        for predicted, gold in zip(frame["predicted_sparql"], frame["gold_sparql"], strict=True):
            predicted = predicted if isinstance(predicted, str) else None  # a missing query is NaN in a frame
            try:
                em.append(query_em(predicted, gold))
                structural.append(structural_em(predicted, gold))
            except (SparqlParseError, ValueError, TypeError):
                unscored += 1
        first = frame.iloc[0]
        rows.append({"run": run, "model": first.get("model"), "dataset": first.get("dataset"), "n": len(em),
                     "query_em": sum(em) / len(em) if em else float("nan"),
                     "structural_em": sum(structural) / len(structural) if structural else float("nan"),
                     "execution_f1": execution_f1.get(run, float("nan")), "unscored": unscored})
    return pd.DataFrame(rows).set_index("run")


FIGURE_MEASURES = {"Mapping": "fragment_em", "URI ID": "uri_id_em", "URI ID corrected": None,
                   "URI label": "uri_label_em", "URI description": "uri_description_em", "final query": None}
"""The measures of DeSQ's Figures 2-3 (Table 2's columns) and the per-question counts they pool."""


def figure_frame(records: dict[str, pd.DataFrame], model: str, strategy: str = "roundtrip-exact") -> pd.DataFrame:
    """Long rows (``dataset``, ``model``, ``measure``, ``value``) for Figures 2-3, one 0/1 row per fragment, URI
    slot or question, so a bar's mean is the paper's micro average (section 3.5) and its bootstrap runs over those
    units: Mapping (fragment EM), URI ID raw and after ``strategy`` (the paper's "ID corrected"), label and
    description EM, and the final-query EM of ``strategy``'s assembly. ``records``: dataset → per-question scores
    (a run's predictions or :func:`~sparqlab.methods.desq.method.offline_records`)."""
    import pandas as pd

    rows = []
    for dataset, frame in records.items():
        for measure, name in FIGURE_MEASURES.items():
            if measure == "final query":
                units = [(int(v), 1) for v in _column(frame, f"{strategy}.final_em").dropna()]
            elif measure == "URI ID corrected":
                pairs = zip(_column(frame, f"{strategy}.id_em"), _column(frame, "uri_slots"), strict=True)
                units = [(round(rate * slots), int(slots)) for rate, slots in pairs if rate == rate]
            else:
                pairs = zip(_column(frame, f"{name}_matched"), _column(frame, f"{name}_total"), strict=True)
                units = [(int(m), int(t)) for m, t in pairs if t == t]
            for matched, total in units:
                rows += [{"dataset": dataset, "model": model, "measure": measure, "value": float(n < matched)}
                         for n in range(total)]
    return pd.DataFrame(rows, columns=["dataset", "model", "measure", "value"])


def strategy_long(predictions: pd.DataFrame, strategies: Sequence[str] = STRATEGIES) -> pd.DataFrame:
    """Per-question, per-strategy rows (``strategy``, ``measure`` in {id EM, final EM}, ``value``) for plots."""
    import pandas as pd

    rows = []
    for _, record in predictions.iterrows():
        for strategy in strategies:
            for measure, key in (("ID EM", "id_em"), ("final-query EM", "final_em")):
                value = record.get(f"scores.{strategy}.{key}", record.get(f"{strategy}.{key}"))
                if value is not None and value == value:
                    rows.append({"strategy": strategy, "measure": measure, "value": float(value)})
    return pd.DataFrame(rows)
