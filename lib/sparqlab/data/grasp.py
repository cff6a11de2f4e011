"""Wikidata benchmarks shipped as question + SPARQL records: GRASP-prepared JSONL (WWQ, LC-QuAD 2.0, SPINACH)
and JSON lists of ``{"id", "question", "sparql", ...}`` (SPINACH dataset, QALD-9-plus as copied by SPINACH).

GRASP's JSONL lines are ``{"id", "question", "sparql", "paraphrases", "info"}``; WWQ keeps its gold result rows in
``info.results``. The others ship no gold answers (``gold_answers`` is ``None``: execute ``gold_sparql``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sparqlab.data.files import read_records, require_file
from sparqlab.data.forms import answer_form, answers_from_json, results_json
from sparqlab.data.question import Question


def load_grasp_jsonl(path: str | Path, *, kg: str = "wikidata") -> list[Question]:
    """Questions of one GRASP-prepared JSONL file; gold answers from ``info.results`` where present."""
    questions = []
    for _, record in read_records(path):
        info = dict(record.get("info") or {})
        rows = info.pop("results", None)
        gold = None if rows is None else results_json(rows)
        metadata: dict[str, Any] = {"info": info} if info else {}
        if record.get("paraphrases"):
            metadata["paraphrases"] = record["paraphrases"]
        if gold is not None:
            metadata["gold_result"] = gold
        questions.append(
            Question(
                id=str(record["id"]),
                text=record["question"],
                gold_sparql=record["sparql"],
                gold_answers=None if gold is None else answers_from_json(gold),
                answer_form=answer_form(record["sparql"], gold),
                kg=kg,
                metadata=metadata,
            )
        )
    return questions


def load_json_list(
    path: str | Path, *, kg: str = "wikidata", grasp_jsonl: str | Path | None = None
) -> list[Question]:
    """Questions of a JSON list of ``{"id", "question", "sparql", ...}`` records (no gold answers).

    Fields besides those three (SPINACH's ``title``, ``url``) go into metadata. With ``grasp_jsonl``, GRASP's
    prepared copy of the same questions (matched by original id, ``info.id``) adds ``metadata["grasp_id"]`` and
    ``metadata["grasp_sparql"]`` (the gold query with explicit PREFIX declarations, runnable outside WDQS).
    """
    records = json.loads(require_file(path).read_text(encoding="utf-8"))
    grasp = {}
    if grasp_jsonl is not None:
        grasp = {str(row["info"]["id"]): row for _, row in read_records(grasp_jsonl)}
    questions = []
    for record in records:
        qid = str(record["id"])
        metadata = {k: v for k, v in record.items() if k not in ("id", "question", "sparql")}
        if qid in grasp:
            metadata["grasp_id"] = grasp[qid]["id"]
            metadata["grasp_sparql"] = grasp[qid]["sparql"]
        questions.append(
            Question(
                id=qid,
                text=record["question"],
                gold_sparql=record["sparql"],
                answer_form=answer_form(record["sparql"]),
                kg=kg,
                metadata=metadata,
            )
        )
    return questions


LCQUAD2_FORMS = ("raw", "ref")
LCQUAD2_TEST_EVERY = 5
"""Every fifth question (by position in the file) of the Raw / Ref variants is their test split, the others their
train split: the bundled file is LC-QuAD 2.0's test set only (its 24k training questions are not bundled)."""


def lcquad2_variant(questions: list[Question], form: str, split: str) -> list[Question]:
    """DeSQ's LC-QuAD 2.0 Raw and Ref(ormulated) question sets (Tables 3-7): the same questions and gold queries,
    worded as LC-QuAD 2.0's verbalised question (``raw``) or as its paraphrase (``ref``, GRASP's
    ``paraphrases[0]``). Only questions with a usable paraphrase (at least three words, not the question itself)
    are kept, in both forms, so a train-raw / test-ref crossing compares wordings of one question set; ``split``
    is ``train`` or ``test`` (:data:`LCQUAD2_TEST_EVERY`), disjoint and the same in both forms."""
    import dataclasses

    if form not in LCQUAD2_FORMS or split not in ("train", "test"):
        raise ValueError(f"form must be one of {LCQUAD2_FORMS} and split train or test; got {form!r}, {split!r}")
    chosen = []
    for question in questions:
        paraphrase = " ".join(str((question.metadata.get("paraphrases") or [""])[0]).split())
        if len(paraphrase.split()) < 3 or paraphrase.lower() == " ".join(question.text.split()).lower():
            continue
        chosen.append(question if form == "raw" else dataclasses.replace(question, text=paraphrase))
    return [q for n, q in enumerate(chosen) if (n % LCQUAD2_TEST_EVERY == 0) == (split == "test")]
