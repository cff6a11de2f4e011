"""`sparqlab serve-model`: OpenAI response shape, OpenAI-style errors, and concurrent requests."""

import asyncio

import httpx
import openai

from sparqlab.llm import OpenAIModel
from sparqlab.llm.base import ChatModel, ChatRequest, ChatResponse
from sparqlab.serving.model_server import serve_in_background


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


class BarrierModel(ChatModel):
    """Answers no request until ``parties`` requests are in flight at once: it can only finish if the server
    handles them concurrently (the 60 s wait is a deadlock guard that fails the test, not a measurement)."""

    name = "standin-barrier"
    is_standin = True

    def __init__(self, parties: int):
        self.parties, self.in_flight, self.most = parties, 0, 0
        self.all_arrived: asyncio.Event | None = None

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        self.all_arrived = self.all_arrived or asyncio.Event()
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        if self.in_flight >= self.parties:
            self.all_arrived.set()
        await asyncio.wait_for(self.all_arrived.wait(), 60)
        return ChatResponse(request.last_user_message)


def test_concurrent_requests_overlap():
    """32 requests are all in flight on the server at once (the barrier model proves it without a clock)."""
    count = 32
    barrier = BarrierModel(count)
    with serve_in_background(barrier) as url:
        model = OpenAIModel("standin-barrier", base_url=url, max_retries=0, timeout_s=120)

        async def burst():
            try:
                return await asyncio.gather(*(model.chat(f"q{i}") for i in range(count)))
            finally:
                await model.aclose()

        responses = asyncio.run(burst())
    assert sorted(r.text for r in responses) == sorted(f"q{i}" for i in range(count))
    assert barrier.most == count
