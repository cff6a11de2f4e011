"""Scoring generated queries later: execute a generation-only run's final queries on a KG and score them.

A run with ``RunConfig(generate_only=True)`` (``sparqlab run ... --generate-only``) writes each question's final
query and nothing else, for a researcher who executes queries on an offline dump. :func:`score_generated` takes
that folder (or any ``predictions.jsonl`` whose lines have ``id``, ``predicted_sparql`` and ``gold_answers`` or
``gold_sparql``), executes every final query on the KG it is given, obtains gold answers the runner's way (the
given ones, else the gold query's on the same KG) and scores with the same code as every run
(:func:`sparqlab.eval.score_prediction`). The scored copy goes to ``<run>/scored/<kg>/`` (``predictions.jsonl``,
``metrics.json``), so scoring one folder against several endpoints keeps every result.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparqlab.core.jsonl import read_jsonl, write_jsonl
from sparqlab.eval.assess import score_values
from sparqlab.eval.errors import gold_error_source, score_and_categorise
from sparqlab.eval.matching import match_either, resolve_mode, result_answers
from sparqlab.kg.errors import KGError
from sparqlab.runs.metrics import compute_metrics
from sparqlab.runs.store import PREDICTIONS, write_json

if TYPE_CHECKING:
    from sparqlab.kg.base import KnowledgeGraph

def score_generated(source: str | Path, kg: KnowledgeGraph, output_dir: str | Path | None = None,
                    progress: bool = True, answer_match: str | None = None) -> tuple[Path, dict[str, Any]]:
    """Execute and score the final queries of ``source`` (a run folder or ``predictions.jsonl``) on ``kg``.

    ``answer_match`` is the comparison rule (:mod:`sparqlab.eval.matching`; default: the KG profile's). Returns
    the output folder and its metrics (the same fields as a run's ``metrics.json`` scores, plus ``source``,
    ``kg`` and ``answer_match``). Each line gets its scores and ``error_type``
    (:func:`sparqlab.eval.errors.score_and_categorise`), as a run's lines do. A final query that fails gets its error kind as ``error_category`` and is scored as no answer;
    a failing gold query leaves its question unscored, as in a run.
    """
    from tqdm.auto import tqdm

    source = Path(source)
    path = source / PREDICTIONS if source.is_dir() else source
    if not path.exists():
        raise FileNotFoundError(f"no {PREDICTIONS} at {path}")
    records = list(read_jsonl(path))
    if not records:
        raise ValueError(f"{path} holds no records")
    missing = [str(r.get("id")) for r in records if "predicted_sparql" not in r or "id" not in r]
    if missing:
        raise ValueError(f"records need 'id' and 'predicted_sparql'; {len(missing)} lack them (first: {missing[0]})")
    folder = Path(output_dir) if output_dir else path.parent / "scored" / _slug(kg.identity)
    mode = resolve_mode(answer_match, kg)
    gold_cache: dict[str, tuple[list[str] | None, str]] = {}
    scored = []
    for record in tqdm(records, desc=f"scoring on {kg.identity}", unit="q", disable=not progress):
        predicted, failure = _answers(kg, record.get("predicted_sparql"), mode)
        error = failure.kind if failure else None
        gold, gold_source = _gold(kg, record, gold_cache, mode)
        if mode == "either" and predicted and gold is not None:
            predicted = match_either(predicted, gold, kg)
        error_category = record.get("error_category") or error
        scores, error_type = score_and_categorise(record.get("predicted_sparql"), predicted, error_category, gold,
                                                  record.get("gold_sparql"), gold_source)
        scored.append({**record, "predicted_answers": predicted, "gold_answers": gold, "gold_source": gold_source,
                       **score_values(scores), "error_category": error_category,
                       "error_type": error_type})
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(folder / PREDICTIONS, scored)
    metrics = {"source": str(path), "kg": kg.identity, "answer_match": mode, **compute_metrics(scored, len(scored))}
    write_json(folder / "metrics.json", metrics)
    return folder, metrics


def _answers(kg: KnowledgeGraph, sparql: str | None, mode: str) -> tuple[list[str] | None, KGError | None]:
    if not sparql:
        return None, None
    try:
        return sorted(result_answers(kg.query(sparql), kg, mode)), None
    except KGError as error:
        return None, error


def _gold(kg: KnowledgeGraph, record: dict[str, Any], cache: dict[str, tuple[list[str] | None, str]],
          mode: str) -> tuple[list[str] | None, str | None]:
    if record.get("gold_answers") is not None:
        return list(record["gold_answers"]), "given"
    sparql = record.get("gold_sparql")
    if not sparql:
        return None, None
    if sparql not in cache:
        answers, error = _answers(kg, sparql, mode)
        cache[sparql] = (answers, "gold_sparql") if error is None else (None, gold_error_source(error))
    return cache[sparql]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80] or "kg"
