"""The runner: results folder contents, scoring by executing the final query, error isolation, run identity."""

import asyncio
import json

import pytest
from runs_helpers import EchoChatMethod, LookupMethod, TinyKG, lookup_sparql, tiny_questions

from sparqlab.core.jsonl import read_jsonl
from sparqlab.data.question import Question
from sparqlab.llm import ChatModel, ChatResponse, ModelRequestError, ModelUnavailable
from sparqlab.runs import RunAborted, RunConfig, RunInProgressError, load_predictions, load_runs, run
from sparqlab.runs.gold_answers import GoldQueriesFailed
from sparqlab.runs.store import RunStore

REQUIRED_FIELDS = {"id", "question", "predicted_sparql", "predicted_answers", "gold_answers", "f1", "em", "empty",
                   "error_category", "model_calls", "tokens", "latency_s", "kg_calls", "extra", "scores",
                   "role_usage"}


def config(root, **overrides):
    return RunConfig(**{"experiment": "t", "output_root": str(root), "progress": False, **overrides})


def predictions(run_dir):
    return {r["id"]: r for r in read_jsonl(run_dir / "predictions.jsonl")}


def test_environment_records_the_ids_a_stand_in_drew_as_count_and_digest_beside_their_parameters():
    from sparqlab.core.hashing import id_set_record
    from sparqlab.runs.manifest import describe_model

    class Drawn:  # remembers a seeded share of a split, as GGC's standin-knn does by default
        name = "standin-drawn"

        def describe(self):
            return {"name": self.name, "memory": {"dataset": "d", "split": "train", "generator_share": 0.5,
                                                  "split_seed": 3, "ids": ["q2", "q1", "q5"]}}

    memory = describe_model(Drawn())["memory"]
    assert memory == {"dataset": "d", "split": "train", "generator_share": 0.5, "split_seed": 3,
                      "ids": {"count": 3, "digest": id_set_record(["q1", "q2", "q5"])["digest"]}}
    assert memory["ids"]["digest"] != id_set_record(["q1", "q2"])["digest"]


def test_run_writes_every_file_and_scores_by_executing_the_final_query(root):
    behaviour = {"q1": "wrong", "q2": "malformed", "q3": "update", "q4": "raise"}
    method = LookupMethod(behaviour)
    result = run(method, tiny_questions(8), config(root, concurrency=4), kg=TinyKG(8))

    assert result.run_dir == root / "t" / result.run_id
    assert {p.name for p in result.run_dir.iterdir()} >= {
        "config.json", "environment.json", "manifest.json", "predictions.jsonl", "traces.jsonl", "metrics.json"}
    preds = predictions(result.run_dir)
    assert sorted(preds) == [f"q{i}" for i in range(8)]
    for record in preds.values():
        assert set(record) >= REQUIRED_FIELDS

    ok = preds["q0"]
    assert ok["predicted_answers"] == ["v0"] and ok["gold_answers"] == ["v0"]
    assert (ok["f1"], ok["em"], ok["empty"], ok["error_category"]) == (1.0, True, False, None)
    assert ok["kg_calls"] == {"query": 1} and ok["extra"] == {"variant": "a"}
    # A wrong query executes and is scored against the gold answers, not trusted.
    assert preds["q1"]["predicted_answers"] == ["v2"] and preds["q1"]["f1"] == 0.0
    # A malformed final query and an update are recorded with the KG error's kind, never a crash.
    assert preds["q2"]["error_category"] == "syntax_error" and preds["q2"]["empty"] is True
    assert preds["q2"]["extra"] == {"note": "malformed"}
    assert preds["q3"]["error_category"] == "update_refused" and preds["q3"]["f1"] == 0.0
    # A method exception stays inside its question; the message is in the trace.
    assert preds["q4"]["error_category"] == "method_error" and preds["q4"]["predicted_sparql"] is None
    traces = {r["id"]: r["trace"] for r in read_jsonl(result.run_dir / "traces.jsonl")}
    assert sorted(traces) == sorted(preds)
    failure = [step for step in traces["q4"] if step["kind"] == "method_error"]
    assert failure and "deliberate failure on q4" in failure[0]["data"]["message"]
    assert "RuntimeError" in failure[0]["data"]["traceback"]
    final = [step for step in traces["q0"] if step["kind"] == "final_query"]
    assert final[0]["data"]["answers"] == ["v0"] and final[0]["data"]["rows"] == 1

    metrics = json.loads((result.run_dir / "metrics.json").read_text())
    assert metrics == result.metrics
    assert (metrics["n_questions"], metrics["n_done"], metrics["n_missing"], metrics["complete"]) == (8, 8, 0, True)
    assert metrics["f1"] == pytest.approx(4 / 8) and metrics["em"] == pytest.approx(4 / 8)
    assert metrics["empty_rate_all"] == pytest.approx(3 / 8)
    # SAGA's empty-result rate is over generated queries: q4 (method error) has none
    assert metrics["empty_rate"] == pytest.approx(2 / 7) and metrics["no_query_rate"] == pytest.approx(1 / 8)
    assert metrics["error_categories"] == {"method_error": 1, "none": 5, "syntax_error": 1, "update_refused": 1}
    assert metrics["model"] is None and metrics["model_is_standin"] is None
    assert metrics["kg_calls"] == {"total": 4, "query": 4} and metrics["wall_time_s"] > 0


