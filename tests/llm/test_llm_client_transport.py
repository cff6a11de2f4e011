"""OpenAIModel's request path: the SDK's low-level ``post`` with a plain body, the reply read
from its JSON, on either HTTP transport under the SDK, with the same replies, errors, retries and usage as the
typed ``chat.completions.create`` path it replaced."""

import asyncio
import gc
import json
import socket
import ssl
import threading
import warnings

import httpx2
import openai
import pytest

from sparqlab.core.errors import InfrastructureError
from sparqlab.core.http import tls_context
from sparqlab.llm import ChatRequest, ModelUnavailable, OpenAIModel, Usage, estimate_tokens, get_model
from sparqlab.llm.errors import ModelReplyInvalid, ModelRequestError
from sparqlab.llm.openai_backend import HTTP_TRANSPORTS, completion_response, request_body
from sparqlab.llm.standins import LatencyStandin, ReasoningStandin
from sparqlab.serving.model_server import serve_in_background

TRANSPORTS = sorted(HTTP_TRANSPORTS)


def sdk_body(request: ChatRequest) -> dict:
    """The JSON body ``chat.completions.create`` sends when given the typed fields of ``request_body(request)`` as
    its parameters and ``extra`` as ``extra_body`` (as the replaced path called it), captured by an HTTPX2 mock
    transport: equal bodies mean the SDK's parameter transform changed nothing the plain body skips."""
    sent = []

    def answer(raw: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(raw.content))
        return httpx2.Response(200, json={"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                          "choices": [{"index": 0, "finish_reason": "stop",
                                                       "message": {"role": "assistant", "content": "ok"}}]})

    extra = dict(request.extra)
    params = {key: value for key, value in request_body(request).items() if key not in extra}
    if extra:
        params["extra_body"] = extra

    async def create():
        async with openai.AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="k",
                                      http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(answer))) as sdk:
            await sdk.chat.completions.create(**params)

    asyncio.run(create())
    return sent[0]


@pytest.mark.parametrize("request_", [
    ChatRequest.build("m", "q"),
    ChatRequest.build("m", [{"role": "system", "content": "s"}, {"role": "user", "content": "é ✓ \u2028"}],
                      temperature=0.7, top_p=0.5, max_tokens=33, stop=["END", "\n\n"], seed=11,
                      reasoning_effort="low", extra={"top_k": 5, "chat_template_kwargs": {"thinking": False}}),
], ids=["defaults", "every-parameter"])
def test_the_body_is_what_chat_completions_create_sent(request_):
    assert request_body(request_) == sdk_body(request_)


def reply(**fields) -> bytes:
    message = {"role": "assistant", "content": "SELECT 1", **fields.pop("message", {})}
    body = {"id": "c", "object": "chat.completion", "created": 0, "model": "served-name",
            "choices": [{"index": 0, "message": message, "finish_reason": "length"}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}}
    body.update(fields)
    return json.dumps(body).encode()


REQUEST = ChatRequest.build("asked-name", "one two three")


def test_a_completion_is_read_field_by_field():
    response = completion_response(reply(), REQUEST, 0.25, 2, "http://h/v1")
    assert (response.text, response.finish_reason, response.model) == ("SELECT 1", "length", "served-name")
    assert (response.usage, response.latency_s, response.retries, response.reasoning) == (Usage(7, 3), 0.25, 2, None)


def test_reasoning_under_either_of_vllms_names():
    assert completion_response(reply(message={"reasoning": "because"}), REQUEST, 0, 0, "u").reasoning == "because"
    older = completion_response(reply(message={"reasoning_content": "since"}), REQUEST, 0, 0, "u")
    assert older.reasoning == "since"


def test_missing_optional_fields_get_the_same_defaults_as_before():
    bare = json.dumps({"choices": [{"message": {"role": "assistant", "content": None}}]}).encode()
    response = completion_response(bare, REQUEST, 0, 0, "u")
    assert (response.text, response.finish_reason, response.model) == ("", "stop", "asked-name")
    assert response.usage == Usage.estimate(REQUEST, "") and response.usage.estimated
    partial = completion_response(reply(usage={"prompt_tokens": 4}), REQUEST, 0, 0, "u")
    assert partial.usage == Usage(4, 0) and not partial.usage.estimated


