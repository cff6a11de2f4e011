"""QALD JSON benchmarks (QALD-7 task 4 on Wikidata, QALD-10): English question, gold SPARQL, gold answers.

QALD JSON is ``{"dataset": ..., "questions": [{"id", "question": [{"language", "string", ...}], "query":
{"sparql"}, "answers": [<SPARQL-JSON result>]}, ...]}``.
"""

from __future__ import annotations

import json
from pathlib import Path

from sparqlab.data.files import require_file
from sparqlab.data.forms import answer_form, answers_from_json
from sparqlab.data.question import Question

_KEPT_FIELDS = ("answertype", "aggregation", "onlydbo", "hybrid")


def load_qald(path: str | Path, *, kg: str = "wikidata", grasp_ids: bool = False) -> list[Question]:
    """Questions of one QALD JSON file.

    ``grasp_ids`` records ``metadata["grasp_id"] = "test_<position>"``, the id GRASP's prepared copy and its
    released predictions use (its order was checked against this file's when the data was copied).
    """
    path = require_file(path)
    items = json.loads(path.read_text(encoding="utf-8"))["questions"]
    questions = []
    for position, item in enumerate(items):
        english = [q for q in item["question"] if q.get("language") == "en"]
        if not english:
            raise ValueError(f"{path}: question {item.get('id')!r} has no English string")
        sparql = item["query"]["sparql"]
        gold = item["answers"][0] if item.get("answers") else None
        metadata = {key: item[key] for key in _KEPT_FIELDS if key in item}
        if english[0].get("keywords"):
            metadata["keywords"] = english[0]["keywords"]
        if grasp_ids:
            metadata["grasp_id"] = f"test_{position}"
        metadata["gold_result"] = gold
        questions.append(
            Question(
                id=str(item["id"]),
                text=english[0]["string"],
                gold_sparql=sparql,
                gold_answers=None if gold is None else answers_from_json(gold),
                answer_form=answer_form(sparql, gold),
                kg=kg,
                metadata=metadata,
            )
        )
    return questions
