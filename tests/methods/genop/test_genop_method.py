"""The ``genop`` method through the runner: a question file's ``query`` field is evaluated with model calls on
the ``oracle`` role, the final answers are scored like every method's, and failures get their categories."""

from __future__ import annotations

import json

import pytest
from genop_helpers import EXAMPLE1, EXAMPLE1_SCRIPT, PREFIX

from sparqlab.data.question import Question
from sparqlab.methods import get_method
from sparqlab.methods.genop.method import GenOpConfig, GenOpMethod
from sparqlab.runs import RunConfig, run
from sparqlab.runs.plan import MethodCannotAnswer

EXAMPLE1_Y = EXAMPLE1.replace("SELECT ?x ?y ?z", "SELECT ?y")
EXAMPLE2 = PREFIX + 'SELECT ?y WHERE { ?x a :City . GENOP("Describe the city ?x" AS ?y) }'
SCRIPT = {**EXAMPLE1_SCRIPT, "Describe the city Paris": ["capital of France", "cultural center"]}


@pytest.fixture()
def script_file(tmp_path):
    path = tmp_path / "script.json"
    path.write_text(json.dumps(SCRIPT), encoding="utf-8")
    return path


def questions() -> list[Question]:
    return [
        Question("cyclic", "Which topic and city support each other for Paris?", gold_answers=["art"],
                 metadata={"query": EXAMPLE1_Y}),
        Question("describe", "Describe Paris", gold_answers=["capital of France", "cultural center"],
                 metadata={"query": EXAMPLE2}),
        Question("missing", "A question without a query", gold_answers=["x"]),
        Question("broken", "A malformed query", gold_answers=["x"],
                 metadata={"query": PREFIX + 'SELECT ?y WHERE { GENOP("about ?q" AS ?y) }'}),
    ]


def test_genop_method_runs_question_files_through_the_runner(tmp_path, example_kg, script_file):
    assert get_method("genop") is GenOpMethod
    config = RunConfig(experiment="genop", output_root=str(tmp_path / "runs"), progress=False, cache="off",
                       model="standin-genop-script", model_options={"script": str(script_file)})
    result = run(GenOpMethod(), questions(), config, kg=example_kg)
    records = {r["id"]: r for r in map(json.loads, (result.run_dir / "predictions.jsonl").read_text().splitlines())}
    assert records["cyclic"]["f1"] == 1.0 and records["describe"]["f1"] == 1.0
    assert records["cyclic"]["extra"]["genop_class"] == "stratified"
    assert records["describe"]["extra"]["genop_class"] == "acyclic"
    assert records["missing"]["error_category"] == "no_query"
    assert records["broken"]["error_category"] == "genop_syntax_error"
    oracle = records["cyclic"]["role_usage"]["oracle"]["calls"]
    assert oracle["propose"] == 8 and oracle["validate"] > 0
    assert records["describe"]["role_usage"]["oracle"]["calls"]["propose"] == 1
    assert records["cyclic"]["kg_calls"]["query"] >= 1           # BGPs go through the counted ctx.query


def test_questions_without_genop_queries_are_refused_before_any_work(tmp_path, example_kg, script_file):
    config = RunConfig(experiment="genop", output_root=str(tmp_path / "runs"), progress=False, cache="off",
                       model="standin-genop-script", model_options={"script": str(script_file)})
    plain = [q for q in questions() if "query" not in q.metadata]
    with pytest.raises(MethodCannotAnswer, match="genop cannot answer these questions: none of the questions has "
                                                 "a 'query' field holding a GenOp query"):
        run(GenOpMethod(), plain, config, kg=example_kg)
    assert not (tmp_path / "runs").exists(), "refused before the run folder is made"


def test_genop_config_is_validated():
    from sparqlab.methods.genop import EvalSettings

    config = GenOpConfig.from_options({"evaluation.k": "3", "evaluation.semantics": "lfp", "aggregation": "all"})
    assert config.evaluation == EvalSettings(semantics="lfp", k=3) and config.aggregation == "all"
    assert config.to_dict()["evaluation"]["condense"] is True  # every evaluation parameter is in the run config
    assert GenOpConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ValueError, match="at least 1"):
        GenOpConfig.from_options({"evaluation.k": "0"})
    with pytest.raises(ValueError, match="did you mean 'semantics'"):
        GenOpConfig.from_options({"evaluation.semantic": "lfp"})
    with pytest.raises(ValueError, match="must be one of"):
        GenOpConfig.from_options({"evaluation.similarity": "cosine"})
    with pytest.raises(ValueError, match="'k'"):
        GenOpConfig.from_options({"k": "3"})  # the flat copies are gone


def test_sparqlab_run_genop_from_the_shell(tmp_path, monkeypatch, script_file, capsys):
    from genop_helpers import EXAMPLES_TTL

    from sparqlab.cli import main

    (tmp_path / "g.ttl").write_text(EXAMPLES_TTL, encoding="utf-8")
    dataset = tmp_path / "questions.jsonl"
    dataset.write_text(json.dumps({"id": "q1", "text": "Describe Paris", "query": EXAMPLE2,
                                   "gold_answers": ["capital of France", "cultural center"]}) + "\n")
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SPARQLAB_GENOP_SCRIPT", str(script_file))
    assert main(["run", "genop", "-d", str(dataset), "--kg", str(tmp_path / "g.ttl"),
                 "-m", "standin-genop-script", "-e", "shell", "-o", "evaluation.k=1"]) == 0
    (record,) = [json.loads(line) for line in next((tmp_path / "runs" / "shell").glob("*/predictions.jsonl"))
                 .read_text().splitlines()]
    assert record["predicted_answers"] == ["capital of France"]     # K = 1 keeps the first proposal
