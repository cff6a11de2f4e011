"""The agents' ``action_format=tools``: the actions offered as native functions, a tool-calling stand-in served
over HTTP by the project's server, the same steps and answers as the paper's text format, replay from the cache
with zero calls, and malformed function calls on the same failure path as unreadable text."""

from __future__ import annotations

import json

import pytest

from sparqlab.llm.cache import CachedModel
from sparqlab.llm.standins import create_standin
from sparqlab.methods import make_method
from sparqlab.methods.agents.actions import read_tool_actions
from sparqlab.runs import RunConfig, load_traces, run
from sparqlab.serving.model_server import serve_in_background
from support.movie_questions import movie_questions

PARAMETERS = {"search": "text", "lookup": "entity", "examples": "property", "execute": "sparql", "stop": None}
STEP_EVENTS = ("thought", "action", "observation")


def call(name: str, arguments: str) -> dict:
    return {"id": "c", "type": "function", "function": {"name": name, "arguments": arguments}}


@pytest.mark.parametrize("arguments, expected", [
    ('{"sparql": "SELECT ?x WHERE { ?x ?p ?o }"}', ("execute", "SELECT ?x WHERE { ?x ?p ?o }")),
    ('{"query": "SELECT ?x WHERE { ?x ?p ?o }"}', ("execute", "SELECT ?x WHERE { ?x ?p ?o }")),  # its only value
    ('{"sparql": "SELECT', None),  # cut JSON
    ('["SELECT ?x"]', None),  # not an object
    ('{"sparql": {"nested": 1}}', None),  # not a scalar
    ('{"sparql": "A", "limit": 3, "x": 1}', ("execute", "A")),
    ('{"a": 1, "b": 2}', None),  # neither the argument's name nor one value
    ('__import__("os").system("true")', None),  # read as JSON, never evaluated
])
def test_function_arguments_are_read_as_json_never_evaluated(arguments, expected):
    reading = read_tool_actions("I run it.", [call("execute", arguments)], PARAMETERS)
    found = None if reading.action is None else (reading.action.name, reading.action.argument)
    assert found == expected


def test_unknown_functions_and_later_calls():
    assert read_tool_actions("", [call("rm_rf", "{}")], PARAMETERS).action is None
    reading = read_tool_actions("Done.", [call("stop", ""), call("execute_sparql", '{"sparql": "ASK {}"}')],
                                PARAMETERS)
    assert (reading.action.name, reading.action.argument, reading.action.thought) == ("stop", "", "Done.")
    assert reading.dropped == ('execute_sparql({"sparql": "ASK {}"})',)


@pytest.mark.slow  # three runs of six questions (about 4 s on an idle core)
def test_spinach_with_native_tool_calls_through_the_model_server_then_replayed(tmp_path):
    import sparqlab.methods.agents  # noqa: F401  (registers standin-agent)

    questions = movie_questions()
    cache = tmp_path / "responses.sqlite"
    served = CachedModel(create_standin("standin-agent"), mode="off")  # counts the calls reaching the server

    def go(folder: str, url: str, mode: str = "read_write", **options):
        config = RunConfig(experiment="tools", kg="movies", model="standin-agent", model_url=url, cache=mode,
                           cache_path=str(cache), output_root=str(tmp_path / folder), progress=False)
        result = run(make_method("spinach", **options), questions, config)
        assert result.metrics["n_done"] == len(questions) and result.metrics["model_is_standin"] is True
        return result

    with serve_in_background(served) as url:
        text = go("text", url)
        text_calls = served.calls
        tools = go("tools", url, action_format="tools")
        tool_format_calls = served.calls - text_calls
    replayed = go("replay", "http://127.0.0.1:9/v1", mode="replay", action_format="tools")  # no server at all
    assert served.calls == text_calls + tool_format_calls and replayed.metrics["model_calls_uncached"] == 0

    by_format = {name: result.predictions().set_index("id") for name, result in
                 (("text", text), ("tools", tools), ("replay", replayed))}
    for question in questions:
        row_text, row_tools = by_format["text"].loc[question.id], by_format["tools"].loc[question.id]
        assert row_tools["predicted_sparql"] == row_text["predicted_sparql"] and row_tools["f1"] == row_text["f1"]
        assert row_tools["extra.actions"] == row_text["extra.actions"] and row_tools["extra.stopped_by"] == "stop"
        # a native call is already structured: no re-parse call; one controller call per step either way
        assert "reparse" not in row_tools["model_calls"]
        assert row_text["model_calls"]["reparse"] == row_text["model_calls"]["controller"]
        assert row_tools["model_calls"]["controller"] == row_text["model_calls"]["controller"]
        assert by_format["replay"].loc[question.id, "predicted_sparql"] == row_tools["predicted_sparql"]
        assert by_format["replay"].loc[question.id, "f1"] == row_tools["f1"]
    assert by_format["tools"]["f1"].mean() == pytest.approx(by_format["text"]["f1"].mean())
    assert by_format["tools"]["f1"].mean() >= 0.8
    assert tool_format_calls < text_calls
    assert "controller" not in (tools.metrics.get("reply_outcomes") or {})  # a call without text is no empty reply

    traces = {name: load_traces(result.run_dir) for name, result in (("text", text), ("tools", tools))}
    for question in questions:
        steps = {name: [(e.kind, e.data.get("name")) for e in trace[question.id] if e.kind in STEP_EVENTS]
                 for name, trace in traces.items()}
        assert steps["tools"] == steps["text"]  # the same step records, in the same order
        calls = [e for e in traces["tools"][question.id] if e.kind == "model_call" and e.data.get("tool_calls")]
        assert calls and all(e.data["finish_reason"] == "tool_calls" for e in calls)
    config = json.loads((tools.run_dir / "config.json").read_text())
    assert config["method"]["config"]["action_format"] == "tools"
    assert "controller_tools" in config["method"]["prompts"]


def test_malformed_function_arguments_take_the_reparse_and_failure_path(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"content": "I run a query.",
                                   "tool_calls": [{"name": "execute", "arguments": '{"sparql": "SELECT'}]}]))
    model = create_standin("standin-script", path=str(script))
    config = RunConfig(experiment="malformed", kg="movies", model=model.name, cache="off",
                       output_root=str(tmp_path / "runs"), progress=False)
    result = run(make_method("spinach", action_format="tools"), movie_questions()[:1], config, model=model)
    row = result.predictions().iloc[0]
    assert row["error_category"] == "parse_failure" and row["extra.stopped_by"] == "parse_failure"
    assert row["extra.parse_failures"] == 3 and row["model_calls"]["reparse"] == 3
    failures = [e for e in load_traces(result.run_dir)[row["id"]] if e.kind == "parse_failure"]
    assert failures and 'Action: execute({"sparql": "SELECT)' in failures[0].data["response"]


def test_saga_offers_its_actions_as_functions_in_either_prompt_layout():
    for layout, prompt in (("paper", "saga_controller_tools"), ("state_last", "saga_controller_state_last_tools")):
        saga = make_method("saga", action_format="tools", prompt_layout=layout)
        assert prompt in saga.prompts and saga.prompt_name(prompt.removesuffix("_tools")) == prompt
        assert "call\nexactly one of the functions" in saga.prompts[prompt].text
    functions = {f["function"]["name"]: f["function"] for f in saga.functions()}
    assert list(functions) == ["search", "lookup", "examples", "execute", "stop"]
    assert functions["execute"]["parameters"]["required"] == ["sparql"]
    assert functions["stop"]["parameters"]["properties"] == {}
    assert "controller_tools" not in make_method("saga").prompts  # the text format's run ids stay as they were
