"""Tool calls through the model layer: ``tools`` in the request and its cache key, ``tool_calls`` read from a real
HTTP server (``standin-script``) and replayed exactly from the cache, the server's checks of ``tools``."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from sparqlab.llm import ChatRequest, make_model, request_key
from sparqlab.llm.cache import CachedModel
from sparqlab.llm.errors import ModelReplyInvalid
from sparqlab.llm.openai_backend import completion_response
from sparqlab.llm.standins import create_standin
from sparqlab.serving.model_server import serve_in_background

SEARCH = {"type": "function", "function": {"name": "search", "description": "find entities by name",
                                           "parameters": {"type": "object",
                                                          "properties": {"text": {"type": "string"}},
                                                          "required": ["text"]}}}


def test_cache_keys_differ_with_and_without_tools():
    plain = ChatRequest.build("m", "Who directed Alien?")
    offered = ChatRequest.build("m", "Who directed Alien?", tools=[SEARCH])
    required = ChatRequest.build("m", "Who directed Alien?", tools=[SEARCH], tool_choice="required")
    assert len({request_key(plain), request_key(offered), request_key(required)}) == 3
    # a request without tools keeps the canonical form (and key) it had before tools existed
    assert "tools" not in plain.to_dict() and "tool_choice" not in plain.to_dict()
    assert offered.to_dict()["tools"] == [SEARCH]


def test_tools_must_be_function_definitions():
    with pytest.raises(TypeError, match="tools must be a list"):
        ChatRequest.build("m", "hi", tools="search")


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "script.json"
    path.write_text(json.dumps([
        {"content": "I look Alien up.", "tool_calls": [{"name": "search", "arguments": {"text": "Alien"}}]},
        "Ridley Scott directed Alien.",
    ]))
    return path


def test_served_tool_calls_reach_the_client_and_replay_exactly_from_the_cache(tmp_path, script):
    served = CachedModel(create_standin("standin-script", path=str(script)), mode="off")  # counts server calls
    cache = tmp_path / "responses.sqlite"
    conversation = [{"role": "user", "content": "Who directed Alien?"}]
    with serve_in_background(served) as url:
        live = make_model({"model": "standin-script", "base_url": url, "cache_path": cache})
        first = live.chat_sync(conversation, tools=[SEARCH], tool_choice="auto")
        answer = live.chat_sync([*conversation, {"role": "assistant", "content": first.text},
                                 {"role": "tool", "content": "Alien (mv:alien)"}], tools=[SEARCH])
        with httpx.Client() as client:  # the wire format: OpenAI's, arguments as a JSON string
            raw = client.post(f"{url}/chat/completions", json={"model": "standin-script", "messages": conversation,
                                                               "tools": [SEARCH]}).json()
    assert served.calls == 3
    choice = raw["choices"][0]
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] == "I look Alien up."
    assert choice["message"]["tool_calls"][0]["function"] == {"name": "search", "arguments": '{"text": "Alien"}'}
    assert first.finish_reason == "tool_calls" and first.text == "I look Alien up."
    assert first.tool_calls == choice["message"]["tool_calls"]
    assert answer.tool_calls is None and answer.text == "Ridley Scott directed Alien."
    replay = make_model({"model": "standin-script", "base_url": "http://127.0.0.1:9/v1", "cache_path": cache,
                         "cache_mode": "replay"})
    again = replay.chat_sync(conversation, tools=[SEARCH], tool_choice="auto")
    assert again.cached and again.tool_calls == first.tool_calls and again.finish_reason == "tool_calls"
    assert replay.calls == 0
    with pytest.raises(Exception, match="replay mode"):  # the same prompt without the tools is another request
        replay.chat_sync(conversation)


@pytest.mark.parametrize("body, message", [
    ({"tools": "search"}, "'tools' must be a list"),
    ({"tools": [{"type": "function"}]}, "'tools' must be a list"),
    ({"tools": [SEARCH], "tool_choice": {"type": "function", "function": {"name": "lookup"}}}, "tool_choice"),
    ({"tool_choice": "sometimes"}, "tool_choice"),
    ({"tools": [SEARCH], "tool_choice": {"type": "function", "function": "search"}}, "tool_choice"),
])
def test_the_server_refuses_malformed_tools(body, message):
    with serve_in_background("standin-echo") as url, httpx.Client() as client:
        reply = client.post(f"{url}/chat/completions",
                            json={"model": "standin-echo", "messages": [{"role": "user", "content": "hi"}], **body})
    assert reply.status_code == 400 and message in reply.json()["error"]["message"]


def test_a_client_reads_tool_calls_and_refuses_a_malformed_shape():
    request = ChatRequest.build("m", "hi", tools=[SEARCH])
    body = {"choices": [{"finish_reason": "tool_calls", "message": {"content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "search", "arguments": {"text": "Alien"}}}]}}]}
    response = completion_response(json.dumps(body).encode(), request, 0.1, 0, "http://x/v1")
    assert response.text == "" and response.tool_calls[0]["function"]["arguments"] == '{"text": "Alien"}'
    body["choices"][0]["message"]["tool_calls"] = [{"id": "c1", "function": "search"}]
    with pytest.raises(ModelReplyInvalid, match="not a completion"):
        completion_response(json.dumps(body).encode(), request, 0.1, 0, "http://x/v1")


def test_a_script_that_cannot_be_read_is_named(tmp_path):
    with pytest.raises(ValueError, match="needs its script"):
        create_standin("standin-script")
    with pytest.raises(ValueError, match="missing.json"):
        create_standin("standin-script", path=str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text('[{"tool_calls": [{"arguments": {}}]}]')
    with pytest.raises(ValueError, match="bad.json entry 0"):
        create_standin("standin-script", path=str(bad))


def test_a_scripted_reply_cut_by_max_tokens_loses_its_calls(script):
    model = create_standin("standin-script", path=str(script))
    cut = asyncio.run(model.chat("Who directed Alien?", tools=[SEARCH], max_tokens=2))
    assert cut.finish_reason == "length" and cut.tool_calls is None


@pytest.mark.slow  # a `sparqlab serve-model` subprocess
def test_serve_model_passes_stand_in_options_and_names_a_bad_one(script, capsys):
    from sparqlab.cli import main

    with serve_in_background("standin-script", process=True, options={"path": str(script)}) as url:  # serve-model
        reply = make_model({"model": "standin-script", "base_url": url, "cache_mode": "off"}).chat_sync(
            "Who directed Alien?", tools=[SEARCH])
    assert reply.tool_calls[0]["function"]["name"] == "search"
    assert main(["serve-model", "--model", "standin-script", "--option", "path"]) == 2
    assert "--option 'path' is not KEY=VALUE" in capsys.readouterr().err
    assert main(["serve-model", "--model", "standin-script", "--option", f"path={script}.missing"]) == 2
    assert "script.json.missing" in capsys.readouterr().err


def test_a_reasoning_stand_in_keeps_its_inner_model_s_calls(script):
    model = create_standin("standin-reasoning", inner=create_standin("standin-script", path=str(script)),
                           reasoning_tokens=5)
    reply = asyncio.run(model.chat("Who directed Alien?", tools=[SEARCH]))
    assert reply.finish_reason == "tool_calls" and reply.reasoning and reply.tool_calls[0]["function"]["name"] == "search"