def test_config_environment_and_manifest_say_how_to_rerun(root):
    result = run(EchoChatMethod(calls=2), tiny_questions(3),
                 config(root, model="standin-echo", model_params={"temperature": 0.0}), kg=TinyKG(3))
    saved = json.loads((result.run_dir / "config.json").read_text())
    assert saved["run_id"] == result.run_id
    assert RunConfig.from_dict(saved["run"]) == result.config
    assert saved["method"] == {"method": "echo-chat", "config": {"calls": 2}, "prompts": {}, "artifacts": {}}
    assert saved["roles"] == {"generator": "standin-echo"}
    assert saved["method_class"].endswith("EchoChatMethod")
    env = json.loads((result.run_dir / "environment.json").read_text())
    assert env["python"].count(".") == 2 and env["packages"]["pyoxigraph"]
    assert set(env["git"]) == {"revision", "dirty"} and env["hostname"]
    assert env["model"]["name"] == "standin-echo" and env["model"]["is_standin"] is True
    assert env["kg"]["identity"] == "tiny-test-kg"
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert manifest["model_is_standin"] is True and manifest["status"] == "complete"
    assert manifest["question_ids"] == ["q0", "q1", "q2"]
    assert result.metrics["model_is_standin"] is True

    record = predictions(result.run_dir)["q1"]
    assert record["model_calls"] == {"generate": 1, "refine": 1}
    assert record["tokens"]["total"] == record["tokens"]["prompt"] + record["tokens"]["completion"] > 0
    assert result.metrics["usage"]["model_calls"] == {"total": 6, "generate": 3, "refine": 3}


def test_same_config_same_run_id_and_execution_knobs_do_not_matter(root):
    questions, kg = tiny_questions(4), TinyKG(4)
    first = run(LookupMethod(), questions, config(root, concurrency=1), kg=kg)
    again = run(LookupMethod(), questions, config(root, concurrency=7, cache="off", progress=True), kg=kg)
    assert again.run_id == first.run_id and again.run_dir == first.run_dir
    assert again.answered == 0 and first.answered == 4
    edited = tiny_questions(4)
    edited[2].metadata["qtype"] = "edited"

    different = {
        "method setting": run(LookupMethod(variant="b"), questions, config(root), kg=kg),
        "limit": run(LookupMethod(), questions, config(root, limit=3), kg=kg),
        "seed": run(LookupMethod(), questions, config(root, seed=1), kg=kg),
        "timeout": run(LookupMethod(), questions, config(root, question_timeout_s=9), kg=kg),
        "questions": run(LookupMethod(), tiny_questions(3), config(root), kg=kg),
        "a question's metadata": run(LookupMethod(), edited, config(root), kg=kg),
        "kg endpoint": run(LookupMethod(), questions, config(root, kg_url="http://elsewhere/sparql"), kg=kg),
        "kg content": run(LookupMethod(), questions, config(root), kg=TinyKG(4, content="tiny-edited")),
    }
    ids = {name: result.run_id for name, result in different.items()}
    assert first.run_id not in ids.values() and len(set(ids.values())) == len(ids), ids


