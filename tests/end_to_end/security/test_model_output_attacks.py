"""Hostile HTTP clients against the model server, and hostile model output through the server and a run."""

from __future__ import annotations

import socket

import httpx
import pytest

from sparqlab.llm.base import ChatModel, ChatRequest, ChatResponse
from sparqlab.serving.model_server import MAX_BODY_BYTES, serve_in_background

SURROGATE_JSON = b'{"model": "standin-echo", "messages": [{"role": "user", "content": "a\\ud800b"}]}'


@pytest.fixture(scope="module")
def server():
    with serve_in_background("standin-echo", read_timeout_s=1.0) as url:
        yield url


def _openai_error(reply: httpx.Response, status: int) -> dict:
    assert reply.status_code == status, reply.text
    error = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["message"]
    return error


def test_deeply_nested_json_is_a_400(server):
    body = b'{"model": "standin-echo", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    error = _openai_error(httpx.post(f"{server}/chat/completions", content=body), 400)
    assert "nested" in error["message"]


def test_a_lone_surrogate_in_a_request_is_a_400(server):
    error = _openai_error(httpx.post(f"{server}/chat/completions", content=SURROGATE_JSON), 400)
    assert "messages[0].content" in error["message"] and "surrogate" in error["message"]


def test_bytes_that_are_not_utf8_are_a_400(server):
    body = b'{"model": "standin-echo", "messages": [{"role": "user", "content": "\xff\xfe"}]}'
    _openai_error(httpx.post(f"{server}/chat/completions", content=body), 400)


@pytest.mark.parametrize(("method", "path", "status", "code"), [
    ("GET", "/nowhere", 404, "not_found"),
    ("POST", "/v1/embeddings", 404, "not_found"),
    ("GET", "/v1/chat/completions", 405, "method_not_allowed"),
    ("DELETE", "/v1/models", 405, "method_not_allowed"),
])
def test_every_route_answers_openai_shaped_errors(server, method, path, status, code):
    root = server.removesuffix("/v1")
    error = _openai_error(httpx.request(method, root + path), status)
    assert error["code"] == code


def test_a_declared_oversized_body_is_refused_before_it_is_read(server):
    with socket.create_connection(_address(server), timeout=30) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100000000\r\n\r\n{")
        head = sock.recv(65536)
    assert head.startswith(b"HTTP/1.1 413")


def test_a_streamed_oversized_body_is_refused(server):
    def chunks():
        for _ in range(MAX_BODY_BYTES // 2**20 + 2):
            yield b" " * 2**20

    _openai_error(httpx.post(f"{server}/chat/completions", content=chunks()), 413)


def test_a_stalled_body_is_408_and_its_connection_closed(server):
    """The server (read timeout 1 s) answers 408 and closes a connection whose body stalls; the 30 s socket
    timeout only guards the test from hanging if it never does. A connection idle or stalled in its headers is
    uvicorn's to keep (a reverse proxy's timeouts close it; docs/security.md)."""
    with socket.create_connection(_address(server), timeout=30) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{")
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    assert received.startswith(b"HTTP/1.1 408 ") and b"within 1 s" in received


def test_a_slow_model_is_not_cut_by_the_read_timeout():
    from sparqlab.llm import OpenAIModel

    with serve_in_background("standin-latency", delay_ms=1500, read_timeout_s=0.5) as url:
        model = OpenAIModel("standin-latency", base_url=url, max_retries=0)
        assert model.chat_sync("still here").text == "still here"


def _address(url: str) -> tuple[str, int]:
    host_port = url.split("//", 1)[1].split("/", 1)[0]
    host, port = host_port.rsplit(":", 1)
    return host, int(port)


class SurrogateModel(ChatModel):
    """A model whose output holds a lone surrogate, as a real one can (decoded from "\\ud800" in JSON)."""

    name = "standin-surrogate"
    is_standin = True

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse("SELECT ?x WHERE { ?x ?p \"\ud800\" } \ud83d")


def test_model_output_with_a_surrogate_is_served_not_a_500():
    with serve_in_background(SurrogateModel()) as url:
        reply = httpx.post(f"{url}/chat/completions",
                           json={"model": "standin-surrogate", "messages": [{"role": "user", "content": "q"}]})
    assert reply.status_code == 200
    assert "\ufffd" in reply.json()["choices"][0]["message"]["content"]


def test_a_run_survives_model_output_with_a_surrogate(movie_cache):
    """A lone surrogate aborted the run in RunStore.append, writing nothing, on every rerun."""
    from sparqlab.data.question import Question
    from sparqlab.methods import get_method
    from sparqlab.runs import RunConfig, run
    from sparqlab.runs.results import load_predictions

    questions = [Question(f"q{i}", f"question {i}", gold_answers=["x"], kg="movies") for i in range(3)]
    config = RunConfig(experiment="surrogate", kg="movies", model="standin-surrogate", progress=False)
    first = run(get_method("direct")(), questions, config, model=SurrogateModel())
    assert first.answered == 3 and first.metrics["n_done"] == 3
    again = run(get_method("direct")(), questions, config, model=SurrogateModel())
    assert again.answered == 0
    assert len(load_predictions(first.run_dir)) == 3
