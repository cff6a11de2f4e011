"""Serving an ASGI application on uvicorn for the local case: ``sparqlab serve`` (the TEXT2SPARQL endpoint) and
``sparqlab serve-model`` bind 127.0.0.1 unless told otherwise.

Only uvicorn's documented settings are used (``uvicorn.Config`` and ``uvicorn.Server.run(sockets=...)``, nothing
subclassed): ``limit_concurrency`` bounds open connections (beyond it uvicorn answers 503),
``timeout_keep_alive`` closes a connection idle after a response, ``h11_max_incomplete_event_size`` bounds a
request's line and headers (uvicorn answers 400), ``backlog`` is the listen queue, ``ws="none"`` keeps every
connection on HTTP. A plain ASGI wrapper (:func:`guarded_app`) adds what an application can see: a request line
and headers over ``max_head_bytes`` are answered 413 (h11 bounds only a head still incomplete), a request with
both ``Content-Length`` and ``Transfer-Encoding`` is answered 400 and its connection closed (RFC 9112 section 6.1),
and a request's whole body must arrive within ``read_timeout_s`` of its headers (else 408, connection closed).

What uvicorn cannot do through its settings is left to a reverse proxy in front of a server others reach
(docs/security.md gives an nginx configuration): a deadline for a connection's first request or for its headers
(an idle connect or a slowloris holds a socket until the client leaves), closing idle connections to make room
(``limit_concurrency`` counts them, so they turn requests into 503s), and keeping accepted sockets under the
open-file limit.
"""

from __future__ import annotations

import asyncio
import json
import resource
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

import uvicorn

FD_RESERVE = 128
"""Descriptors kept free of connections for everything else the process opens (files, caches, KG workers)."""

LISTEN_BACKLOG = 2048
"""Connections the kernel holds for the server until it accepts them (uvicorn's default backlog)."""


@dataclass(frozen=True)
class ConnectionLimits:
    """What one server allows each connection (see the module docstring).

    - ``read_timeout_s``: time a request's whole body has to arrive once its headers have; then 408 and the
      connection is closed.
    - ``keep_alive_s``: idle time after a response before the connection is closed (uvicorn's
      ``timeout_keep_alive``).
    - ``max_connections``: open connections at most, beyond which uvicorn answers 503 (its
      ``limit_concurrency``; lowered to :func:`connection_budget` when the open-file limit is tighter).
    - ``max_head_bytes``: request line plus headers at most; a larger request is answered 413 (a head still
      arriving past it: uvicorn's 400, its ``h11_max_incomplete_event_size``).
    """

    read_timeout_s: float = 10.0
    keep_alive_s: float = 5.0
    max_connections: int = 256
    max_head_bytes: int = 16 * 1024

    def __post_init__(self) -> None:
        if self.read_timeout_s <= 0 or self.keep_alive_s <= 0:
            raise ValueError("read_timeout_s and keep_alive_s must be > 0")
        if self.max_connections < 1 or self.max_head_bytes < 256:
            raise ValueError("max_connections must be >= 1 and max_head_bytes >= 256")


def connection_budget(wanted: int) -> int:
    """``wanted`` connections at most, and no more than the process's open-file limit leaves after
    :data:`FD_RESERVE`."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return wanted if soft == resource.RLIM_INFINITY else max(1, min(wanted, soft - FD_RESERVE))


def detail_body(status: int, message: str) -> bytes:
    """The body of a refusal by :func:`guarded_app`: ``{"detail": message}`` (FastAPI's shape)."""
    return json.dumps({"detail": message}).encode()


def listen_socket(host: str, port: int) -> socket.socket:
    """A listening socket; connections made before the server starts wait in the backlog instead of failing."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family, backlog=LISTEN_BACKLOG)
    # Accepted connections inherit TCP_NODELAY; without it every reply on a kept-alive connection waits ~40 ms
    # for delayed ACKs (asyncio only sets it on sockets it creates itself).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


Message = MutableMapping[str, Any]
ASGIApp = Callable[[Message, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
                   Awaitable[None]]


def guarded_app(app: ASGIApp, limits: ConnectionLimits,
                error_body: Callable[[int, str], bytes] = detail_body) -> ASGIApp:
    """``app`` refusing a request whose line and headers are over ``limits.max_head_bytes`` (413, counted as
    parsed), one framed two ways (400) and one whose whole body has not arrived within
    ``limits.read_timeout_s`` of its headers (408, unless its answer has begun), each refusal closing its
    connection; ``error_body`` shapes them."""

    async def refuse(send: Callable[[Message], Awaitable[None]], status: int, message: str) -> None:
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": error_body(status, message)})

    async def guarded(scope: Message, receive: Callable[[], Awaitable[Message]],
                      send: Callable[[Message], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            return await app(scope, receive, send)
        head = len(scope["raw_path"]) + len(scope["query_string"]) + sum(
            len(name) + len(value) + 4 for name, value in scope["headers"])
        if head > limits.max_head_bytes:
            return await refuse(send, 413, f"the request line and headers are over {limits.max_head_bytes:,} "
                                           "bytes, the limit")
        names = {name.lower() for name, _ in scope["headers"]}
        if {b"content-length", b"transfer-encoding"} <= names:
            return await refuse(send, 400, "the request has both Content-Length and Transfer-Encoding; refused "
                                           "(RFC 9112 section 6.1: such a request may hide another)")
        deadline = asyncio.get_running_loop().time() + limits.read_timeout_s
        body_read = started = refused = False

        async def receive_within() -> Message:
            nonlocal body_read, refused
            if body_read:  # e.g. waiting for the client to disconnect: no request bytes are awaited
                return await receive()
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                if not started:
                    refused = True
                    await refuse(send, 408, f"the request's body did not arrive within {limits.read_timeout_s:g} "
                                            "s of its headers")
                return {"type": "http.disconnect"}
            body_read = message["type"] != "http.request" or not message.get("more_body", False)
            return message

        async def send_watched(message: Message) -> None:
            nonlocal started
            if not refused:  # after a refusal the application's answer (to the disconnect) is dropped
                started = True
                await send(message)

        try:
            await app(scope, receive_within, send_watched)
        except Exception:
            if not refused:  # the application's error about the body it never got is the refusal's
                raise

    return guarded


def guarded_server(app: ASGIApp, limits: ConnectionLimits, log_level: str = "warning",
                   error_body: Callable[[int, str], bytes] = detail_body) -> uvicorn.Server:
    """A uvicorn server for ``app`` (:func:`guarded_app`) within ``limits`` on uvicorn's documented settings;
    ``error_body`` shapes the wrapper's 400, 408 and 413 answers. Run it with
    ``run(sockets=[listen_socket(host, port)])``."""
    config = uvicorn.Config(guarded_app(app, limits, error_body), log_level=log_level, access_log=False,
                            http="h11", ws="none", limit_concurrency=connection_budget(limits.max_connections),
                            timeout_keep_alive=limits.keep_alive_s, backlog=LISTEN_BACKLOG,
                            h11_max_incomplete_event_size=limits.max_head_bytes)
    return uvicorn.Server(config)
