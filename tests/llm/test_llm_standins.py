"""Stand-in registry: names are enforced, stand-ins are deterministic and say their token counts are estimates."""

import asyncio

import pytest

from sparqlab.core.plugins import load_plugins
from sparqlab.llm import (
    CachedModel,
    ChatModel,
    ChatRequest,
    EchoStandin,
    LatencyStandin,
    OpenAIModel,
    StandinModel,
    create_standin,
    get_model,
    make_model,
    register_standin,
    standin_names,
    standins,
)


@pytest.fixture(autouse=True)
def private_registry():
    """Each test's registrations are undone afterwards, so nothing leaks into other tests."""
    load_plugins()  # first: a plug-in loaded inside the block alone would be lost with it
    with standins.STANDINS.restored():
        yield


def test_names_must_start_with_standin():
    with pytest.raises(ValueError, match="standin-"):
        register_standin("gpt-4-lookalike", EchoStandin)
    with pytest.raises(ValueError, match="standin-"):
        register_standin("standin-")

    class Misnamed(StandinModel):
        name = "my-model"

    with pytest.raises(ValueError, match="standin-"):
        Misnamed()


def test_a_factory_must_return_a_standin():
    register_standin("standin-sneaky", lambda: ChatModel())
    with pytest.raises(TypeError, match="is_standin"):
        create_standin("standin-sneaky")


def test_latency_wrapper_refuses_a_real_model():
    with pytest.raises(ValueError, match="stand-ins only"):
        LatencyStandin(OpenAIModel("openai/gpt-oss-120b", base_url="http://127.0.0.1:9/v1"), delay_ms=1)


def test_registering_as_decorator_and_resolving_by_name():
    @register_standin("standin-upper")
    class Upper(StandinModel):
        """Shouts the question back."""

        name = "standin-upper"

        def respond(self, request):
            return request.last_user_message.upper()

    assert "standin-upper" in standin_names()
    model = get_model("standin-upper")
    assert isinstance(model, Upper) and model.is_standin
    assert model.chat_sync("where is paris").text == "WHERE IS PARIS"
    register_standin("standin-upper", Upper)  # same factory again: allowed (module reload)
    with pytest.raises(ValueError, match="already registered"):
        register_standin("standin-upper", EchoStandin)


def test_unknown_standin_lists_the_registered_ones():
    with pytest.raises(ValueError, match="standin-echo"):
        get_model("standin-does-not-exist")


def test_get_model_routes_real_names_to_the_http_backend(monkeypatch):
    monkeypatch.setenv("SPARQLAB_MODEL", "openai/gpt-oss-120b")
    monkeypatch.setenv("SPARQLAB_MODEL_URL", "http://127.0.0.1:9")
    model = get_model()
    assert isinstance(model, OpenAIModel) and not model.is_standin
    assert model.describe()["base_url"] == "http://127.0.0.1:9/v1"
    assert isinstance(get_model({"model": "standin-echo"}), EchoStandin)
    wrapped = make_model("standin-echo")
    assert isinstance(wrapped, CachedModel) and wrapped.is_standin and wrapped.name == "standin-echo"
    # an unset endpoint (a notebook's ``model_url = None``) means the in-process stand-in, not HTTP
    assert isinstance(get_model({"model": "standin-echo", "base_url": None}), EchoStandin)


def test_echo_is_deterministic_and_marks_estimates():
    model = get_model("standin-echo")
    messages = [{"role": "user", "content": "first"}, {"role": "assistant", "content": "ok"},
                {"role": "user", "content": "films starring Tom Hanks"}]
    one, two = model.chat_sync(messages), model.chat_sync(messages)
    assert one.text == two.text == "films starring Tom Hanks"
    assert one.usage == two.usage and one.usage.estimated
    assert one.usage.prompt_tokens > one.usage.completion_tokens > 0


def test_stop_and_max_tokens_are_applied():
    model = get_model("standin-echo")
    assert model.chat_sync("answer: 42 END trailing", stop="END").text == "answer: 42 "
    response = model.chat_sync(" ".join(["word"] * 50), max_tokens=10)
    assert response.finish_reason == "length"
    assert response.usage.completion_tokens <= 10


def test_latency_standin_delays_without_blocking_the_loop(monkeypatch):
    """The delay is an awaited sleep of ``delay_ms``: ten calls are all asleep at once (a barrier in place of the
    sleep proves it without a clock; its 60 s wait is a deadlock guard)."""
    model = get_model("standin-latency", delay_ms=100)
    request = ChatRequest.build(model.name, "ping")
    real_sleep, delays = asyncio.sleep, []

    async def barrier_sleep(seconds):
        delays.append(seconds)
        if len(delays) == 10:
            everyone.set()
        await asyncio.wait_for(everyone.wait(), 60)
        await real_sleep(0)

    async def many():
        nonlocal everyone
        everyone = asyncio.Event()
        return await asyncio.gather(*(model.acomplete(request) for _ in range(10)))

    everyone: asyncio.Event
    monkeypatch.setattr(asyncio, "sleep", barrier_sleep)
    responses = asyncio.run(many())
    monkeypatch.undo()
    assert delays == [0.1] * 10
    assert all(r.text == "ping" and r.model == "standin-latency" for r in responses)
    assert model.describe()["delay_ms"] == 100 and model.describe()["standin"]
