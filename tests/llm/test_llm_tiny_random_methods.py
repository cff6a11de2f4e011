"""Garbage in, typed errors out: every method run end to end on 20 questions with
``standin-tiny-random`` (a tiny random decoder through the ``local:`` backend) gives every question a prediction
line with an answer or a typed error, never a crash (``method_error``), and the run resumes."""

from __future__ import annotations

import json

import pytest

from sparqlab.data import load
from sparqlab.data.question import Question
from sparqlab.methods import make_method
from sparqlab.methods.genop.examples import MOVIE_QUERY
from sparqlab.runs import RunConfig, run
from sparqlab.train.tiny import TINY_RANDOM

N = 20
OPTIONS = {
    "direct": {},
    "ggc": {"mode": "all"},
    "desq": {"train_limit": 20, "memory_limit": 100, "embedder": "hashing", "shots": 1},
    "spinach": {"max_parse_failures": 1},
    "saga": {"max_parse_failures": 1},
    "genop": {},
}



def _questions(method: str) -> list[Question]:
    if method == "genop":
        return [Question(f"g{i}", f"generative query {i}", metadata={"query": MOVIE_QUERY}) for i in range(N)]
    return load("mcqa-movies", "test")[:N]


@pytest.mark.parametrize("method", list(OPTIONS))
def test_every_question_gets_an_answer_or_a_typed_error_and_the_run_resumes(method, movies_kg, tmp_path):
    config = RunConfig(experiment="tiny-random", kg="movies", model=TINY_RANDOM, cache="off", progress=False,
                       model_params={"temperature": 0.0, "max_tokens": 8}, output_root=str(tmp_path / "runs"))
    questions = _questions(method)
    result = run(make_method(method, **OPTIONS[method]), questions, config, kg=movies_kg)
    frame = result.predictions()
    assert sorted(frame["id"]) == sorted(q.id for q in questions)
    assert "method_error" not in set(frame["error_category"].dropna())
    no_query = frame[frame["predicted_sparql"].isna()]
    assert no_query["error_category"].notna().all(), no_query[["id", "error_category"]]
    assert result.metrics["model_is_standin"] is True

    # resume: drop the last 4 lines as an interrupted run would leave them, and run again
    path = result.run_dir / "predictions.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines[:16]) + "\n", encoding="utf-8")
    again = run(make_method(method, **OPTIONS[method]), questions, config, kg=movies_kg)
    records = [json.loads(line) for line in (again.run_dir / "predictions.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in records) == sorted(q.id for q in questions)
    assert [json.loads(line) for line in lines[:16]] == records[:16]
    assert again.metrics["n_done"] == N and again.metrics["complete"]
