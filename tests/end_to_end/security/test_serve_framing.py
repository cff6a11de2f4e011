"""A request whose framing is ambiguous — both Content-Length and Transfer-Encoding, a folded Transfer-Encoding
included — is answered 400 and its connection closed (RFC 9112 section 6.1), so a request hidden in its body is never
answered (issue 51). A folded line alone is unfolded by h11, the one parser that reads it (no longer refused: the
guard sees requests as ASGI does, after parsing; docs/security.md). The guard (`sparqlab.serving.guard`) serves `sparqlab serve` and `sparqlab serve-model` alike; this
goes through `serve-model`'s stand-in server."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

from sparqlab.serving.model_server import serve_in_background

HIDDEN = b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n"
BOTH = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + HIDDEN)
FOLDED = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          b"Transfer-Encoding:\r\n chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n" + HIDDEN)
AMBIGUOUS = {"Content-Length and Transfer-Encoding": BOTH, "folded Transfer-Encoding": FOLDED}


def exchange(port: int, request: bytes) -> bytes:
    """Everything the server sends back until it closes the connection (a 10 s guard against waiting for ever)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(request)
        received = b""
        while chunk := conn.recv(65536):
            received += chunk
    return received


def test_an_ambiguous_request_is_400_and_closes_the_connection():
    with serve_in_background("standin-echo") as url:
        port = urlsplit(url).port
        for name, request in AMBIGUOUS.items():
            answer = exchange(port, request)
            assert answer.startswith(b"HTTP/1.1 400 ") and answer.count(b"HTTP/1.1 ") == 1, (name, answer[:300])
            assert b"standin-echo" not in answer, name  # the hidden request for the model list was never answered
        # a well-framed request is answered as usual
        assert exchange(port, HIDDEN.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n")).startswith(b"HTTP/1.1 200 ")
