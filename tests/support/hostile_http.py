"""A hostile HTTP server on 127.0.0.1 for the tests of waits and sizes: it answers every request with one scripted
reply, sent at once or dripped a byte at a time (headers and body alike), so a client's deadline can be seen to
hold however the bytes arrive."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


def http_reply(body: bytes, content_type: str = "application/json", status: str = "200 OK",
               headers: dict[str, str] | None = None, length: int | None = None) -> bytes:
    """The bytes of one HTTP/1.1 response whose Content-Length is ``length`` (default: the body's)."""
    lines = [f"HTTP/1.1 {status}", f"Content-Type: {content_type}",
             f"Content-Length: {len(body) if length is None else length}", "Connection: close",
             *(f"{name}: {value}" for name, value in (headers or {}).items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def request_path(conn: socket.socket) -> str:
    """Read one request (head and body) from ``conn``; its path (``/`` when the request was cut)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    first = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
    return first[1] if len(first) > 1 else "/"


@contextmanager
def scripted_server(respond: Callable[[str, socket.socket], None]) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of a server calling ``respond(path, connection)`` for every request, each in its
    own thread (a client giving up is what the tests want: its ``OSError`` is ignored)."""
    listener = socket.create_server(("127.0.0.1", 0))

    def answer(conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            respond(request_path(conn), conn)

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() above
        listener.close()


def dripping(reply: bytes, drip_from: int, interval_s: float) -> Callable[[str, socket.socket], None]:
    """A responder sending the first ``drip_from`` bytes of ``reply`` at once, then one byte every ``interval_s``."""

    def respond(path: str, conn: socket.socket) -> None:
        conn.sendall(reply[:drip_from])
        for index in range(drip_from, len(reply)):
            conn.sendall(reply[index:index + 1])
            time.sleep(interval_s)

    return respond


def hostile_server(reply: bytes, drip_from: int | None = None,
                   interval_s: float = 0.2) -> contextlib.AbstractContextManager[str]:
    """``http://127.0.0.1:PORT`` of a server answering every request with ``reply``: its first ``drip_from``
    bytes at once (all of it when ``None``), then one byte every ``interval_s``."""
    return scripted_server(dripping(reply, len(reply) if drip_from is None else drip_from, interval_s))
