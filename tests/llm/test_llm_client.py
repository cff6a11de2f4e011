"""The OpenAI-compatible backend against the project's own server over real HTTP, through the `openai` client."""

import asyncio
import json

import httpx
import openai
import pytest

from sparqlab.llm import (
    ChatModel,
    ChatRequest,
    ChatResponse,
    ModelUnavailable,
    OpenAIModel,
    UnknownModel,
    Usage,
    estimate_tokens,
    get_model,
)
from sparqlab.llm.errors import ModelRequestError
from sparqlab.serving.model_server import serve_in_background


def test_chat_over_http_returns_text_usage_and_finish_reason(echo_server):
    model = OpenAIModel("standin-echo", base_url=echo_server)
    response = model.chat_sync([{"role": "system", "content": "be brief"},
                                {"role": "user", "content": "which films did Ridley Scott direct"}])
    assert response.text == "which films did Ridley Scott direct"
    assert response.finish_reason == "stop"
    assert response.model == "standin-echo"
    assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0
    assert response.latency_s > 0
    assert model.is_standin, "a served stand-in must stay marked as a stand-in"


def test_sampling_parameters_reach_the_server(echo_server):
    model = OpenAIModel("standin-echo", base_url=echo_server)
    stopped = model.chat_sync("SELECT ?x WHERE { ?x ?p ?o } LIMIT 5", stop=["LIMIT"], seed=3, top_p=0.5)
    assert stopped.text == "SELECT ?x WHERE { ?x ?p ?o } "
    long_text = "one two three four five six seven eight"
    truncated = model.chat_sync(long_text, max_tokens=3)
    assert truncated.finish_reason == "length"
    assert truncated.text and long_text.startswith(truncated.text)
    assert estimate_tokens(truncated.text) <= 3 < estimate_tokens(long_text)


class ParameterEcho(ChatModel):
    """Answers with the sampling parameters of the request it received, as JSON."""

    name = "standin-parameters"
    is_standin = True

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        received = {k: v for k, v in request.to_dict().items() if k not in ("model", "messages", "extra")}
        return ChatResponse(json.dumps(received), Usage(1, 1), model=self.name)


def test_every_sampling_parameter_reaches_the_server():
    with serve_in_background(ParameterEcho()) as url:
        reply = OpenAIModel("standin-parameters", base_url=url).chat_sync(
            "q", temperature=0.7, top_p=0.5, max_tokens=33, stop=["END", "\n\n"], seed=11)
    assert json.loads(reply.text) == {"temperature": 0.7, "top_p": 0.5, "max_tokens": 33, "stop": ["END", "\n\n"],
                                      "seed": 11}


def test_many_concurrent_calls(echo_server):
    model = OpenAIModel("standin-echo", base_url=echo_server)

    async def ask_all():
        try:
            return await asyncio.gather(*(model.chat(f"question {i}") for i in range(20)))
        finally:
            await model.aclose()

    responses = asyncio.run(ask_all())
    assert [r.text for r in responses] == [f"question {i}" for i in range(20)]


def test_get_model_with_a_base_url_reaches_a_served_standin(echo_server):
    model = get_model("standin-echo", base_url=echo_server)
    assert isinstance(model, OpenAIModel) and model.is_standin
    assert model.chat_sync("over http").text == "over http"


def test_base_url_without_v1_gets_it(echo_server):
    root = echo_server.removesuffix("/v1")
    assert OpenAIModel("standin-echo", base_url=root).chat_sync("hello").text == "hello"


def test_environment_configures_the_backend(echo_server, monkeypatch):
    monkeypatch.setenv("SPARQLAB_MODEL_URL", echo_server)
    monkeypatch.setenv("SPARQLAB_MODEL", "standin-echo")
    monkeypatch.setenv("SPARQLAB_API_KEY", "dummy")
    model = OpenAIModel()
    assert model.base_url == echo_server and model.name == "standin-echo"
    assert model.chat_sync("from the environment").text == "from the environment"


def test_unknown_model_lists_the_served_models(echo_server):
    model = OpenAIModel("meta-llama/Llama-3.1-70B-Instruct", base_url=echo_server, max_retries=0)
    with pytest.raises(UnknownModel) as caught:
        model.chat_sync("hi")
    message = str(caught.value)
    assert "meta-llama/Llama-3.1-70B-Instruct" in message and "'standin-echo'" in message
    assert echo_server in message
    with pytest.raises(UnknownModel):
        asyncio.run(model.check())
    asyncio.run(OpenAIModel("standin-echo", base_url=echo_server).check())


