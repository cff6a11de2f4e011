"""The platform through the runner: model roles, counted tools, typed traces, the final-query and score hooks,
prepare with content-keyed artifacts, gold isolation, few-shot overlap refusal, run identity, the CLI."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from sparqlab.cli import main
from sparqlab.core.jsonl import read_jsonl
from sparqlab.data import load
from sparqlab.data.question import PUBLIC_METADATA, Question
from sparqlab.methods import DirectSparql
from sparqlab.methods.direct.method import PROMPTS
from sparqlab.platform import Method, MethodConfig, MethodOutput, PromptTemplate
from sparqlab.runs import RunConfig, load_predictions, load_traces, run
from sparqlab.runs.config import RoleSpec, identity
from support.platform_helpers import EX, FilmKG, GoldSpy, OracleExecution, TwoRoleMethod, film_questions, films_by


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    return tmp_path


def config(tmp_path, **overrides):
    base = dict(experiment="platform", output_root=str(tmp_path / "runs"), progress=False,
                cache_path=str(tmp_path / "responses.sqlite"))
    return RunConfig(**{**base, **overrides})


def roles_config(tmp_path, **overrides):
    return config(tmp_path, model="standin-echo",
                  model_roles={"corrector": {"model": "standin-latency", "options": {"delay_ms": 0},
                                             "params": {"temperature": 0.5}}}, **overrides)


def test_two_roles_and_two_tools_through_the_runner(tmp_path):
    result = run(TwoRoleMethod(), film_questions(), roles_config(tmp_path), kg=FilmKG())
    records = {r["id"]: r for r in read_jsonl(result.run_dir / "predictions.jsonl")}
    scott = records["q-scott"]
    assert scott["f1"] == 1.0 and scott["error_category"] is None
    assert scott["role_usage"]["generator"]["calls"] == {"generate": 1}
    assert scott["role_usage"]["corrector"]["calls"] == {"correct": 1}
    assert scott["model_calls"] == {"correct": 1, "generate": 1}
    assert scott["kg_calls"] == {"lookup": 1, "query": 1}
    assert scott["scores"] == {"predicted_count": 2, "gold_count": 2, "exact": True}

    traces = {r["id"]: r["trace"] for r in read_jsonl(result.run_dir / "traces.jsonl")}
    events = traces["q-scott"]
    assert all(set(e) == {"kind", "step", "role", "t", "data"} for e in events)
    assert [(e["kind"], e["step"], e["role"]) for e in events if e["kind"] == "model_call"] == [
        ("model_call", 0, "generator"), ("model_call", 2, "corrector")]
    corrector_call = next(e for e in events if e["role"] == "corrector")
    assert corrector_call["data"]["model"] == "standin-latency" and corrector_call["data"]["kind"] == "correct"
    assert [e["kind"] for e in events] == ["model_call", "thought", "tool", "observation", "action", "query",
                                           "observation", "model_call", "final_query"]

    metrics = json.loads((result.run_dir / "metrics.json").read_text())
    assert metrics["kg_calls"] == {"total": 4, "lookup": 2, "query": 2}
    assert metrics["role_usage"]["corrector"]["calls"] == {"total": 2, "correct": 2}
    assert metrics["role_usage"]["generator"]["calls"] == {"total": 2, "generate": 2}
    assert metrics["method_scores"]["exact"] == 1.0 and metrics["f1"] == 1.0
    saved = json.loads((result.run_dir / "config.json").read_text())
    assert saved["roles"] == {"generator": "standin-echo", "corrector": "standin-latency"}
    assert saved["method"]["prompts"] == {"draft": PROMPTS_DIGEST("draft"), "fix": PROMPTS_DIGEST("fix")}

    frame = load_predictions(result.run_dir)
    assert frame.set_index("id").loc["q-scott", "extra.note"] == "n"
    assert frame.set_index("id").loc["q-mann", "scores.gold_count"] == 1
    assert "extra.structured" not in frame.columns  # only scalars are flattened
    typed = load_traces(result.run_dir)["q-mann"]
    assert typed[0].kind == "model_call" and typed[0].role == "generator" and typed[-1].kind == "final_query"


def PROMPTS_DIGEST(name):  # noqa: N802 (reads like the table it looks into)
    from support.platform_helpers import PROMPTS as TABLE

    return TABLE[name].digest


def test_roles_and_their_endpoints_enter_the_run_id(tmp_path):
    questions, kg = film_questions(), FilmKG()
    first = run(TwoRoleMethod(), questions, roles_config(tmp_path), kg=kg)
    same = config(tmp_path, model="standin-echo", concurrency=3, model_roles={"corrector": {
        "model": "standin-latency", "options": {"delay_ms": 0}, "params": {"temperature": 0.5}, "url": None}})
    assert run(TwoRoleMethod(), questions, same, kg=kg).run_id == first.run_id
    served = roles_config(tmp_path).replace(model_roles={"corrector": RoleSpec(
        "standin-latency", "http://127.0.0.1:9/v1", options={"delay_ms": 0}, params={"temperature": 0.5})})
    assert identity(served, {}, "") != identity(roles_config(tmp_path), {}, ""), "an HTTP-served role is another run"
    other_params = config(tmp_path, model="standin-echo", model_roles={"corrector": {
        "model": "standin-latency", "options": {"delay_ms": 0}, "params": {"temperature": 0.9}}})
    assert run(TwoRoleMethod(), questions, other_params, kg=kg).run_id != first.run_id
    ablated = run(TwoRoleMethod(tools=("lookup", "execute", "stop")), questions, roles_config(tmp_path), kg=kg)
    assert ablated.run_id != first.run_id
    with pytest.raises(ValueError, match="model_roles names critic, which method 'test-two-roles' does not have"):
        run(TwoRoleMethod(), questions, config(tmp_path, model="standin-echo",
                                               model_roles={"critic": {"model": "standin-echo"}}), kg=kg)
    with pytest.raises(ValueError, match="unknown option 'name' .*for RoleSpec"):
        RunConfig(model_roles={"corrector": {"name": "x"}})


def test_a_method_executing_its_final_query_with_counted_model_calls(tmp_path):
    result = run(OracleExecution(calls=3), film_questions(),
                 config(tmp_path, model_roles={"oracle": {"model": "standin-echo"}}), kg=FilmKG())
    records = {r["id"]: r for r in read_jsonl(result.run_dir / "predictions.jsonl")}
    assert records["q-mann"]["predicted_answers"] == [f"{EX}heat"] and records["q-mann"]["f1"] == 1.0
    assert records["q-mann"]["model_calls"] == {"oracle_eval": 3}
    assert records["q-mann"]["role_usage"] == {"oracle": {"calls": {"oracle_eval": 3}, "tokens": {
        "prompt": records["q-mann"]["tokens"]["prompt"], "completion": records["q-mann"]["tokens"]["completion"],
        "total": records["q-mann"]["tokens"]["total"],
        "prompt_recomputed": records["q-mann"]["tokens"]["prompt_recomputed"]}}}
    assert result.metrics["usage"]["model_calls"] == {"total": 6, "oracle_eval": 6}
    kinds = [e.kind for e in load_traces(result.run_dir)["q-scott"]]
    assert kinds == ["model_call"] * 3 + ["oracle", "final_query"]
    assert result.metrics["model"] is None and result.metrics["model_is_standin"] is True


class BrokenOracle(OracleExecution):
    name = "test-broken-oracle"

    async def execute_final(self, output, ctx):
        from sparqlab.kg.errors import QueryTimeout

        raise QueryTimeout("the oracle's evaluation ran out of time")


def test_question_timeout_and_final_query_timeout_are_different_categories(tmp_path):
    result = run(BrokenOracle(), film_questions()[:1], config(tmp_path, model_roles={"oracle": {"model": "standin-echo"}}),
                 kg=FilmKG())
    record = next(iter(read_jsonl(result.run_dir / "predictions.jsonl")))
    assert record["error_category"] == "final_query_timeout"


# -- prepare --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class IndexConfig(MethodConfig):
    """- ``size``: what the artifact holds."""

    size: int = 3


class IndexBuilder(Method):
    """Builds an artifact in ``prepare`` (with a model call and KG reads), reused by the next run."""

    name = "test-index-builder"
    config_class = IndexConfig
    builds = 0

    async def prepare(self, ctx):
        folder, built = ctx.artifact_dir("film-index", {"size": self.config.size, "kg": ctx.kg.identity})
        if not built:
            type(self).builds += 1
            await ctx.chat([{"role": "user", "content": "summarise the KG"}], kind="index")
            films = ctx.kg.query(f"SELECT ?f WHERE {{ ?f a <{EX}Film> }}")
            (folder / "index.json").write_text(json.dumps(sorted(t.value for t in films.column("f"))))
        self.index = json.loads((folder / "index.json").read_text())
        self.digest = str(len(self.index))

    def artifacts(self):
        return {"film-index": self.digest}

    async def answer(self, question, ctx):
        return MethodOutput(films_by("scott" if "Scott" in question.text else "mann"))


def test_prepare_runs_once_reports_its_cost_apart_and_reuses_its_artifact(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    first = run(IndexBuilder(), film_questions(), config(tmp_path, model="standin-echo"), kg=FilmKG())
    prepare = first.metrics["prepare"]
    assert prepare["model_calls"] == {"total": 1, "index": 1} and prepare["artifacts"] == {"film-index": "3"}
    assert first.metrics["usage"]["model_calls"] == {"total": 0}, "prepare cost stays out of per-question cost"
    second = run(IndexBuilder(), film_questions(), config(tmp_path, model="standin-echo", experiment="again"),
                 kg=FilmKG())
    assert IndexBuilder.builds == 1 and second.metrics["prepare"]["model_calls"] == {"total": 0}
    assert second.run_id == first.run_id
    assert (tmp_path / "cache" / "artifacts").is_dir()


# -- gold isolation -------------------------------------------------------------------------------------------

GOLD_FIELDS = ("relation_path", "qtype", "hops", "topic_class", "template_id", "topic_role", "constraint_role",
               "answer_role", "gold_result", "info", "grasp_sparql")


def test_methods_never_see_gold_but_scoring_does(tmp_path):
    metaqa = load("metaqa-2hop", limit=2)
    mcqa = [dataclasses.replace(q, id=f"mcqa-{q.id}") for q in load("mcqa-movies", limit=2)]
    assert "relation_path" in metaqa[0].metadata and "template_id" in mcqa[0].metadata
    derived = Question("qald-like", "Who wrote Heat?", gold_sparql="SELECT ?x {}", gold_answers=["x"],
                       metadata={"gold_result": {"head": {}}, "keywords": "wrote, Heat", "answertype": "resource",
                                 "info": {"results": 1}, "grasp_sparql": "SELECT 1 {}"})
    spy = GoldSpy()
    run(spy, [*metaqa, *mcqa, derived], config(tmp_path), kg=FilmKG())
    assert len(spy.seen.questions) == 10
    for seen in spy.seen.questions:
        assert seen.gold_sparql is None and seen.gold_answers is None
        assert set(seen.metadata) <= PUBLIC_METADATA
        assert not set(seen.metadata) & set(GOLD_FIELDS)
    assert spy.seen.questions[-1].metadata == {"keywords": "wrote, Heat"}
    assert spy.seen.questions[0].topic_entities == metaqa[0].topic_entities  # as the benchmark marks them
    assert {q.id for q in spy.seen.scored} == {q.id for q in [*metaqa, *mcqa, derived]}
    assert all(q.gold_answers is not None for q in spy.seen.scored), "score() gets the full question"


def test_training_questions_from_the_scored_split_are_refused(tmp_path):
    class Trainer(GoldSpy):
        name = "test-trainer"

        async def prepare(self, ctx):
            ctx.train_questions("metaqa-1hop", "test")

    with pytest.raises(ValueError, match="another split than the scored one"):
        run(Trainer(), config=config(tmp_path, dataset="metaqa-1hop", split="test", limit=2), kg=FilmKG())


def test_few_shot_examples_overlapping_the_scored_questions_are_refused(tmp_path):
    questions = film_questions()
    with pytest.raises(ValueError, match=r"few-shot or training examples that are among the scored questions "
                                         r"\(ids q-scott; texts of q-scott\); take examples from another split"):
        run(DirectSparql(examples=[questions[0]]), questions, config(tmp_path, model="standin-echo"), kg=FilmKG())
    same_text = Question("train-9", questions[1].text.upper(), gold_sparql=films_by("mann"))
    with pytest.raises(ValueError, match=r"texts of q-mann"):
        run(DirectSparql(examples=[same_text]), questions, config(tmp_path, model="standin-echo"), kg=FilmKG())
    elsewhere = Question("train-1", "Which films did [Someone] direct?", gold_sparql=films_by("mann"))
    assert run(DirectSparql(examples=[elsewhere]), questions, config(tmp_path, model="standin-echo"),
               kg=FilmKG()).metrics["n_done"] == 2


# -- DirectSparql identity and the CLI ------------------------------------------------------------------------

def test_direct_run_id_changes_with_its_system_prompt_and_kg_notes(tmp_path, monkeypatch):
    questions, kg = film_questions(), FilmKG()
    first = run(DirectSparql(), questions, config(tmp_path, model="standin-echo"), kg=kg)
    assert run(DirectSparql(), questions, config(tmp_path, model="standin-echo"), kg=kg).run_id == first.run_id
    edited = {**PROMPTS, "system": PromptTemplate("system", PROMPTS["system"].text + "\n- Be brief.")}
    monkeypatch.setattr(DirectSparql, "prompts", edited)
    monkeypatch.setattr("sparqlab.methods.direct.method.PROMPTS", edited)
    changed = run(DirectSparql(), questions, config(tmp_path, model="standin-echo"), kg=kg)
    assert changed.run_id != first.run_id
    saved = json.loads((changed.run_dir / "config.json").read_text())["method"]
    assert saved["prompts"]["system"] == edited["system"].digest and "kg_notes" in saved["artifacts"]
    monkeypatch.undo()
    notes_changed = FilmKG()
    notes_changed.profile = dataclasses.replace(kg.profile, prompt_notes="Other notes.")
    assert run(DirectSparql(), questions, config(tmp_path, model="standin-echo"),
               kg=notes_changed).run_id != first.run_id


def test_cli_validates_options_and_takes_model_roles(tmp_path, capsys):
    base = ["run", "direct", "-d", "metaqa-1hop", "--limit", "2", "-m", "standin-keyword-rules", "-e", "cli"]
    assert main([*base, "-o", "reparse_atempts=2"]) == 1
    err = capsys.readouterr().err
    assert "'reparse_atempts' (did you mean 'reparse_attempts'?)" in err and "few_shot_ids" in err
    assert main([*base, "-o", "reparse_attempts=two"]) == 1
    assert "reparse_attempts must be int" in capsys.readouterr().err
    assert main([*base, "-o", "reparse_attempts=0", "--model-roles", "generator=standin-echo@http://127.0.0.1:9/v1",
                 "--model-roles", "generator=standin-echo"]) == 1
    assert "given twice" in capsys.readouterr().err
    assert main([*base, "-o", "reparse_attempts=0", "--model-roles", "generator=standin-echo"]) == 0
    folder = capsys.readouterr().out.splitlines()[0]
    saved = json.loads((Path(folder) / "config.json").read_text())
    assert saved["roles"] == {"generator": "standin-echo"}
    assert RunConfig.from_saved(saved).model_roles == {"generator": RoleSpec("standin-echo")}
    assert saved["method"]["config"]["reparse_attempts"] == 0
    assert main(["methods", "list"]) == 0
    listing = capsys.readouterr().out
    assert "direct\n  roles:   generator\n  options: few_shot_dataset=None" in listing


def test_model_role_values_split_name_and_endpoint():
    roles = RunConfig(model_roles={"corrector": "meta-llama/Llama-3.1-70B@http://gpu2:8000/v1",
                                   "oracle": "user@host-model"}).model_roles
    assert roles == {"corrector": RoleSpec("meta-llama/Llama-3.1-70B", "http://gpu2:8000/v1"),
                     "oracle": RoleSpec("user@host-model")}
    with pytest.raises(SystemExit):  # argparse refuses a value that is not NAME=VALUE
        main(["run", "direct", "-d", "metaqa-1hop", "--model-roles", "corrector"])


def test_an_artifact_being_built_is_locked_and_only_a_finished_build_counts(tmp_path, monkeypatch):
    import threading

    from sparqlab.platform import PrepareContext

    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    failed = PrepareContext(FilmKG())
    folder, built = failed.artifact_dir("index", {"v": 1})
    assert not built
    failed.finish(succeeded=False)
    first = PrepareContext(FilmKG())
    assert first.artifact_dir("index", {"v": 1}) == (folder, False), "a failed build is redone"
    seen = []
    other = threading.Thread(target=lambda: seen.append(PrepareContext(FilmKG()).artifact_dir("index", {"v": 1})))
    other.start()
    other.join(0.3)
    assert seen == [], "a second process waits while the first builds"
    first.finish(succeeded=True)
    other.join()
    assert seen == [(folder, True)]
    assert PrepareContext(FilmKG()).artifact_dir("index", {"v": 2})[0] != folder


def test_a_model_call_in_prepare_is_bounded_like_one_in_a_question(tmp_path, monkeypatch):
    import time

    from sparqlab.llm.errors import ModelOverloaded
    from sparqlab.llm.openai_backend import OpenAIModel
    from support.hostile_http import hostile_server, http_reply

    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    reply = http_reply(json.dumps({"choices": [{"message": {"role": "assistant", "content": "ok"}}]}).encode())
    with hostile_server(reply, drip_from=len(reply) - 30, interval_s=0.2) as url:  # ~6 s whole; reads 0.2 s
        model = OpenAIModel("m", base_url=f"{url}/v1", timeout_s=1.0, max_retries=0)
        start = time.monotonic()
        with pytest.raises(Exception, match="did not answer within 1 s") as stopped:
            run(IndexBuilder(size=4), film_questions(), config(tmp_path, model="m", cache="off"), kg=FilmKG(),
                model=model)
    assert time.monotonic() - start < 3.0 and IndexBuilder.builds >= 1
    assert any(isinstance(error, ModelOverloaded) for error in (stopped.value, stopped.value.__cause__))
