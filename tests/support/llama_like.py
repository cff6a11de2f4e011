"""A server on 127.0.0.1 shaped like llama.cpp's (llama-cpp-python's and llama-server's), for the client's side of
what a real llama.cpp server does: ``/v1/models`` lists one alias without vLLM's ``root``, chat completions answer
*any* model name, ``/props`` describes the server (or is missing, as on llama-cpp-python), and a reply can be
dripped forever (a server that runs past ``max_tokens``). Every request body is kept, so a test sees the wire."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class LlamaLike:
    """What the server answers.

    - ``alias``: the one name ``/v1/models`` lists (``--model_alias``).
    - ``props``: the ``GET /props`` object; ``None``: 404, as llama-cpp-python's server answers.
    - ``reply``: the text of every completion.
    - ``usage_extra``: fields added to ``usage`` (``prompt_tokens_details``); ``timings``: llama-server's
      ``timings`` object, when given.
    - ``drip``: answer completions with headers and then a byte every 0.05 s, forever (until the client closes).
    - ``delay_s``: the time each completion takes (the most completions under way at once is kept).
    """

    alias: str = "smollm2-135m"
    props: dict[str, Any] | None = None
    reply: str = "SELECT ?x WHERE { ?x ?p ?o }"
    usage_extra: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, Any] | None = None
    drip: bool = False
    delay_s: float = 0.0
    most_at_once: int = 0
    """The most completions under way at once."""
    requests: list[dict[str, Any]] = field(default_factory=list)
    """The JSON bodies of the completions asked for, in order."""
    asked_at: list[float] = field(default_factory=list)
    """``time.monotonic()`` when each completion was asked for."""
    closed_at: list[float] = field(default_factory=list)
    """``time.monotonic()`` when the client closed a dripped reply's connection."""
    _under_way: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The completion of ``body``, after ``delay_s``, counting the completions under way."""
        with self._lock:
            self._under_way += 1
            self.most_at_once = max(self.most_at_once, self._under_way)
        time.sleep(self.delay_s)
        with self._lock:
            self._under_way -= 1
        return self.completion(body)

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        usage = {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28, **self.usage_extra}
        answer = {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body.get("model"),
                  "choices": [{"index": 0, "message": {"role": "assistant", "content": self.reply},
                               "finish_reason": "stop"}], "usage": usage}
        return {**answer, "timings": self.timings} if self.timings is not None else answer


def _handler(server: LlamaLike) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _json(self, status: int, document: Any) -> None:
            data = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/v1/models":
                self._json(200, {"object": "list", "data": [{"id": server.alias, "object": "model",
                                                             "owned_by": "me", "permissions": []}]})
            elif self.path == "/props" and server.props is not None:
                self._json(200, server.props)
            else:
                self._json(404, {"detail": "Not Found"})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            server.requests.append(body)
            server.asked_at.append(time.monotonic())
            if not server.drip:
                self._json(200, server.answer(body))
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(10**9))
            self.end_headers()
            try:
                while True:
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.05)
            except OSError:
                server.closed_at.append(time.monotonic())

    return Handler


@contextlib.contextmanager
def serve_llama_like(server: LlamaLike) -> Iterator[str]:
    """``http://127.0.0.1:PORT/v1`` of ``server`` while the block runs."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()