def test_unreachable_endpoint_says_where_and_how_to_start_a_server(dead_url):
    model = OpenAIModel("openai/gpt-oss-120b", base_url=dead_url, max_retries=0)
    with pytest.raises(ModelUnavailable) as caught:
        model.chat_sync("hi")
    message = str(caught.value)
    assert dead_url in message
    assert "vllm serve openai/gpt-oss-120b" in message
    assert "sparqlab serve-model" in message
    served_standin = OpenAIModel("standin-echo", base_url=dead_url, max_retries=0)
    with pytest.raises(ModelUnavailable) as caught:
        served_standin.chat_sync("hi")
    assert "sparqlab serve-model --model standin-echo" in str(caught.value)
    assert "vllm" not in str(caught.value)


@pytest.fixture
def fast_backoff(monkeypatch):
    """The openai client's first retry waits 0.5 s, doubling; the retry tests need the retries, not the waits."""
    monkeypatch.setattr(openai._base_client, "INITIAL_RETRY_DELAY", 0.01)


class FlakyModel(ChatModel):
    """Fails (HTTP 502 from the server) on its first ``failures`` calls, then echoes."""

    name = "standin-flaky"
    is_standin = True

    def __init__(self, failures: int):
        self.failures = failures
        self.calls = 0

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        if self.calls <= self.failures:
            raise ModelUnavailable("simulated overload")
        return ChatResponse(request.last_user_message, Usage(1, 1), model=self.name)


def test_retries_on_server_errors_until_success(fast_backoff):
    flaky = FlakyModel(failures=2)
    with serve_in_background(flaky) as url:
        response = OpenAIModel("standin-flaky", base_url=url, max_retries=3).chat_sync("persist")
    assert response.text == "persist"
    assert flaky.calls == 3


def test_gives_up_after_max_retries_with_the_status(fast_backoff):
    flaky = FlakyModel(failures=10)
    with serve_in_background(flaky) as url, pytest.raises(ModelUnavailable) as caught:
        OpenAIModel("standin-flaky", base_url=url, max_retries=1).chat_sync("persist")
    assert flaky.calls == 2
    assert "HTTP 502" in str(caught.value) and "after 2 attempts" in str(caught.value)


def test_bad_request_is_not_retried():
    with serve_in_background("standin-echo") as url:
        model = OpenAIModel("standin-echo", base_url=url, max_retries=3)
        with pytest.raises(ModelRequestError) as caught:
            model.chat_sync("hi", temperature=5.0)
    assert "temperature" in str(caught.value) and "HTTP 400" in str(caught.value)


def test_a_refused_api_key_says_which_setting_to_check():
    model = OpenAIModel("gpt-4o", base_url="http://127.0.0.1:9/v1", api_key="wrong")
    reply = httpx.Response(401, request=httpx.Request("POST", f"{model.base_url}/chat/completions"))
    refused = openai.AuthenticationError("Incorrect API key provided", response=reply, body=None)
    error = asyncio.run(model._translate(refused, model.name))
    assert isinstance(error, ModelRequestError)
    assert "HTTP 401" in str(error) and "SPARQLAB_API_KEY" in str(error)


class ReasoningModel(ChatModel):
    """Answers like gpt-oss behind vLLM: a final answer plus a separate chain of thought."""

    name = "standin-reasoner"
    is_standin = True

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse("SELECT * WHERE { ?s ?p ?o }", Usage(5, 9), reasoning="First find the entity.",
                            model=self.name)


def test_reasoning_is_kept_apart_from_the_final_text():
    with serve_in_background(ReasoningModel()) as url:
        response = OpenAIModel("standin-reasoner", base_url=url).chat_sync("q")
    assert response.text == "SELECT * WHERE { ?s ?p ?o }"
    assert response.reasoning == "First find the entity."
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (5, 9)


def test_sync_call_inside_a_running_event_loop(echo_server):
    """Notebooks run an event loop; the blocking API must still work there."""
    model = OpenAIModel("standin-echo", base_url=echo_server)

    async def inside_loop():
        return model.chat_sync("from a notebook cell")

    assert asyncio.run(inside_loop()).text == "from a notebook cell"