def test_per_question_timeout_is_recorded_and_the_run_goes_on(root):
    method = LookupMethod({"q1": "sleep:30"})
    result = run(method, tiny_questions(4), config(root, question_timeout_s=0.5, concurrency=4), kg=TinyKG(4))
    preds = predictions(result.run_dir)
    # "sleep:30" would take 30 s: the question_timeout category itself shows the 0.5 s timeout stopped it
    assert preds["q1"]["error_category"] == "question_timeout" and preds["q1"]["predicted_sparql"] is None
    assert all(preds[q]["f1"] == 1.0 for q in ("q0", "q2", "q3"))
    trace = next(r["trace"] for r in read_jsonl(result.run_dir / "traces.jsonl") if r["id"] == "q1")
    assert [s["kind"] for s in trace] == ["thought", "question_timeout"]


def test_many_questions_are_in_flight_up_to_the_concurrency(root):
    method = LookupMethod(delay_s=0.2)
    run(method, tiny_questions(12), config(root, concurrency=5), kg=TinyKG(12))
    assert method.max_in_flight == 5


def test_gold_answers_come_from_gold_sparql_when_missing(root):
    kg = TinyKG(4)
    questions = tiny_questions(4, gold="sparql")
    questions.append(Question("q9", "no gold at all", kg="tiny"))
    questions.append(Question("q8", "broken gold", gold_sparql="SELECT ?v WHERE {", kg="tiny"))
    questions.append(Question("q7", "empty gold", gold_sparql='SELECT ?v WHERE { ?s ?p "absent" }', kg="tiny"))
    with pytest.raises(GoldQueriesFailed) as refused:  # named before any question is answered
        run(LookupMethod({"q9": "wrong"}), questions, config(root), kg=kg)
    assert "2 of 6 gold queries fail or return nothing" in str(refused.value)
    assert "  q8: syntax_error: " in str(refused.value) and "  q7: no answer" in str(refused.value)
    assert "--allow-gold-errors" in str(refused.value) and not any(root.rglob("predictions.jsonl"))
    result = run(LookupMethod({"q9": "wrong"}), questions, config(root, allow_gold_errors=True), kg=kg)
    preds = predictions(result.run_dir)
    assert preds["q2"]["gold_answers"] == ["v2"] and preds["q2"]["gold_source"] == "gold_sparql"
    assert preds["q2"]["f1"] == 1.0
    assert preds["q9"]["gold_answers"] is None and preds["q9"]["f1"] is None
    assert preds["q8"]["gold_source"].startswith("error: syntax_error") and preds["q8"]["f1"] is None
    assert result.metrics["n_scored"] == 4 and result.metrics["f1"] == 1.0
    # the broken gold query cannot be judged (gold_error); the question without any gold has nothing to judge
    # (no_gold): the count agrees with the records' error types
    assert result.metrics["n_gold_errors"] == 2 == result.metrics["error_types"]["gold_error"]
    assert preds["q9"]["error_type"] == "no_gold" and result.metrics["error_types"]["no_gold"] == 1


def test_a_model_request_error_is_recorded_but_an_unreachable_model_aborts(root):
    class Failing(ChatModel):
        name = "failing"

        def __init__(self, error):
            self.error = error

        async def acomplete(self, request):
            if lookup_sparql(1) in request.last_user_message:
                raise self.error
            return ChatResponse(request.last_user_message, model=self.name)

    result = run(EchoChatMethod(calls=1), tiny_questions(3),
                 config(root, cache="off"), kg=TinyKG(3), model=Failing(ModelRequestError("prompt too long")))
    assert predictions(result.run_dir)["q1"]["error_category"] == "model_request_error"
    assert result.metrics["error_categories"] == {"model_request_error": 1, "none": 2}

    with pytest.raises(RunAborted, match="endpoint down"):
        run(EchoChatMethod(calls=1), tiny_questions(3), config(root, cache="off", experiment="abort",
                                                                concurrency=1),
            kg=TinyKG(3), model=Failing(ModelUnavailable("endpoint down")))
    folder = next((root / "abort").iterdir())
    assert set(predictions(folder)) == {"q0"}
    assert json.loads((folder / "manifest.json").read_text())["status"] == "incomplete"


