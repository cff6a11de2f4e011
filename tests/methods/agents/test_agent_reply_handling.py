"""How the ReAct controller treats real models' replies (issues 18 items 6–8 and 20): one action per reply, an
action followed by trailing prose or a fenced block read without the re-parse call (``reparse="on_failure"``; by
default every reply is re-parsed anyway, appendix F.2), sampling precedence, and a
reasoning model whose reasoning eats the answer-type budget counted as ``reasoning_exhausted``."""

from __future__ import annotations

import json

import pytest
from test_controller import QUESTION, Scripted

from sparqlab.llm import ChatRequest, ContextOverflow, OpenAIModel
from sparqlab.llm.standins import ReasoningStandin
from sparqlab.methods import make_method
from sparqlab.runs import RunConfig, load_traces, run
from sparqlab.serving.model_server import Limits, serve_in_background
from support.wikidata_fixtures import open_wikidata

QUERY = "SELECT ?c WHERE { wd:Q28218 wdt:P17 ?c }"


@pytest.fixture
def agent_run(tmp_path, monkeypatch, wikidata_ttl):
    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    kg = open_wikidata(wikidata_ttl)
    calls = iter(range(100))

    def go(method, model, model_params=None, **options):
        config = RunConfig(experiment=f"r{next(calls)}", model=model.name, cache="off", progress=False,
                           output_root=str(tmp_path / "runs"), model_params=model_params or {})
        result = run(make_method(method, **options), [QUESTION], config, kg=kg, model=model)
        return result, result.predictions().iloc[0], load_traces(result.run_dir)[QUESTION.id]

    yield go
    kg.close()


def test_two_actions_in_one_reply_run_only_the_first_and_trace_the_rest(agent_run):
    model = Scripted(["Thought: t\nAction: search(Jackson)\nAction: execute(SELECT 1 {})",
                     "Thought: done\nAction: stop()"])
    _, row, trace = agent_run("spinach", model, reparse="on_failure")  # the reply's own reading, no re-parse
    actions = [(e.data["name"], e.data["argument"]) for e in trace if e.kind == "action"]
    assert actions == [("search", "Jackson"), ("stop", "")]
    assert [e.data["actions"] for e in trace if e.kind == "dropped_actions"] == [["execute(SELECT 1 {})"]]
    assert row["extra.dropped_actions"] == 1 and row["model_calls"] == {"controller": 2}


def test_fenced_block_after_execute_and_trailing_prose_need_no_reparse(agent_run):
    model = Scripted([f"Thought: run it\nAction: execute\n```sparql\n{QUERY}\n```\nThis should give the country.",
                     "Thought: done\nAction: stop() — the query answered it."])
    _, row, _ = agent_run("spinach", model, reparse="on_failure")
    assert row["model_calls"] == {"controller": 2}  # no re-parse call needed to read them
    assert row["predicted_sparql"] == QUERY and row["f1"] == 1.0


def test_explicit_run_setting_wins_over_the_method_default_and_is_in_config_json(agent_run):
    model = Scripted(["Thought: x\nAction: stop()"])
    result, _, _ = agent_run("spinach", model, model_params={"temperature": 0.5}, controller_max_tokens=321)
    request = model.requests[0]
    assert (request.temperature, request.top_p, request.max_tokens) == (0.5, 1.0, 321)
    sampling = json.loads((result.run_dir / "config.json").read_text())["sampling"]
    assert sampling["explicit"]["controller"]["temperature"] == 0.5
    assert sampling["method_defaults"]["controller"]["temperature"] == 0.0
    assert sampling["method_defaults"]["reparse"] == {"temperature": 0.0, "max_tokens": 400}


def test_method_default_applies_when_nothing_explicit_is_set(agent_run):
    model = Scripted(["Thought: x\nAction: stop()"])
    agent_run("spinach", model, sampling="appendix_f2", controller_reasoning_effort="low")
    assert model.requests[0].temperature == 1.0
    assert dict(model.requests[0].extra) == {"reasoning_effort": "low"}


