"""The project's server behaves like vLLM where it matters to a client, and the client records
what happened: context-length 400 -> ContextOverflow, reasoning returned apart, 429/503 with Retry-After retried
and counted."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from sparqlab.llm import ContextOverflow, ModelUnavailable, OpenAIModel
from sparqlab.llm.replies import reply_outcome
from sparqlab.llm.standins import LatencyStandin, ReasoningStandin
from sparqlab.serving.model_server import Limits, serve_in_background

LONG = " ".join(f"word{i}" for i in range(80))


def test_context_length_is_reported_and_a_longer_prompt_is_a_context_overflow():
    with serve_in_background("standin-echo", limits=Limits(max_model_len=40)) as url:
        card = httpx.get(f"{url}/models").json()["data"][0]
        assert card["max_model_len"] == 40
        raw = httpx.post(f"{url}/chat/completions", json={"model": "standin-echo",
                                                          "messages": [{"role": "user", "content": LONG}]})
        assert raw.status_code == 400 and "maximum context length is 40 tokens" in raw.json()["error"]["message"]
        model = OpenAIModel("standin-echo", base_url=url, max_retries=2)
        with pytest.raises(ContextOverflow) as caught:
            model.chat_sync(LONG)
        assert caught.value.kind == "context_overflow"
        with pytest.raises(ContextOverflow):  # prompt fits, prompt + max_tokens does not
            model.chat_sync("a short question", max_tokens=39)
        # without max_tokens the rest of the context is the budget, as on vLLM
        cut = model.chat_sync(" ".join(["w"] * 30))
        assert cut.finish_reason == "length" and cut.text.split() == ["w"] * 10
        assert asyncio.run(model.served_identity())["max_model_len"] == 40


def test_reasoning_comes_back_apart_and_a_spent_budget_is_reasoning_exhausted():
    with serve_in_background(ReasoningStandin(reasoning_tokens=20)) as url:
        model = OpenAIModel("standin-reasoning", base_url=url)
        full = model.chat_sync("Who directed Alien?", max_tokens=100)
        assert full.text == "Who directed Alien?" and full.reasoning.split() == ["hm"] * 20
        assert full.finish_reason == "stop" and reply_outcome(full.text, full.finish_reason, full.reasoning) is None
        spent = model.chat_sync("Who directed Alien?", max_tokens=15)
        assert spent.text == "" and spent.finish_reason == "length" and len(spent.reasoning.split()) == 15
        assert reply_outcome(spent.text, spent.finish_reason, spent.reasoning) == "reasoning_exhausted"
        low = model.chat_sync("Who directed Alien?", max_tokens=15, reasoning_effort="low")
        assert low.text == "Who directed Alien?" and len(low.reasoning.split()) == 5


@pytest.mark.parametrize("status", [429, 503])
def test_overload_answers_with_retry_after_and_the_client_retries_and_counts(status):
    slow = LatencyStandin(delay_ms=400, name="standin-echo")
    with serve_in_background(slow, limits=Limits(max_in_flight=1, overload_status=status, retry_after_s=1)) as url:
        async def two_at_once(retries: int):
            model = OpenAIModel("standin-echo", base_url=url, max_retries=retries)
            try:
                return await asyncio.gather(model.chat("first"), model.chat("second"), return_exceptions=True)
            finally:
                await model.aclose()

        first, second = asyncio.run(two_at_once(retries=3))
        assert {first.text, second.text} == {"first", "second"}
        assert sorted([first.retries, second.retries]) == [0, 1]
        refused = asyncio.run(two_at_once(retries=0))
        assert sum(isinstance(r, ModelUnavailable) for r in refused) == 1

        async def raw_pair():
            async with httpx.AsyncClient() as client:
                body = {"model": "standin-echo", "messages": [{"role": "user", "content": "x"}]}
                return await asyncio.gather(client.post(f"{url}/chat/completions", json=body),
                                            client.post(f"{url}/chat/completions", json=body))

        raw = [r for r in asyncio.run(raw_pair()) if r.status_code != 200]
        assert len(raw) == 1 and raw[0].status_code == status and raw[0].headers["retry-after"] == "1"


def test_a_run_stopped_by_an_overloaded_endpoint_says_max_retries_exists(capsys, tmp_path, monkeypatch):
    """The abort names the knob that helps (the client's retries) rather than "check that the server runs": the
    server runs, it refuses (503 + Retry-After) while busy."""
    from sparqlab.cli import main

    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    slow = LatencyStandin(delay_ms=300, inner="standin-keyword-rules", name="standin-keyword-rules")
    with serve_in_background(slow, limits=Limits(max_in_flight=1, overload_status=503, retry_after_s=1)) as url:
        code = main(["run", "direct", "--dataset", "metaqa-1hop", "--limit", "6", "-c", "6", "--cache", "off",
                     "-m", "standin-keyword-rules", "--model-url", url, "--model-options", "max_retries=0"])
    err = capsys.readouterr().err
    assert code == 1 and "kept failing with HTTP 503" in err
    assert "max_retries" in err and "--model-options max_retries=" in err and "check that the server runs" not in err


@pytest.mark.parametrize(("field", "value"), [("max_tokens", 10**100), ("max_completion_tokens", 10**100),
                                              ("seed", 10**100), ("seed", -(10**100)), ("max_tokens", 2**21)])
def test_absurd_integers_are_refused_with_a_400(field, value):
    with serve_in_background("standin-echo") as url:
        body = {"model": "standin-echo", "messages": [{"role": "user", "content": "x"}], field: value}
        response = httpx.post(f"{url}/chat/completions", json=body, timeout=30)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == field and f"'{field}' must be an integer" in error["message"]
    assert len(error["message"]) < 200, "the number is not echoed in full"
