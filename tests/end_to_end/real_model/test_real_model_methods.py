"""Every method against a real language model: SmolLM2-135M-Instruct served by llama.cpp on 127.0.0.1
(:mod:`support.real_model`), one MCQA movie question each on the movie KG (a dataset with a training split, for
the few-shot examples and DeSQ's memory). A 135M model scores about nothing; what is asserted is what holds
whatever it writes: every question ends in a typed outcome (a query with its error category, or a typed failure
such as a parse failure — never ``method_error``), the tokens are the server's counts (never estimated), the run
is not marked as a stand-in's, and environment.json names the server that answered. Replies are kept short per
call kind (the methods' ``*_max_tokens`` options) so the set stays within the suite's budget. The quickstart
notebook on the real model is tests/notebooks/test_reproduce_real.py's (`sparqlab reproduce --real`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from sparqlab.data import load
from sparqlab.data.question import Question
from sparqlab.eval.errors import CATEGORIES
from sparqlab.methods import make_method
from sparqlab.runs import RunConfig, run

pytestmark = pytest.mark.slow

LIMIT = 1
"""Questions per method: one keeps the set within the suite's budget (prompts of 1,000-2,300 tokens at
~150 tokens/s on one core); ``benchmarks/real_model.py --limit N`` measures more."""

QUESTION_TIMEOUT_S = 120
"""Each question's deadline: a question ends well within the suite's 300 s per test even on a loaded machine
(a question cut there is a typed ``question_timeout``, its calls so far still counted)."""

AGENT_OPTIONS = {"max_actions": 2, "controller_max_tokens": 96, "reparse_max_tokens": 64, "prune_max_tokens": 64,
                 "max_parse_failures": 2}
"""SPINACH's and SAGA's text actions, kept short: two steps of at most 96 tokens each — enough for a controller
reply, its re-parse and an action run on the KG (or two unreadable replies ending the question as a typed parse
failure), which is all the test asserts; each further step costs a prompt of 1,000-2,300 tokens (the measured table
of benchmarks/real_model.py gives the agents four)."""


def real_run(real_model, movies_kg, tmp_path, method: str, questions=None, **options):
    """``method`` over the first :data:`LIMIT` MCQA movie test questions (or ``questions``), against the real
    model, one question at a time (llama-cpp-python computes one request at a time); checked as
    :func:`check_real_outcomes` says."""
    config = RunConfig(experiment=f"real-{method}", kg="movies", model=real_model.name, model_url=real_model.url,
                       cache="off", progress=False, concurrency=1, output_root=str(tmp_path / "runs"),
                       question_timeout_s=QUESTION_TIMEOUT_S)
    if questions is None:
        config = config.replace(dataset="mcqa-movies", split="test", limit=LIMIT)
    result = run(make_method(method, **options), questions, config, kg=movies_kg)
    check_real_outcomes(result, real_model)
    return result


def check_typed_outcomes(metrics: dict) -> None:
    """Every question done, each with a typed outcome, none a crash (a ``question_timeout`` is typed too: on a
    loaded machine an agent's steps can outlast the question's deadline)."""
    assert metrics["n_done"] == metrics["n_questions"] > 0 and metrics["complete"], metrics
    assert "method_error" not in metrics["error_categories"], metrics["error_categories"]
    assert set(metrics["error_types"]) <= set(CATEGORIES), metrics["error_types"]


def check_real_outcomes(result, real_model) -> None:
    """What a run against the real model must show, read from its files as a reader would."""
    metrics = json.loads((result.run_dir / "metrics.json").read_text(encoding="utf-8"))
    check_typed_outcomes(metrics)
    assert metrics["model_is_standin"] is False and metrics["tokens_estimated"] is False
    tokens = metrics["usage"]["tokens"]
    assert tokens["prompt"] > 0 and tokens["completion"] > 0 and metrics["usage"]["model_calls"]["total"] > 0
    for record in result.predictions().to_dict("records"):  # no query: a typed reason
        assert record["predicted_sparql"] or record["error_category"], record
    model = json.loads((result.run_dir / "environment.json").read_text(encoding="utf-8"))["model"]
    assert model["name"] == real_model.name and model["base_url"] == real_model.url
    assert model["is_standin"] is False


def test_direct_few_shot(real_model, movies_kg, tmp_path):
    """Zero-shot direct on the real model is the quickstart's (tests/notebooks/test_reproduce_real.py, the same
    checks on its runs) and the real-model table's: here the worked examples go into the prompt."""
    examples = load("mcqa-movies", "train")[:3]
    result = real_run(real_model, movies_kg, tmp_path, "direct", few_shot_ids=tuple(q.id for q in examples),
                      generate_max_tokens=64, reparse_max_tokens=64)
    shown = (result.run_dir / "traces.jsonl").read_text(encoding="utf-8")
    assert all(json.dumps(q.text)[1:-1] in shown for q in examples)  # the worked examples were asked with
    assert result.metrics["usage"]["model_calls"]["generate"] == LIMIT


