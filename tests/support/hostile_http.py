"""A hostile HTTP server on 127.0.0.1 for the tests of waits and sizes: it answers every request with one scripted
reply, sent at once or dripped a byte at a time (headers and body alike), so a client's deadline can be seen to
hold however the bytes arrive."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


def http_reply(body: bytes, content_type: str = "application/json", status: str = "200 OK",
               headers: dict[str, str] | None = None) -> bytes:
    """The bytes of one HTTP/1.1 response with a Content-Length."""
    lines = [f"HTTP/1.1 {status}", f"Content-Type: {content_type}", f"Content-Length: {len(body)}",
             "Connection: close", *(f"{name}: {value}" for name, value in (headers or {}).items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def _read_request(conn: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return
        body += chunk


def _answer(conn: socket.socket, reply: bytes, drip_from: int, interval_s: float) -> None:
    with conn:
        try:
            _read_request(conn)
            conn.sendall(reply[:drip_from])
            for index in range(drip_from, len(reply)):
                conn.sendall(reply[index:index + 1])
                time.sleep(interval_s)
        except OSError:  # the client gave up: what the tests want
            pass


@contextmanager
def hostile_server(reply: bytes, drip_from: int | None = None, interval_s: float = 0.2) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of a server answering every request with ``reply``: its first ``drip_from``
    bytes at once (all of it when ``None``), then one byte every ``interval_s``."""
    listener = socket.create_server(("127.0.0.1", 0))
    drip = len(reply) if drip_from is None else drip_from

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=_answer, args=(conn, reply, drip, interval_s), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() above
        listener.close()
