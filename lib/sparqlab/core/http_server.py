"""Serving an ASGI application on uvicorn with the limits an endpoint reachable by others needs: used by
``sparqlab serve`` (the TEXT2SPARQL endpoint) and ``sparqlab serve-model``.

uvicorn's own settings are used where it has them: ``timeout_keep_alive`` closes a connection idle after a
response, ``h11_max_incomplete_event_size`` bounds what the HTTP parser buffers, ``backlog`` bounds how many
connections one accept round takes. What uvicorn lacks is added by :class:`GuardedProtocol` (its HTTP/1.1
protocol, extended):

- a **read deadline**: a connection must deliver each whole request within ``read_timeout_s`` of opening or of
  its previous response, so a client that connects and sends nothing, or trickles its headers (slowloris), is
  closed; a request being answered is never cut off;
- a **bound on open connections**: beyond ``max_connections`` a new connection closes the one that has waited
  longest without a request in progress, if it has waited at least :data:`EVICT_AFTER_S` (so idle and half-sent
  connections make room, but a burst of real requests whose bytes have not been read yet is not cut off);
  otherwise the new connection is answered 503 with ``Retry-After`` and closed. uvicorn's ``limit_concurrency``
  is not used for this: it counts idle connections too, so a few hundred idle sockets would turn every real
  request into a 503;
- a **request-size limit**: a request line and headers over ``max_head_bytes`` are answered 413 and closed
  before they are parsed.

The bound is also kept below the process's open-file limit (:func:`connection_budget`), so idle sockets can
never exhaust the descriptors the server needs to accept the next real request.
"""

from __future__ import annotations

import asyncio
import json
import resource
import socket
from collections.abc import Callable
from dataclasses import dataclass

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

FD_RESERVE = 128
"""Descriptors kept free of connections for everything else the process opens (files, caches, KG workers)."""

MAX_ACCEPT_BATCH = 2048
"""The most connections one accept round takes (and the listen backlog): uvicorn's default."""

REFUSAL_LINGER_S = 0.5
"""How long a refused connection (413, 503) stays half-open after its answer, reading and dropping what the
client still sends: closing with unread input would reset the connection, and the client would lose the
answer."""

MAX_LINGERING = 64
"""Refused connections lingering at once at most (beyond, they are closed at once): their descriptors are part of
the budget (:func:`connection_budget`)."""

EVICT_AFTER_S = 0.25
"""A connection that has waited this long without a request in progress may be closed to make room for a new one
when ``max_connections`` are open."""


