"""Dataset ck25: 50 questions with the challenge's qnames, the official true result set as gold, withheld
metadata, and the reference-query differences reported (not replaced)."""

from __future__ import annotations

import json

from sparqlab.text2sparql.ck25_store import ck25_dir


def test_fifty_questions_with_qnames_and_official_gold(ck25_questions):
    official = json.loads((ck25_dir() / "ck25_true_result_set.json").read_text())
    assert [q.id for q in ck25_questions] == [f"ck25:{n}-en" for n in range(1, 51)]
    for question in ck25_questions:
        values = official[question.id]
        if question.answer_form == "ask":
            assert question.gold_answers == (["true"] if values["true"] else ["false"])
        else:
            assert set(question.gold_answers) == set(values)
    assert sum(q.answer_form == "ask" for q in ck25_questions) == 3


def test_features_classes_properties_are_withheld(ck25_questions):
    question = ck25_questions[0]
    assert question.metadata["features"] == ["SELECT"] and question.metadata["classes"]
    public = question.public()
    assert public.gold_sparql is None and public.gold_answers is None
    assert not {"features", "classes", "properties", "order_matters"} & set(public.metadata)


def test_differing_questions_keep_the_official_gold(ck25_questions):
    from sparqlab.text2sparql.ck25_questions import DIFFERING_REFERENCE

    by_id = {q.id: q for q in ck25_questions}
    assert len(DIFFERING_REFERENCE) == 5
    assert by_id["ck25:25-en"].gold_answers == [] and by_id["ck25:41-en"].gold_answers == []
