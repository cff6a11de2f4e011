"""The model client's bounds (issue 40): ``timeout_s`` is a total deadline per attempt however slowly the reply
comes, and a reply over the byte cap is refused while it arrives; both with either HTTP transport."""

from __future__ import annotations

import json
import time

import pytest

from sparqlab.core.event_loops import run_sync
from sparqlab.llm.base import ChatRequest
from sparqlab.llm.errors import ModelAccessRefused, ModelOverloaded, ModelRequestError
from sparqlab.llm.openai_backend import OpenAIModel
from support.hostile_http import hostile_server, http_reply

TRANSPORTS = ["aiohttp", "httpx"]


def completion(text: str) -> bytes:
    return json.dumps({"object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1}}).encode()


def ask(url: str, transport: str, **options) -> str:
    model = OpenAIModel("m", base_url=f"{url}/v1", max_retries=0, http_transport=transport, **options)
    return run_sync(model.acomplete(ChatRequest.build("m", "hi"))).text


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("drip_from", [10, len(http_reply(completion("ok"))) - 40], ids=["headers", "body"])
def test_a_dripping_reply_ends_at_the_deadline(transport, drip_from):
    # 0.2 s a byte: the reply would take ~40 s whole, and every read is far quicker than the 1 s timeout
    with hostile_server(http_reply(completion("ok")), drip_from=drip_from, interval_s=0.2) as url:
        start = time.monotonic()
        with pytest.raises(ModelOverloaded, match="did not answer within 1 s"):
            ask(url, transport, timeout_s=1.0)
        assert time.monotonic() - start < 2.5


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_reply_over_the_byte_cap_is_refused_and_one_under_it_read(transport):
    with hostile_server(http_reply(completion("x" * 200_000))) as url:
        with pytest.raises(ModelRequestError, match="larger than 100,000 bytes"):
            ask(url, transport, max_reply_bytes=100_000)
        assert ask(url, transport, max_reply_bytes=300_000) == "x" * 200_000


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_redirect_to_another_origin_is_refused(transport):
    with hostile_server(http_reply(completion("elsewhere"))) as elsewhere:
        moved = http_reply(b"", "text/plain", "307 Temporary Redirect",
                           {"Location": f"{elsewhere}/v1/chat/completions"})
        with hostile_server(moved) as url, pytest.raises(ModelAccessRefused, match="redirected to another origin"):
            ask(url, transport)


def test_a_retry_after_longer_than_the_client_waits_is_said_truthfully():
    throttled = http_reply(b'{"error": {"message": "slow down"}}', status="429 Too Many Requests",
                           headers={"Retry-After": "999999"})
    with hostile_server(throttled) as url, pytest.raises(ModelOverloaded) as caught:
        model = OpenAIModel("m", base_url=f"{url}/v1", max_retries=4)
        run_sync(model.acomplete(ChatRequest.build("m", "hi")))
    assert "after 1 attempt;" in str(caught.value) and "Retry-After 999999" in str(caught.value)