@pytest.mark.parametrize("method", ["spinach", "saga"])
def test_spinach_and_saga_with_text_actions(method, real_model, movies_kg, tmp_path):
    result = real_run(real_model, movies_kg, tmp_path, method, action_format="text", **AGENT_OPTIONS)
    calls = result.metrics["usage"]["model_calls"]
    assert calls.get("controller", 0) >= LIMIT, calls  # every question asked the controller at least once


def test_ggc_calls_the_real_model_as_generator_and_corrector(real_model, movies_kg, tmp_path):
    result = real_run(real_model, movies_kg, tmp_path, "ggc", mode="all", generate_max_tokens=64,
                      correct_max_tokens=64)
    roles = result.metrics["role_usage"]
    assert roles["generator"]["calls"]["total"] >= LIMIT and roles["corrector"]["calls"]["total"] >= LIMIT, roles


def test_desq_decomposes_and_maps_with_the_real_model(real_model, movies_kg, tmp_path):
    result = real_run(real_model, movies_kg, tmp_path, "desq", train_limit=20, memory_limit=100,
                      embedder="hashing", shots=1, decompose_max_tokens=96, map_max_tokens=96)
    assert result.metrics["usage"]["model_calls"].get("decompose", 0) >= LIMIT


GENOP_QUERY = """\
SELECT ?film ?genre ?related WHERE {
  ?director rdfs:label "Ridley Scott" .
  ?film rdfs:label "Alien" ; mrel:directed_by ?director ; mrel:has_genre ?genre .
  GENOP("Name a film genre that is closely related to ?genre" AS ?related, "gpt-oss-120b") .
  { ?related a mclass:Genre }
}"""
"""The movie demo's generative query (:data:`sparqlab.methods.genop.examples.MOVIE_QUERY`) for one of Ridley
Scott's films: one genre to propose for, not the sixteen films' (a model call per genre)."""


def test_genop_proposes_with_the_real_model(real_model, movies_kg, tmp_path):
    questions = [Question(f"genop-{i}", "related genres of Ridley Scott's Alien", metadata={"query": GENOP_QUERY})
                 for i in range(LIMIT)]
    result = real_run(real_model, movies_kg, tmp_path, "genop", questions, evaluation={"k": 1},
                      propose_max_tokens=24, validate_max_tokens=8)
    assert result.metrics["usage"]["model_calls"].get("propose", 0) >= 1


def test_external_against_sparqlab_serve_backed_by_the_real_model(real_model, movies_kg, tmp_path):
    iri = "urn:sparqlab:test:movies"
    env = {**os.environ, "SPARQLAB_RUNS": str(tmp_path / "served")}
    served = subprocess.Popen(
        [sys.executable, "-m", "sparqlab", "serve", "direct", "--kg", "movies", "--dataset-iri", iri,
         "--port", "0", "-m", real_model.name, "--model-url", real_model.url, "--concurrency", "1",
         "--cache", "off", "-o", "generate_max_tokens=64", "-o", "reparse_max_tokens=64"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = served.stdout.readline()
        assert line.startswith("serving direct at "), served.stderr.read() if served.poll() is not None else line
        config = RunConfig(experiment="real-external", kg="movies", dataset="mcqa-movies", split="test",
                           limit=LIMIT, progress=False, output_root=str(tmp_path / "runs"))
        result = run(make_method("external", endpoint=line.split()[-1], dataset_iri=iri, timeout_s=120, retries=0),
                     config=config, kg=movies_kg)
    finally:
        served.terminate()
        served.wait(timeout=30)
        served.stdout.close()
        served.stderr.close()
    check_typed_outcomes(result.metrics)
    records = [json.loads(line) for path in (tmp_path / "served").rglob("predictions.jsonl")
               for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(records) == LIMIT and not any(r["tokens_estimated"] for r in records)  # the served run: real usage
    assert all(r["tokens"]["prompt"] > 0 for r in records)
