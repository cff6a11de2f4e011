"""The response cache: zero model calls on a rerun, replay from a shipped cache, loud replay misses."""

import asyncio

import pytest

from sparqlab.llm import (
    CachedModel,
    ChatRequest,
    ModelUnavailable,
    OpenAIModel,
    ReplayMiss,
    get_model,
    make_model,
    request_key,
)
from sparqlab.llm.server import serve_in_background

QUESTIONS = [f"Who directed film number {i}?" for i in range(6)]


def ask_all(model, **params):
    async def run():
        return await asyncio.gather(*(model.chat(q, **params) for q in QUESTIONS))

    return asyncio.run(run())


def test_rerun_of_a_finished_configuration_makes_zero_calls(tmp_path):
    served = CachedModel(get_model("standin-echo"), mode="off")  # counts what reaches the server
    cache_path = tmp_path / "run" / "responses.sqlite"
    with serve_in_background(served) as url:
        first = make_model({"model": "standin-echo", "base_url": url, "cache_path": cache_path})
        live = ask_all(first, temperature=0, max_tokens=64)
        assert first.calls == len(QUESTIONS) and first.hits == 0
        assert served.calls == len(QUESTIONS)

        rerun = make_model({"model": "standin-echo", "base_url": url, "cache_path": cache_path})
        again = ask_all(rerun, temperature=0, max_tokens=64)
    assert served.calls == len(QUESTIONS), "the rerun must not reach the server"
    assert rerun.calls == 0 and rerun.hits == len(QUESTIONS)
    assert [r.text for r in again] == [r.text for r in live]
    assert all(r.cached and r.latency_s == 0 for r in again)
    assert [r.usage for r in again] == [r.usage for r in live], "token counts survive the cache"


def test_replay_serves_a_shipped_cache_without_any_endpoint(tmp_path):
    path = tmp_path / "responses.sqlite"
    with serve_in_background("standin-echo") as url:
        ask_all(make_model({"model": "standin-echo", "base_url": url, "cache_path": path}), seed=7)
    # The server is gone and the URL points nowhere: replay must not need it.
    offline = make_model({"model": "standin-echo", "base_url": url, "cache_path": path, "cache_mode": "replay",
                          "max_retries": 0})
    assert [r.text for r in ask_all(offline, seed=7)] == QUESTIONS
    assert offline.calls == 0


def test_replay_miss_names_the_model_and_the_prompt(tmp_path):
    path = tmp_path / "responses.sqlite"
    asyncio.run(make_model({"model": "standin-echo", "cache_path": path}).chat("a cached question"))
    replay = make_model({"model": "standin-echo", "cache_path": path, "cache_mode": "replay"})
    with pytest.raises(ReplayMiss) as caught:
        replay.chat_sync("a question that was never asked " + "x" * 500)
    message = str(caught.value)
    assert "'standin-echo'" in message
    assert "a question that was never asked" in message and "x" * 200 not in message
    assert str(path) in message and "holds 1 responses" in message
    assert replay.calls == 0


def test_every_parameter_is_part_of_the_key(tmp_path):
    model = make_model({"model": "standin-echo", "cache_path": tmp_path / "c.sqlite"})
    variants = [{}, {"temperature": 0.7}, {"temperature": 0.7, "seed": 1}, {"temperature": 0.7, "seed": 2},
                {"top_p": 0.9}, {"max_tokens": 5}, {"stop": ["x"]}, {"extra": {"reasoning_effort": "low"}}]
    for params in variants:
        model.chat_sync("same prompt", **params)
    assert model.calls == len(variants) and model.hits == 0
    for params in variants:
        assert model.chat_sync("same prompt", **params).cached
    assert model.calls == len(variants)


def test_key_is_stable_and_model_specific():
    request = ChatRequest.build("m", [{"role": "user", "content": "q"}], temperature=0.0, stop="END")
    assert request_key(request) == request_key(ChatRequest.build("m", "q", stop=["END"]))
    assert request_key(request) != request_key(ChatRequest.build("other", "q", stop=["END"]))


def test_integer_and_float_parameters_are_one_request():
    """``temperature=0`` (a papermill ``-p temperature 0``) must hit what ``temperature=0.0`` cached."""
    default = request_key(ChatRequest.build("m", "q"))
    assert request_key(ChatRequest.build("m", "q", temperature=0, top_p=1)) == default
    assert request_key(ChatRequest.build("m", "q", temperature=1)) == request_key(ChatRequest.build("m", "q",
                                                                                                   temperature=1.0))
    assert request_key(ChatRequest.build("m", "q", temperature=1)) != default


def test_unknown_parameters_are_refused_with_the_known_ones():
    with pytest.raises(TypeError) as caught:
        ChatRequest.build("m", "q", max_new_tokens=5)
    message = str(caught.value)
    assert "max_new_tokens" in message and "max_tokens" in message and "extra=" in message


def test_cache_off_stores_nothing(tmp_path):
    model = make_model({"model": "standin-echo", "cache_mode": "off"})
    model.chat_sync("q")
    model.chat_sync("q")
    assert model.calls == 2 and model.hits == 0 and model.stats()["path"] is None


def test_failed_calls_are_not_cached(tmp_path, dead_url):
    model = CachedModel(OpenAIModel("anything", base_url=dead_url, max_retries=0),
                        path=tmp_path / "c.sqlite")
    for _ in range(2):
        with pytest.raises(ModelUnavailable, match="cannot reach"):
            model.chat_sync("q")
    assert model.calls == 2 and model.cache.count("chat") == 0


def test_unknown_mode_is_refused(tmp_path):
    with pytest.raises(ValueError, match="read_write"):
        make_model({"model": "standin-echo", "cache_mode": "readonly"})
