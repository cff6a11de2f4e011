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
from sparqlab.serving.model_server import serve_in_background

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


STANDIN_SOURCE = '''
from sparqlab.llm import StandinModel


class Answerer(StandinModel):
    name = "standin-edited"

    def respond(self, request):
        return "{answer}"
'''


def load_standin(folder, module_name, answer):
    """A stand-in class from a module file, as a researcher's edited stand-in would be."""
    import importlib.util
    import sys

    path = folder / f"{module_name}.py"
    path.write_text(STANDIN_SOURCE.format(answer=answer))
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module.Answerer()


@pytest.mark.parametrize("over_http", [False, True], ids=["in-process", "served"])
def test_an_edited_standin_misses_the_cache_instead_of_replaying_old_answers(tmp_path, over_http):
    cache_path = tmp_path / "responses.sqlite"

    def ask(standin):
        if not over_http:
            return asyncio.run(CachedModel(standin, cache_path).chat("Who directed Alien?"))
        with serve_in_background(standin) as url:
            model = make_model({"model": "standin-edited", "base_url": url, "cache_path": cache_path})
            return asyncio.run(model.chat("Who directed Alien?"))

    first = load_standin(tmp_path, "standin_v1", "old answer")
    same_code = load_standin(tmp_path, "standin_v1_again", "old answer")
    edited = load_standin(tmp_path, "standin_v2", "new answer")
    assert first.root == same_code.root != edited.root
    assert ask(first).text == "old answer"
    replayed = ask(same_code)
    assert replayed.cached and replayed.text == "old answer"
    fresh = ask(edited)
    assert not fresh.cached and fresh.text == "new answer"


def test_a_standin_created_with_other_options_misses_the_cache(tmp_path):
    from sparqlab.llm import create_standin

    cache_path = tmp_path / "responses.sqlite"

    def ask(delay_ms):
        standin = create_standin("standin-latency", delay_ms=delay_ms)
        return standin.root, asyncio.run(CachedModel(standin, cache_path).chat("Who directed Alien?"))

    first_root, first = ask(0)
    again_root, again = ask(0)
    other_root, other = ask(1)
    assert first_root == again_root != other_root
    assert not first.cached and again.cached and not other.cached