@pytest.mark.parametrize("body, says", [
    (b"<html>502 Bad Gateway</html>", "the server said '<html>502 Bad Gateway</html>'"),
    (b"\xff\xfe", "not a completion"),
    (b"[1, 2]", "JSON list, not an object"),
    (json.dumps({"choices": []}).encode(), "has no choices"),
    (json.dumps({"error": {"message": "CUDA out of memory", "code": 500}}).encode(),
     "the server said 'CUDA out of memory'"),
    (json.dumps({"detail": "upstream died"}).encode(), "the server said 'upstream died'"),
    (json.dumps({"choices": ["text"]}).encode(), "message is not an object"),
    (reply(message={"content": ["parts"]}), "message.content is list"),
    (reply(usage={"prompt_tokens": "7"}), "usage.prompt_tokens is str"),
    (reply(usage={"prompt_tokens": True}), "usage.prompt_tokens is bool"),
    (reply(usage={"prompt_tokens": -5}), "usage.prompt_tokens is -5, not a token count"),
    (reply(usage={"completion_tokens": 10**400}), "usage.completion_tokens is a 401-digit number"),
    (b'{"choices": [], "usage": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
])
def test_a_body_that_is_not_a_completion_stops_the_run_quoting_the_server(body, says):
    with pytest.raises(ModelReplyInvalid) as caught:
        completion_response(body, REQUEST, 0, 0, "http://h/v1")
    assert says in str(caught.value) and "http://h/v1/chat/completions" in str(caught.value)
    assert isinstance(caught.value, InfrastructureError)  # never a question's answer


def test_a_lone_surrogate_in_the_reply_becomes_a_replacement_character():
    body = b'{"choices": [{"message": {"content": "a\\ud800b"}}]}'
    assert completion_response(body, REQUEST, 0, 0, "u").text == "a\ufffdb"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_replies_usage_and_reasoning_over_either_transport(transport):
    with serve_in_background(ReasoningStandin(reasoning_tokens=4)) as url:
        model = OpenAIModel("standin-reasoning", base_url=url, http_transport=transport)
        response = model.chat_sync("Who directed Alien?", max_tokens=50, reasoning_effort="high")
    assert response.text == "Who directed Alien?" and response.reasoning == " ".join(["hm"] * 16)
    question_tokens = estimate_tokens("Who directed Alien?")  # what the stand-in counts, reported by the server
    # the server's first request: nothing of it was in its prefix cache
    assert response.usage == Usage(question_tokens, 16 + question_tokens, cached_tokens=0)
    assert response.model == "standin-reasoning" and response.retries == 0 and response.latency_s > 0
    assert model.describe()["http_transport"] == transport


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_refused_connection_is_unreachable_not_a_timeout(transport, dead_url):
    model = OpenAIModel("standin-echo", base_url=dead_url, max_retries=0, http_transport=transport)
    with pytest.raises(ModelUnavailable) as caught:
        model.chat_sync("hi")
    assert "cannot reach the model endpoint" in str(caught.value) and "did not answer" not in str(caught.value)


@pytest.fixture
def hanging_up_url():
    """A 127.0.0.1 URL whose server accepts each connection, reads the request and closes without answering."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(65536)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    stop.set()
    thread.join(timeout=5)
    listener.close()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_server_that_hangs_up_is_unreachable_after_the_retries(transport, hanging_up_url, monkeypatch):
    monkeypatch.setattr(openai._base_client, "INITIAL_RETRY_DELAY", 0.01)
    model = OpenAIModel("standin-echo", base_url=hanging_up_url, max_retries=1, http_transport=transport)
    with pytest.raises(ModelUnavailable) as caught:
        model.chat_sync("hi")
    assert "cannot reach the model endpoint" in str(caught.value)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_slow_server_is_a_timeout(transport):
    with serve_in_background(LatencyStandin(delay_ms=3000, name="standin-echo")) as url:
        model = OpenAIModel("standin-echo", base_url=url, max_retries=0, timeout_s=0.3, http_transport=transport)
        with pytest.raises(ModelUnavailable) as caught:
            model.chat_sync("hi")
    assert "did not answer within 0.3 s" in str(caught.value)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_refused_request_is_not_retried_over_either_transport(transport, echo_server):
    model = OpenAIModel("standin-echo", base_url=echo_server, max_retries=3, http_transport=transport)
    with pytest.raises(ModelRequestError) as caught:
        model.chat_sync("hi", top_p=3.0)
    assert "HTTP 400" in str(caught.value) and "top_p" in str(caught.value)


def test_an_unknown_http_transport_is_refused_by_name(echo_server):
    with pytest.raises(ValueError, match="aiohttp, httpx"):
        OpenAIModel("standin-echo", base_url=echo_server, http_transport="requests")


def test_a_model_spec_chooses_the_transport(echo_server):
    model = get_model({"model": "standin-echo", "base_url": echo_server, "http_transport": "httpx"})
    assert isinstance(model, OpenAIModel) and model.http_transport == "httpx"
    assert get_model("standin-echo", base_url=echo_server).http_transport == "aiohttp"


def test_model_listing_leaves_no_connection_open(echo_server):
    """``check()`` / ``served_identity()`` run before a run, often in a loop of their own: they must not leave a
    client session for the caller to close."""
    model = OpenAIModel("standin-echo", base_url=echo_server)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        asyncio.run(model.check())
        assert asyncio.run(model.served_identity())["id"] == "standin-echo"
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_model_driven_by_asyncio_run_without_aclose_leaves_nothing_open(transport, echo_server, caplog):
    """The loop's shutdown closes the model's client (aiohttp would log "Unclosed client session" otherwise)."""
    model = OpenAIModel("standin-echo", base_url=echo_server, http_transport=transport)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        assert asyncio.run(model.chat("first loop")).text == "first loop"
        assert asyncio.run(model.chat("second loop")).text == "second loop"
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]
    assert "Unclosed" not in caplog.text


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_client_on_each_new_loop_loads_no_ca_certificates(transport, echo_server, monkeypatch):
    """Each event loop gets its own client (a run, a blocking call); they share the process's TLS context, since
    loading the CA certificates cost ~30-60 ms of CPU per client."""
    tls_context()
    loads = []
    load = ssl.SSLContext.load_verify_locations
    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations",
                        lambda context, *args, **kwargs: loads.append(args) or load(context, *args, **kwargs))
    model = OpenAIModel("standin-echo", base_url=echo_server, http_transport=transport)
    assert model.chat_sync("first loop").text == "first loop"
    assert model.chat_sync("second loop").text == "second loop"
    assert loads == []


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_endpoint_learns_nothing_about_the_machine_from_the_headers(transport):
    """The SDK's platform headers (OS, architecture, Python and SDK versions, async library) are not sent; the
    ones the exchange needs are."""
    import http.server

    received = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            received.append({name.lower(): value for name, value in self.headers.items()})
            self.rfile.read(int(self.headers["Content-Length"]))
            choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}
            body = json.dumps({"id": "x", "object": "chat.completion", "model": "m", "choices": [choice]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        model = OpenAIModel("m", base_url=f"http://127.0.0.1:{server.server_port}/v1", http_transport=transport,
                            api_key="secret")
        assert model.chat_sync("hello", max_tokens=1).text == "ok"
    finally:
        server.shutdown()
        server.server_close()
    headers = received[0]
    assert not [name for name in headers if name.startswith("x-stainless") and name not in (
        "x-stainless-retry-count", "x-stainless-read-timeout")], headers
    assert headers["authorization"] == "Bearer secret" and headers["x-stainless-retry-count"] == "0"
    assert headers["content-type"] == "application/json" and headers["user-agent"].startswith("AsyncOpenAI/Python")