@dataclass(frozen=True)
class ConnectionLimits:
    """What one server allows each connection (see the module docstring).

    - ``read_timeout_s``: time a connection has to deliver a whole request (headers and body), from opening or
      from its previous response; then it is closed.
    - ``keep_alive_s``: idle time after a response before the connection is closed (uvicorn's
      ``timeout_keep_alive``).
    - ``max_connections``: open connections at most (lowered to :func:`connection_budget` when the open-file
      limit is tighter).
    - ``max_head_bytes``: request line plus headers at most; a larger request is answered 413.
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


def connection_budget(wanted: int) -> tuple[int, int]:
    """``(max_connections, accept_batch)`` that fit the process's open-file limit: the connections at most
    ``wanted`` and half of what :data:`FD_RESERVE` and :data:`MAX_LINGERING` leave, one accept round at most the
    rest, so open connections plus one round of new ones never need more descriptors than the process may
    open."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted, MAX_ACCEPT_BATCH
    free = max(2, soft - FD_RESERVE - MAX_LINGERING)
    connections = max(1, min(wanted, free // 2))
    return connections, max(1, min(MAX_ACCEPT_BATCH, free - connections))


def detail_body(status: int, message: str) -> bytes:
    """The body of a refusal by the protocol: ``{"detail": message}`` (FastAPI's shape)."""
    return json.dumps({"detail": message}).encode()


def listen_socket(host: str, port: int) -> socket.socket:
    """A listening socket; connections made before the server starts wait in the backlog instead of failing."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family, backlog=MAX_ACCEPT_BATCH)
    # Accepted connections inherit TCP_NODELAY; without it every reply on a kept-alive connection waits ~40 ms
    # for delayed ACKs (asyncio only sets it on sockets it creates itself).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


REASONS = {413: "Content Too Large", 503: "Service Unavailable"}


class GuardedProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a read deadline, a connection bound and a request-size limit (module
    docstring). Subclassed per server by :func:`guarded_server` with its limits as class attributes."""

    limits = ConnectionLimits()
    max_connections = limits.max_connections
    error_body: Callable[[int, str], bytes] = staticmethod(detail_body)
    retry_after_s = 1
    lingering = [0]
    """Refused connections of this server lingering now (one shared counter)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._deadline: asyncio.TimerHandle | None = None
        self._refused = self._lingers = False
        self._idle_since = self.loop.time()
        self._arm()
        if len(self.connections) > self.max_connections:
            patience = self._idle_since - EVICT_AFTER_S
            waiting = [c for c in self.connections if c is not self and isinstance(c, GuardedProtocol)
                       and c.awaiting_request() and c._idle_since <= patience]
            if waiting:
                min(waiting, key=lambda c: c._idle_since).transport.close()
            else:
                self.refuse(503, f"the server has {self.max_connections} open connections, its limit, and none "
                                 f"has been idle for {EVICT_AFTER_S:g} s; retry after {self.retry_after_s} s")

    def awaiting_request(self) -> bool:
        """No request of this connection is being answered (it is idle, or still sending one)."""
        return (self.cycle is None or self.cycle.response_complete) and not self.transport.is_closing()

    def data_received(self, data: bytes) -> None:
        if self._refused:  # answered already: what the client still sends is dropped
            return
        if self.conn.their_state is h11.IDLE:  # still reading a request line and headers
            pending = self.conn.trailing_data[0] + data
            end = pending.find(b"\r\n\r\n")
            head = len(pending) if end < 0 else end + 4
            if head > self.limits.max_head_bytes:
                self.refuse(413, f"the request line and headers are over {self.limits.max_head_bytes:,} bytes, "
                                 "the limit")
                return
        super().data_received(data)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._idle_since = self.loop.time()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        if self._lingers:
            self.lingering[0] -= 1
        super().connection_lost(exc)

    def refuse(self, status: int, message: str) -> None:
        """Answer ``status`` with ``message`` outside any request cycle, and close the connection: at once, or
        after :data:`REFUSAL_LINGER_S` half-open (or the client's own close), so the answer is not lost to a
        reset while :data:`MAX_LINGERING` allows."""
        if self.transport.is_closing() or self._refused:
            return
        body = self.error_body(status, message)
        extra = f"retry-after: {self.retry_after_s}\r\n" if status == 503 else ""
        self.transport.write(f"HTTP/1.1 {status} {REASONS.get(status, '')}\r\ncontent-type: application/json\r\n"
                             f"content-length: {len(body)}\r\n{extra}connection: close\r\n\r\n".encode() + body)
        self._refused = True
        if self.lingering[0] < MAX_LINGERING and self.transport.can_write_eof():
            self._lingers = True
            self.lingering[0] += 1
            self.transport.write_eof()
            self.loop.call_later(REFUSAL_LINGER_S, self.transport.close)
        else:
            self.transport.close()

    def _arm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = self.loop.call_later(self.limits.read_timeout_s, self._expire)

    def _expire(self) -> None:
        # IDLE: not even the headers yet; SEND_BODY: part of the body. A request being answered is left alone.
        if self.conn.their_state in (h11.IDLE, h11.SEND_BODY) and not self.transport.is_closing():
            self.transport.close()


def guarded_server(app, limits: ConnectionLimits, log_level: str = "warning",
                   error_body: Callable[[int, str], bytes] = detail_body, retry_after_s: int = 1) -> uvicorn.Server:
    """A uvicorn server for ``app`` within ``limits`` (the connection bound fitted to the open-file limit by
    :func:`connection_budget`); ``error_body`` shapes the protocol's own 413 and 503 answers."""
    connections, batch = connection_budget(limits.max_connections)
    protocol = type("Guarded", (GuardedProtocol,), {
        "limits": limits, "max_connections": connections, "error_body": staticmethod(error_body),
        "retry_after_s": retry_after_s, "lingering": [0]})
    config = uvicorn.Config(app, log_level=log_level, access_log=False, http=protocol, backlog=batch,
                            timeout_keep_alive=limits.keep_alive_s,
                            h11_max_incomplete_event_size=limits.max_head_bytes + 64 * 1024)
    return uvicorn.Server(config)