def test_redo_errors_answers_those_questions_again(root):
    kg, questions = TinyKG(4), tiny_questions(4)
    first = run(LookupMethod(), questions, config(root), kg=kg)
    lines = (first.run_dir / "predictions.jsonl").read_text().splitlines()
    broken = [json.loads(line) for line in lines]
    broken[0]["error_category"] = "endpoint_error"
    (first.run_dir / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in broken))
    again = run(LookupMethod(), questions, config(root), kg=kg, redo_errors=["endpoint_error"])
    assert again.answered == 1
    preds = list(read_jsonl(again.run_dir / "predictions.jsonl"))
    assert sorted(r["id"] for r in preds) == ["q0", "q1", "q2", "q3"]
    assert all(r["error_category"] is None for r in preds)
    assert len(list(read_jsonl(again.run_dir / "traces.jsonl"))) == 4


def test_a_second_writer_on_the_same_folder_is_refused(root):
    result = run(LookupMethod(), tiny_questions(2), config(root), kg=TinyKG(2))
    with RunStore(result.run_dir) as holder:
        holder.open()
        with pytest.raises(RunInProgressError, match="another process"):
            run(LookupMethod(), tiny_questions(2), config(root), kg=TinyKG(2))


def test_run_works_inside_a_running_event_loop_like_jupyter(root):
    async def notebook_cell():
        return run(LookupMethod(), tiny_questions(3), config(root), kg=TinyKG(3))

    assert asyncio.run(notebook_cell()).metrics["f1"] == 1.0


def test_pandas_loaders(root):
    run(LookupMethod({"q0": "wrong"}), tiny_questions(3), config(root), kg=TinyKG(3))
    run(EchoChatMethod(), tiny_questions(3), config(root, model="standin-echo"), kg=TinyKG(3))
    runs = load_runs("t")
    assert len(runs) == 2 and set(runs["method"]) == {"lookup", "echo-chat"}
    echo = runs[runs["method"] == "echo-chat"].iloc[0]
    assert echo["model"] == "standin-echo [standin]" and bool(echo["model_is_standin"])
    assert runs[runs["method"] == "lookup"].iloc[0]["f1"] == pytest.approx(2 / 3)
    frame = load_predictions(runs[runs["method"] == "lookup"].iloc[0]["run"])
    assert list(frame.columns[:5]) == ["experiment", "run", "model", "model_is_standin", "dataset"]
    assert sorted(frame["id"]) == ["q0", "q1", "q2"] and frame["f1"].sum() == 2.0


def test_invalid_configs_fail_with_clear_messages(root):
    with pytest.raises(ValueError, match="shard_index"):
        RunConfig(shard_index=2, num_shards=2)
    with pytest.raises(ValueError, match="cache must be one of"):
        RunConfig(cache="sometimes")
    with pytest.raises(ValueError, match="needs a model"):
        run(EchoChatMethod(), tiny_questions(2), config(root), kg=TinyKG(2))
    with pytest.raises(ValueError, match="unique"):
        run(LookupMethod(), tiny_questions(2) * 2, config(root), kg=TinyKG(2))
    with pytest.raises(ValueError, match="config.kg is 'movies'"):
        run(LookupMethod(), tiny_questions(2), config(root, kg="movies"), kg=TinyKG(2))


def test_run_from_config_alone_opens_the_dataset_and_the_kg(root, tmp_path):
    """No objects passed: questions come from ``dataset`` (a question file) and the KG from ``kg`` (an RDF file),
    through the data and KG layers' own loaders."""
    from sparqlab.data import write_questions

    write_questions(tmp_path / "questions.jsonl", tiny_questions(5, gold="sparql"))
    (tmp_path / "tiny.nt").write_text("".join(f'<http://example.org/tiny/e{i}> <http://example.org/tiny/value> '
                                              f'"v{i}" .\n' for i in range(5)))
    result = run(LookupMethod({"q4": "malformed"}), None,
                 config(root, dataset=str(tmp_path / "questions.jsonl"), kg=str(tmp_path / "tiny.nt"), limit=4))
    assert result.metrics["n_questions"] == 4 and result.metrics["f1"] == 1.0
    assert result.config.kg == str(tmp_path / "tiny.nt")
    env = json.loads((result.run_dir / "environment.json").read_text())
    assert env["kg"]["backend"] == "EmbeddedKG"
    assert predictions(result.run_dir)["q3"]["gold_source"] == "gold_sparql"
