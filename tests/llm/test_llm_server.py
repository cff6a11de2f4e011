"""`sparqlab serve-model`: OpenAI response shape, OpenAI-style errors, and concurrent requests."""

import asyncio
import time

import httpx
import openai

from sparqlab.llm import OpenAIModel
from sparqlab.llm.server import serve_in_background


def test_models_endpoint_lists_the_served_model(echo_server):
    client = openai.OpenAI(base_url=echo_server, api_key="dummy", max_retries=0)
    assert [m.id for m in client.models.list().data] == ["standin-echo"]
    assert client.models.retrieve("standin-echo").id == "standin-echo"


def test_chat_completion_has_the_openai_shape(echo_server):
    body = httpx.post(f"{echo_server}/chat/completions", json={
        "model": "standin-echo", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    }).json()
    assert body["object"] == "chat.completion" and body["id"].startswith("chatcmpl-")
    assert body["model"] == "standin-echo" and isinstance(body["created"], int)
    (choice,) = body["choices"]
    assert choice["index"] == 0 and choice["finish_reason"] == "stop"
    assert choice["message"] == {"role": "assistant", "content": "hi"}
    usage = body["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0


def test_unknown_model_is_a_404_with_an_openai_error_body(echo_server):
    reply = httpx.post(f"{echo_server}/chat/completions",
                       json={"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}]})
    assert reply.status_code == 404
    error = reply.json()["error"]
    assert error["code"] == "model_not_found" and error["param"] == "model" and "gpt-5" in error["message"]
    assert httpx.get(f"{echo_server}/models/gpt-5").status_code == 404


def test_malformed_requests_are_400s(echo_server):
    url = f"{echo_server}/chat/completions"
    cases = {
        "not json": {"content": b"{oops", "headers": {"content-type": "application/json"}},
        "no messages": {"json": {"model": "standin-echo"}},
        "bad role": {"json": {"model": "standin-echo", "messages": [{"role": "robot", "content": "x"}]}},
        "bad max_tokens": {"json": {"model": "standin-echo", "messages": [{"role": "user", "content": "x"}],
                                    "max_tokens": 0}},
        "streaming": {"json": {"model": "standin-echo", "messages": [{"role": "user", "content": "x"}],
                               "stream": True}},
        "list body": {"json": [1, 2]},
    }
    for label, request in cases.items():
        reply = httpx.post(url, **request)
        assert reply.status_code == 400, label
        assert reply.json()["error"]["type"] == "invalid_request_error", label


def test_concurrent_requests_overlap():
    """32 requests to a 200 ms stand-in take about one delay, not 32 (6.4 s); asserted loosely."""
    delay_s, count = 0.2, 32
    with serve_in_background("standin-latency", delay_ms=delay_s * 1000, process=True) as url:
        model = OpenAIModel("standin-latency", base_url=url, max_retries=0)

        async def burst():
            await model.chat("warm up")
            start = time.perf_counter()
            responses = await asyncio.gather(*(model.chat(f"q{i}") for i in range(count)))
            return responses, time.perf_counter() - start

        responses, wall = asyncio.run(burst())
    assert sorted(r.text for r in responses) == sorted(f"q{i}" for i in range(count))
    assert wall < 0.5 * delay_s * count, f"{count} concurrent calls took {wall:.2f} s"