def test_reasoning_that_uses_up_the_answer_type_budget_is_counted_not_read_as_unknown(agent_run):
    inner = Scripted(["Thought: done\nAction: stop()"])
    model = ReasoningStandin(inner, reasoning_tokens=150)  # answer_type_max_tokens defaults to 100 (appendix F.1)
    result, row, trace = agent_run("saga", model)
    assert row["extra.answer_type"] is None and row["extra.answer_type_failure"] == "reasoning_exhausted"
    metrics = json.loads((result.run_dir / "metrics.json").read_text())
    assert metrics["reply_outcomes"]["answer_type"] == {"reasoning_exhausted": 1}
    assert metrics["reply_outcomes"]["total"] == {"reasoning_exhausted": 1}
    call = next(e for e in trace if e.kind == "model_call" and e.data["kind"] == "answer_type")
    assert call.data["finish_reason"] == "length" and call.data["outcome"] == "reasoning_exhausted"
    # with the budget raised, the same model predicts the type
    _, row, _ = agent_run("saga", ReasoningStandin(inner, reasoning_tokens=150), answer_type_max_tokens=400)
    assert row["extra.answer_type"] == "country|http://www.wikidata.org/entity/Q6256"
    assert row["extra.answer_type_failure"] is None


def test_a_controller_reply_cut_by_max_tokens_ends_as_truncated_reply(agent_run):
    model = Scripted(["Thought: I will run a long query now\nAction: execute(SELECT ?c WHERE { wd:Q28218 wdt:P17 ?c . "
                     "?c rdfs:label ?label . FILTER(LANG(?label) = 'en') })"])
    _, row, trace = agent_run("spinach", model, controller_max_tokens=12, max_parse_failures=2)
    assert row["error_category"] == "truncated_reply" and row["extra.stopped_by"] == "parse_failure"
    failures = [e.data for e in trace if e.kind == "parse_failure"]
    assert [f["failure"] for f in failures] == ["truncated_reply"] * 2
    assert all(f["finish_reason"] == "length" for f in failures)


class Overflowing(Scripted):
    """Refuses (like vLLM's context-length 400) a controller prompt that shows more than one earlier step."""

    name = "standin-overflowing-test"

    async def acomplete(self, request: ChatRequest):
        if request.last_user_message.count("\nObservation:") > 1:
            raise ContextOverflow("This model's maximum context length is 100 tokens.")
        return await super().acomplete(request)


def test_context_overflow_trims_the_window_and_retries_once(agent_run):
    model = Overflowing([f"Thought: {i}\nAction: search(Jackson {i})" for i in range(3)]
                        + ["Thought: done\nAction: stop()"])
    result, row, trace = agent_run("spinach", model)
    assert row["extra.window_trimmed"] == 1 and row["extra.stopped_by"] == "stop"
    assert [e.kind for e in trace].count("context_overflow") == 1
    assert row["reply_outcomes"] == {"controller": {"context_overflow": 1}}
    last_controller = [r for r in model.requests if "Agent output:" not in r.last_user_message][-1]
    assert "(2 earlier steps not shown)" in last_controller.last_user_message


def test_context_overflow_against_the_server_ends_the_question_with_a_typed_error(agent_run):
    import sparqlab.methods.agents  # noqa: F401  (registers standin-agent)

    with serve_in_background("standin-agent", limits=Limits(max_model_len=300)) as url:
        model = OpenAIModel("standin-agent", base_url=url, max_retries=0)
        result, row, trace = agent_run("spinach", model)
    assert row["error_category"] == "context_overflow" and row["predicted_sparql"] is None
    metrics = json.loads((result.run_dir / "metrics.json").read_text())
    assert metrics["error_categories"] == {"context_overflow": 1}
    assert metrics["reply_outcomes"]["controller"] == {"context_overflow": 1}
    assert [e.data["kind"] for e in trace if e.kind == "model_error"] == ["context_overflow"]
