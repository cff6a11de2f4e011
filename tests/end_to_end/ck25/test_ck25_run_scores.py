"""A run over CK25 carries the challenge's official per-question score, so sweeps and tables report it."""

from __future__ import annotations

import json

import pytest

from sparqlab.platform import Method, MethodOutput
from sparqlab.runs import RunConfig, run
from sparqlab.text2sparql.metric import flatten_result, gold_relevance, official_scores


class ReferenceQueries(Method):
    """Answers with a fixed query per question id (the test's reference queries; no model)."""

    roles = ()

    def __init__(self, queries):
        super().__init__()
        self.queries = queries

    async def answer(self, question, ctx):
        return MethodOutput(self.queries[question.id], None, {})


def test_records_and_metrics_carry_the_official_set_f(ck25_kg, ck25_questions, tmp_path):
    questions = [q for q in ck25_questions if q.gold_answers and q.answer_form == "select"][:6]
    queries = {q.id: q.gold_sparql for q in questions}
    queries[questions[0].id] = 'SELECT ?x WHERE { BIND("not an answer" AS ?x) }'  # a wrong answer scores 0
    result = run(ReferenceQueries(queries), questions, RunConfig(experiment="ck25-scores", kg="ck25",
                                                                 output_root=str(tmp_path)), kg=ck25_kg)
    records = [json.loads(line) for line in (result.run_dir / "predictions.jsonl").read_text().splitlines()]
    for question, record in zip(questions, sorted(records, key=lambda r: [q.id for q in questions].index(r["id"])),
                                strict=True):
        expected = official_scores(flatten_result(ck25_kg.query(queries[question.id])),
                                   gold_relevance(question.gold_answers, question.answer_form),
                                   bool(question.metadata["order_matters"]))
        assert record["scores"]["text2sparql"] == expected.set_F
    by_id = {r["id"]: r for r in records}
    assert by_id[questions[0].id]["scores"]["text2sparql"] == 0
    assert any(r["scores"]["text2sparql"] == 1 for r in records)
    mean = sum(r["scores"]["text2sparql"] for r in records) / len(records)
    assert result.metrics["method_scores"]["text2sparql"] == pytest.approx(mean, abs=1e-6)  # rounded to 6 places


def test_other_datasets_get_no_official_score(tmp_path):
    from sparqlab.methods import DirectSparql

    result = run(DirectSparql(), config=RunConfig(experiment="plain", kg="movies", dataset="metaqa-1hop", limit=2,
                                                  model="standin-keyword-rules", output_root=str(tmp_path)))
    assert all("text2sparql" not in r for r in result.predictions()["scores"])
