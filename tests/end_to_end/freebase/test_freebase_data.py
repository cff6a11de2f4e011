"""The Freebase datasets: counts as the papers, gold answers as IRIs, what the public view keeps."""

from __future__ import annotations

import json

import pytest

from sparqlab.data.freebase import cwq_questions, grailqa_questions, webqsp_questions
from sparqlab.data.registry import load
from sparqlab.graphs.freebase import FB, dataset_entity_names


def test_webqsp_test_keeps_the_answered_questions_with_public_topic_entities():
    questions = {q.id: q for q in load("webqsp", "test")}
    assert len(questions) == 1628  # SAGA section 5: 1,628 of the 1,639 test questions
    first = questions["WebQTest-0"]
    assert first.gold_answers == [FB + "m.01428y", FB + "m.04ygk0"]
    assert first.public().topic_entities == [FB + "m.03_r3"]
    assert first.public().metadata == {} and first.public().gold_sparql is None
    assert len(first.metadata["parses"]) == 2
    assert any(q.metadata["manual_sparql"] for q in questions.values())


def test_value_answers_stay_lexical_forms():
    data = {"Questions": [{"QuestionId": "q1", "RawQuestion": "when?", "Parses": [{
        "ParseId": "q1.P0", "Sparql": "SELECT ?x WHERE { ?s ?p ?x }", "TopicEntityMid": "m.0abc",
        "Answers": [{"AnswerType": "Value", "AnswerArgument": "1841-03-04", "EntityName": None}]}]}]}
    assert webqsp_questions(data)[0].gold_answers == ["1841-03-04"]


def test_cwq_and_grailqa_withhold_their_topic_entities():
    cwq = load("cwq")
    assert len(cwq) == 3531
    assert all(q.topic_entities == [] for q in cwq)
    with_topic = [q for q in cwq if q.metadata["topic_entity"]]
    assert len(with_topic) > 3000 and "topic_entity" not in with_topic[0].public().metadata
    grail = load("grailqa")
    assert {q.metadata["level"] for q in grail} == {"i.i.d.", "compositional", "zero-shot"}
    assert sum(q.metadata["level"] == "zero-shot" for q in grail) == 562
    assert grail[0].public().metadata == {}


def test_loaders_refuse_missing_files(tmp_path):
    from sparqlab.data.freebase import load_grailqa

    with pytest.raises(FileNotFoundError, match="PROVENANCE"):
        load_grailqa(tmp_path / "absent.json")


def test_record_formats_map_to_questions():
    cwq = cwq_questions([{"ID": "c1", "question": "q?", "sparql": "SELECT ?x WHERE { ?x ?p ?o }",
                          "answer": ["m.0x", "Blue"]}])[0]
    assert cwq.gold_answers == ["Blue", FB + "m.0x"]
    grail = grailqa_questions([json.loads('{"qid": 7, "question": "q?", "sparql_query": "ASK { ?s ?p ?o }", '
                                          '"answer": [{"answer_type": "Entity", "answer_argument": "m.0y"}]}')])[0]
    assert grail.id == "7" and grail.answer_form == "ask" and grail.gold_answers == [FB + "m.0y"]


def test_entity_names_for_search_come_from_every_dataset():
    names = dataset_entity_names()
    assert names["m.03_r3"] == "Jamaica"  # WebQSP topic entity
    assert names["m.01428y"] == "Jamaican English"  # WebQSP answer
    assert names["m.0bzhby"] == "Transylvanian Saxon dialect"  # GrailQA topic entity
    assert len(names) > 20_000
