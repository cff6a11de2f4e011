"""`sparqlab serve` fit to be exposed: requests are refused clearly (401 without the token, 413 over the size
limit, 422 for an empty, blank or too long question, 503 + Retry-After when the queue is full), a request's time
counts from its arrival, the API description is off by default, idle and half-sent connections are closed and
open connections are bounded; served records say "no gold"."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import pytest

from sparqlab.platform.base import Method, MethodOutput
from sparqlab.text2sparql.ck25_questions import DATASET_IRI


class Sleepy(Method):
    """Waits ``delay_s`` (an asyncio sleep, as a model call would), then answers with a fixed query."""

    name = "test-sleepy"
    roles = ()
    needs_model = False
    delay_s = 0.0

    async def answer(self, question, ctx):
        await asyncio.sleep(self.delay_s)
        return MethodOutput("SELECT ?x WHERE { ?x a pv:Department }")


def _sleepy(delay_s: float) -> Sleepy:
    method = Sleepy()
    method.delay_s = delay_s
    return method


@pytest.fixture(autouse=True)
def _ck25(ck25_cache):
    """Every test serves over the project's CK25 store (linked into the test's cache)."""


def _served(tmp_path, method=None, settings=None, **run):
    from sparqlab.runs import RunConfig
    from sparqlab.text2sparql.endpoint import ServedRun

    config = RunConfig(**{"experiment": "serve", "kg": "ck25", "output_root": tmp_path, "cache": "off",
                          "progress": False, "concurrency": 2, **run})
    return ServedRun(method or _sleepy(0.0), config, **({"settings": settings} if settings else {}))


@contextlib.contextmanager
def _client(served):
    from fastapi.testclient import TestClient

    from sparqlab.text2sparql.endpoint import create_app

    with TestClient(create_app(served)) as client:
        yield client


def _ask(client, question="Which departments are there?", **headers):
    return client.get("/", params={"question": question, "dataset": DATASET_IRI}, headers=headers)


def _records(served):
    return [json.loads(line) for line in (served.run_dir / "predictions.jsonl").read_text().split("\n") if line]


# -- refusals of the application ------------------------------------------------------------------------------


def test_blank_and_too_long_questions_are_422(tmp_path):
    with _client(_served(tmp_path / "default")) as client:
        for blank in (" ", "\t\n  ", "\u3000"):
            response = _ask(client, blank)
            assert response.status_code == 422 and "empty" in response.json()["detail"]
    from sparqlab.text2sparql.endpoint import ServeSettings

    with _client(_served(tmp_path, settings=ServeSettings(max_question_chars=100))) as client:
        response = _ask(client, "x" * 101)
        assert response.status_code == 422 and "over the limit of 100" in response.json()["detail"]
        assert _ask(client, "x" * 100).status_code == 200


def test_a_declared_body_over_the_limit_is_413(tmp_path):
    """The request line and headers are bounded by the connection layer; a body is bounded by its declared
    length, refused before any of it is read."""
    from sparqlab.text2sparql.endpoint import ServeSettings

    with _client(_served(tmp_path, settings=ServeSettings(max_request_bytes=4096))) as client:
        params = {"question": "Which departments are there?", "dataset": DATASET_IRI}
        refused = client.request("GET", "/", params=params, content=b"x" * 5000)
        assert refused.status_code == 413 and "4,096 bytes" in refused.json()["detail"]
        assert client.request("GET", "/", params=params, content=b"x" * 100).status_code == 200


@pytest.mark.parametrize(("setting", "value", "message"), [
    ("queue_size", -1, "queue_size must be >= 0"), ("retry_after_s", 0, "retry_after_s must be >= 1"),
    ("max_question_chars", 0, "max_question_chars must be >= 1"),
    ("max_request_bytes", 100, "max_request_bytes must be >= 256"),
    ("max_connections", 0, "max_connections must be >= 1"), ("read_timeout_s", 0, "read_timeout_s must be > 0"),
    ("keep_alive_s", -1.0, "keep_alive_s must be > 0"), ("port", 70000, "port must be a port number"),
    ("queue_size", "many", "queue_size"), ("docs", "sometimes", "docs"),
])
def test_impossible_endpoint_settings_are_refused_naming_the_setting(setting, value, message):
    from sparqlab.text2sparql.endpoint import ServeSettings

    with pytest.raises(ValueError, match=message):
        ServeSettings(**{setting: value})


def test_served_records_say_no_gold(tmp_path):
    served = _served(tmp_path)
    with _client(served) as client:
        assert _ask(client).status_code == 200
    (record,) = _records(served)
    assert record["error_type"] == "no_gold" and record["f1"] is None and record["gold_source"] is None


def test_the_token_is_required_when_set(tmp_path, monkeypatch):
    from sparqlab.text2sparql.endpoint import TOKEN_ENV, ServeSettings

    monkeypatch.setenv(TOKEN_ENV, "from-the-environment")
    for settings, token in ((ServeSettings(token="s3cret"), "s3cret"), (ServeSettings(), "from-the-environment")):
        served = _served(tmp_path / token, settings=settings)
        with _client(served) as client:
            refused = _ask(client)
            assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
            assert _ask(client, Authorization="Bearer wrong").status_code == 401
            assert _ask(client, Authorization=f"Bearer {token}").status_code == 200
            assert client.get("/docs").status_code == 401
        recorded = json.loads((served.run_dir / "config.json").read_text())["served"]["settings"]
        assert recorded["token"] is True and token not in json.dumps(recorded)


def test_the_api_description_is_off_unless_asked_for(tmp_path):
    with _client(_served(tmp_path / "default")) as client:
        assert client.get("/docs").status_code == 404 and client.get("/openapi.json").status_code == 404
    from sparqlab.text2sparql.endpoint import ServeSettings

    with _client(_served(tmp_path / "docs", settings=ServeSettings(docs=True))) as client:
        assert client.get("/docs").status_code == 200 and client.get("/openapi.json").status_code == 200


def test_a_full_queue_is_503_with_retry_after(tmp_path):
    from sparqlab.text2sparql.endpoint import ServeSettings

    served = _served(tmp_path, _sleepy(1.0), ServeSettings(queue_size=1, retry_after_s=7), concurrency=1)
    with _client(served) as client, ThreadPoolExecutor(max_workers=4) as pool:
        responses = list(pool.map(lambda n: _ask(client, f"question {n}"), range(4)))
    busy = [r for r in responses if r.status_code == 503]
    # the wait for a slot it suggests: two requests ahead of one slot, about a second each; never over 7 s
    assert len(busy) == 2 and all(1 <= int(r.headers["retry-after"]) <= 7 for r in busy)
    assert all("busy" in r.json()["detail"] for r in busy)
    assert sum(r.status_code == 200 for r in responses) == 2 and len(_records(served)) == 2


def test_the_question_timeout_counts_from_arrival(tmp_path):
    """One slot, 0.6 s per question, a 1 s limit: the first request is answered, the ones behind it run out of
    time while they wait (or right after) and are recorded as question_timeout, answered with an empty query."""
    served = _served(tmp_path, _sleepy(0.6), concurrency=1, question_timeout_s=1.0)
    with _client(served) as client, ThreadPoolExecutor(max_workers=4) as pool:
        responses = list(pool.map(lambda n: _ask(client, f"question {n}"), range(4)))
    assert all(r.status_code == 200 for r in responses)
    records = _records(served)
    timed_out = [r for r in records if r["error_category"] == "question_timeout"]
    assert len(records) == 4 and len(timed_out) >= 2
    assert {r.json()["query"] for r in responses if r.json()["question"] in {t["question"] for t in timed_out}} \
        == {""}


def test_binding_another_address_without_a_token_warns(tmp_path, monkeypatch):
    from sparqlab.text2sparql import endpoint as serving

    class Stop(Exception):
        pass

    def no_socket(*_args):
        raise Stop  # the warning comes before anything is bound

    monkeypatch.setattr(serving, "listen_socket", no_socket)
    monkeypatch.delenv(serving.TOKEN_ENV, raising=False)
    for host, warns in (("0.0.0.0", True), ("::", True), ("192.0.2.7", True), ("127.0.0.1", False),
                        ("localhost", False), ("::1", False)):
        with pytest.warns(serving.ExposedWithoutTokenWarning) if warns else contextlib.nullcontext(), \
                pytest.raises(Stop):
            serving.serve(_served(tmp_path, settings=serving.ServeSettings(host=host, port=0)))
    with warnings.catch_warnings():  # with a token: no warning (it would be raised here)
        warnings.simplefilter("error", serving.ExposedWithoutTokenWarning)
        with pytest.raises(Stop):
            serving.serve(_served(tmp_path, settings=serving.ServeSettings(host="0.0.0.0", token="t", port=0)))


# -- the connection layer --------------------------------------------------------------------------------------


@contextlib.contextmanager
def _listening(served):
    """The served method on a real uvicorn server (its connection layer included) on 127.0.0.1; yields the
    port."""
    from sparqlab.serving.guard import guarded_server, listen_socket
    from sparqlab.text2sparql.endpoint import create_app

    settings = served.settings
    server = guarded_server(create_app(served), settings.connection_limits())
    sock = listen_socket("127.0.0.1", 0)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started and time.monotonic() < deadline and thread.is_alive():
        time.sleep(0.02)
    assert server.started, "the server did not start"
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def _closed_by_server(conn: socket.socket, within_s: float = 20.0) -> bool:
    """Whether the server closes ``conn`` (EOF or reset) within ``within_s`` — a bound on the test, not a
    measured time."""
    conn.settimeout(within_s)
    try:
        while conn.recv(4096):
            pass
        return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def _get(port: int, target: str, timeout_s: float = 30.0, attempts: int = 1) -> tuple[int, bytes]:
    """A GET on a connection of its own: status and body. With ``attempts`` > 1, a 503 is retried after its
    ``Retry-After``, as a well-behaved client does."""
    for attempt in range(attempts):
        with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as conn:
            conn.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while chunk := conn.recv(65536):
                data += chunk
        head, body = data.split(b"\r\n\r\n", 1)
        status = int(head.split(b" ", 2)[1])
        if status != 503 or attempt == attempts - 1:
            return status, body
        wait = [line.split(b":", 1)[1] for line in head.split(b"\r\n") if line.lower().startswith(b"retry-after")]
        time.sleep(float(wait[0]) if wait else 1.0)
    raise AssertionError("unreachable")


def _target(question: str) -> str:
    from urllib.parse import urlencode

    return "/?" + urlencode({"question": question, "dataset": DATASET_IRI})


def test_connections_are_closed_once_idle_after_an_answer(tmp_path):
    """uvicorn's ``timeout_keep_alive``; the endpoint reads no body, so one that stalls does not hold its
    answer (a stalled body the application waits for is a 408: ``test_model_output_attacks.py``). A connection
    idle before its first request, or stalled in its headers, is uvicorn's to keep: a reverse proxy's timeouts
    close it (docs/security.md)."""
    from sparqlab.text2sparql.endpoint import ServeSettings

    with _listening(_served(tmp_path, settings=ServeSettings(keep_alive_s=0.5))) as port:
        stalled = socket.create_connection(("127.0.0.1", port))
        stalled.sendall(f"GET {_target('Who')} HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{{".encode())
        kept = socket.create_connection(("127.0.0.1", port))
        kept.sendall(f"GET {_target('and then idle')} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        for conn in (stalled, kept):
            conn.settimeout(20)
            assert conn.recv(4096).startswith(b"HTTP/1.1 200 ")
            assert _closed_by_server(conn), "closed after keep_alive_s idle"
        assert _get(port, _target("still answering?"))[0] == 200
        for conn in (stalled, kept):
            conn.close()


def test_a_request_over_the_size_limit_is_413(tmp_path):
    from sparqlab.text2sparql.endpoint import ServeSettings

    with _listening(_served(tmp_path, settings=ServeSettings(max_request_bytes=4096))) as port:
        status, body = _get(port, _target("x" * 5000))
        assert status == 413 and b"4,096 bytes" in body
        assert _get(port, _target("x" * 1000))[0] == 200


def test_open_connections_are_bounded(tmp_path):
    from sparqlab.text2sparql.endpoint import ServeSettings

    with _listening(_served(tmp_path, settings=ServeSettings(max_connections=8))) as port:
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(8)]
        time.sleep(0.5)  # accepted by the server
        # uvicorn's limit_concurrency counts the idle ones: a request beyond them is a 503 (a reverse proxy in
        # front closes idle connections; docs/security.md)
        assert _get(port, _target("one too many"))[0] == 503
        for conn in idle[:2]:
            conn.close()
        time.sleep(0.5)
        assert _get(port, _target("room again"))[0] == 200
        for conn in idle:
            conn.close()
