"""Serving an ASGI application on uvicorn with the limits an endpoint reachable by others needs: used by
``sparqlab serve`` (the TEXT2SPARQL endpoint) and ``sparqlab serve-model``.

uvicorn's own settings are used where they hold: ``timeout_keep_alive`` closes a connection idle after a response,
``h11_max_incomplete_event_size`` bounds what the HTTP parser buffers (a backstop: it answers 400), ``ws="none"``
keeps every connection on HTTP. They do not suffice on their own: uvicorn arms no timer before a connection's
first request and each byte received disarms its keep-alive timer (an idle connect or a slowloris holds a socket
for ever), and ``limit_concurrency`` counts idle connections too (a few hundred idle sockets would turn every real
request into a 503). What they lack is added here through public interfaces only — ``uvicorn.Config`` and
``uvicorn.Server``, the protocol class uvicorn resolves for the config (``config.http_protocol_class``, wrapped,
never subclassed), ASGI and asyncio — so a uvicorn release that reshapes its protocol internals does not break
the guards:

- a **read deadline**: a connection must deliver each whole request within ``read_timeout_s`` of opening or of
  its previous response, so a client that connects and sends nothing, or trickles its headers or body
  (slowloris), is closed; a request being answered is never cut off;
- a **bound on open connections**: beyond ``max_connections`` a new connection closes the one that has waited
  longest without a request in progress, if it has waited at least :data:`EVICT_AFTER_S` (so idle and half-sent
  connections make room, but a burst of real requests whose bytes have not been read yet is not cut off);
  otherwise the new connection is answered 503 with ``Retry-After`` and closed;
- a **request-size limit**: a request line and headers over ``max_head_bytes`` are answered 413 and closed
  before they are parsed;
- **one framing only**: a request whose head has both ``Content-Length`` and ``Transfer-Encoding``, or a header
  line folded onto the next (obs-fold), is answered 400 and closed before it is parsed (RFC 9112 section 6.1), so a
  request hidden in its body is never answered (:func:`framing_conflict`);
- a **bound on open sockets**, below the process's open-file limit (:func:`connection_budget`): every accepted
  connection not closed yet counts, from the moment it is accepted, so a burst of connections can never exhaust
  the descriptors the server needs for everything else (:class:`Acceptor` says why asyncio's own accept path
  cannot hold this bound).

How: each connection's protocol is a :class:`GuardedConnection`, which owns the guards and hands every event on
to the protocol uvicorn made for the connection. It sees the bytes coming in (the size of a request's head, where
the head ends) but not where uvicorn's parser is in a request, so the application is wrapped too
(:meth:`Guard.watch`, plain ASGI): it tells the connection when a request is being answered, when the application
waits for body bytes and when the response is complete. The wrapped application finds its connection in
:data:`CONNECTION`, set while the connection hands bytes to uvicorn: asyncio copies the current context into
every task created meanwhile, the request's ASGI task among them (uvicorn's ``reset_contextvars`` stays off, its
default).

A reverse proxy in front can provide these limits instead (docs/security.md); with this module
``sparqlab serve`` needs none.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import re
import resource
import socket
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import uvicorn

FD_RESERVE = 128
"""Descriptors kept free of connections for everything else the process opens (files, caches, KG workers)."""

LISTEN_BACKLOG = 2048
"""Connections the kernel holds for the server until it accepts them (uvicorn's default backlog); they take no
descriptor of the server's while they wait."""

ACCEPT_RETRY_S = 1.0
"""How long accepting pauses after the process (or the system) ran out of descriptors or memory in ``accept``
(asyncio's own delay)."""

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
    """``(max_connections, max_open)`` that fit the process's open-file limit. ``max_open``: sockets accepted and
    not closed yet, at most (those kept, refused ones lingering, and those not yet checked against
    ``max_connections``), so :data:`FD_RESERVE` descriptors stay free for everything else.
    ``max_connections``: ``wanted`` at most, and half of what :data:`MAX_LINGERING` leaves of ``max_open``, so
    that with ``max_connections`` open there is room to accept the new connections that make idle ones give
    way."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted, sys.maxsize
    max_open = max(2, soft - FD_RESERVE)
    return max(1, min(wanted, (max_open - MAX_LINGERING) // 2)), max_open


def detail_body(status: int, message: str) -> bytes:
    """The body of a refusal by the protocol: ``{"detail": message}`` (FastAPI's shape)."""
    return json.dumps({"detail": message}).encode()


def listen_socket(host: str, port: int) -> socket.socket:
    """A listening socket; connections made before the server starts wait in the backlog instead of failing."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family, backlog=LISTEN_BACKLOG)
    # Accepted connections inherit TCP_NODELAY; without it every reply on a kept-alive connection waits ~40 ms
    # for delayed ACKs (asyncio only sets it on sockets it creates itself).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


REASONS = {400: "Bad Request", 413: "Content Too Large", 503: "Service Unavailable"}

log = logging.getLogger("uvicorn.error")


class Acceptor:
    """Accepts a server's connections, at most ``max_open`` open at once (accepted and not closed yet).

    asyncio's own accept path (``loop.create_server``, which uvicorn uses) cannot hold such a bound: each time the
    listening socket is ready it accepts up to ``backlog`` connections at once, and their protocols'
    ``connection_made``, where a bound could be checked, runs only two loop iterations later, while the next
    rounds accept more; a burst overshoots any bound checked there, up to the open-file limit. Its ``backlog`` is
    also the listen queue's length, so shortening the rounds that way makes the kernel drop connections instead.

    Here each connection counts from the moment it is accepted and until its protocol learns it is closed
    (:meth:`release`); at ``max_open`` the listening sockets are no longer watched, so new connections wait in
    the kernel's listen queue (:data:`LISTEN_BACKLOG`, which costs no descriptor), and watching resumes when a
    connection closes. Stopping rather than accepting and closing at once keeps them for when there is room: a
    connection over ``max_connections`` then makes an idle one give way, or is answered 503, as usual
    (:class:`GuardedConnection`). Only public asyncio calls are used (``add_reader``, ``remove_reader``,
    ``connect_accepted_socket``)."""

    def __init__(self, max_open: int) -> None:
        self.max_open = max_open
        self.open = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sockets: list[socket.socket] = []
        self._protocol: Callable[[], asyncio.Protocol] | None = None
        self._watching = False
        self._tasks: set[asyncio.Task] = set()

    def start(self, loop: asyncio.AbstractEventLoop, sockets: list[socket.socket],
              protocol: Callable[[], asyncio.Protocol]) -> None:
        """Accept on the listening ``sockets``, each connection served by a new ``protocol()``."""
        self._loop, self._sockets, self._protocol = loop, list(sockets), protocol
        for sock in self._sockets:
            sock.setblocking(False)
        self._watch()

    def stop(self) -> None:
        """Accept no more connections (those open are left to the server's shutdown)."""
        self._unwatch()
        self._sockets = []

    def release(self) -> None:
        """A connection is closed: one more may be accepted."""
        self.open -= 1
        if self.open < self.max_open:
            self._watch()

    def _watch(self) -> None:
        if not self._watching and self._sockets:
            self._watching = True
            for sock in self._sockets:
                self._loop.add_reader(sock.fileno(), self._accept, sock)

    def _unwatch(self) -> None:
        if self._watching:
            self._watching = False
            for sock in self._sockets:
                self._loop.remove_reader(sock.fileno())

    def _accept(self, sock: socket.socket) -> None:
        while self.open < self.max_open:
            try:
                conn, _ = sock.accept()
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                return  # none waiting
            except OSError as exc:
                if exc.errno not in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    raise
                log.warning("accepting a connection failed (%s): accepting again in %g s", exc, ACCEPT_RETRY_S)
                self._unwatch()
                self._loop.call_later(ACCEPT_RETRY_S, self._watch)
                return
            self.open += 1
            task = self._loop.create_task(self._connect(conn))
            self._tasks.add(task)  # the loop holds tasks weakly
            task.add_done_callback(self._tasks.discard)
        self._unwatch()

    async def _connect(self, conn: socket.socket) -> None:
        try:
            await self._loop.connect_accepted_socket(self._protocol, conn)
        except Exception:  # no transport was made (its protocol or transport failed to start): nothing else will
            log.exception("a connection could not be set up")  # close the socket
            conn.close()
            self.release()


HEAD_END = re.compile(rb"\n\r?\n")
"""Where a request's head ends: an empty line (h11's rule: CRLF or a bare LF)."""


def framing_conflict(head: bytes) -> str | None:
    """What makes a request's ``head`` ambiguous to frame, or ``None``: both ``Content-Length`` and
    ``Transfer-Encoding`` (two parsers may disagree where the body ends, and the rest be read as a hidden second
    request), or a header line folded onto the next (obs-fold, which h11 unfolds and others do not)."""
    lines = head.split(b"\n")[1:]
    if any(line[:1] in (b" ", b"\t") for line in lines):
        return "a header line is folded onto the next (obs-fold)"
    names = {line.split(b":", 1)[0].strip().lower() for line in lines if b":" in line}
    if {b"content-length", b"transfer-encoding"} <= names:
        return "the request has both Content-Length and Transfer-Encoding"
    return None


Message = MutableMapping[str, Any]
ASGIApp = Callable[[Message, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
                   Awaitable[None]]

CONNECTION: ContextVar[GuardedConnection | None] = ContextVar("sparqlab_http_connection", default=None)
"""The connection whose bytes uvicorn's protocol is handling now (see the module docstring)."""


class Guard:
    """One server's limits, its open connections and its refused connections lingering now; watches the
    application's request cycles for the connections."""

    def __init__(self, limits: ConnectionLimits, max_connections: int, acceptor: Acceptor,
                 error_body: Callable[[int, str], bytes] = detail_body, retry_after_s: int = 1) -> None:
        self.limits, self.max_connections, self.acceptor = limits, max_connections, acceptor
        self.error_body, self.retry_after_s = error_body, retry_after_s
        self.open: set[GuardedConnection] = set()
        self.lingering = 0

    def make_room(self, new: GuardedConnection) -> bool:
        """Close the connection that has waited longest without a request in progress, if it has waited at least
        :data:`EVICT_AFTER_S`; whether one was closed."""
        patience = new.idle_since - EVICT_AFTER_S
        waiting = [c for c in self.open if c is not new and c.awaiting_request() and c.idle_since <= patience]
        if not waiting:
            return False
        min(waiting, key=lambda c: c.idle_since).transport.close()
        return True

    def watch(self, app: ASGIApp) -> ASGIApp:
        """``app`` telling each request's connection when its request is being answered, when the application
        waits for body bytes and when the response is complete (outside a connection, e.g. lifespan: ``app`` as
        it is)."""

        async def watched(scope: Message, receive: Callable[[], Awaitable[Message]],
                          send: Callable[[Message], Awaitable[None]]) -> None:
            connection = CONNECTION.get()
            if connection is None or scope["type"] != "http":
                return await app(scope, receive, send)
            cycle = connection.answering()
            body_read = False

            async def receive_watched() -> Message:
                nonlocal body_read
                if body_read:  # e.g. waiting for the client to disconnect: no request bytes are awaited
                    return await receive()
                connection.awaiting_body = True
                try:
                    message = await receive()
                finally:
                    connection.awaiting_body = False
                body_read = message["type"] != "http.request" or not message.get("more_body", False)
                return message

            async def send_watched(message: Message) -> None:
                await send(message)
                if message["type"] == "http.response.body" and not message.get("more_body", False):
                    connection.answered(cycle)

            try:
                await app(scope, receive_watched, send_watched)
            finally:  # an application that failed before its response is answered by uvicorn (500)
                connection.answered(cycle)

        return watched


class GuardedConnection(asyncio.Protocol):
    """One connection's protocol: the guards of the module docstring, every event handed on to ``inner``, the
    protocol uvicorn made for the connection."""

    def __init__(self, guard: Guard, inner: asyncio.Protocol) -> None:
        self.guard, self.inner = guard, inner
        self.transport: asyncio.Transport
        self.idle_since = 0.0
        """When the connection was opened or its last response completed."""
        self.awaiting_body = False
        """The application waits for body bytes of the request it answers."""
        self._loop: asyncio.AbstractEventLoop
        self._deadline: asyncio.TimerHandle | None = None
        self._refused = self._lingers = False
        self._busy = False  # a request's head has arrived and its response is not complete
        self._answering = False  # the application answers request number ``_cycle``
        self._cycle = 0
        self._head_bytes, self._tail = 0, b""
        self._received = bytearray()  # the head of the request being received, so far
        self._head: bytes | None = None  # a head received whole and not checked yet

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self._loop = asyncio.get_running_loop()
        self.idle_since = self._loop.time()
        self._arm()
        self.guard.open.add(self)
        self.inner.connection_made(transport)
        if len(self.guard.open) > self.guard.max_connections and not self.guard.make_room(self):
            self.refuse(503, f"the server has {self.guard.max_connections} open connections, its limit, and none "
                             f"has been idle for {EVICT_AFTER_S:g} s; retry after {self.guard.retry_after_s} s")

    def data_received(self, data: bytes) -> None:
        if self._refused:  # answered already: what the client still sends is dropped
            return
        if not self._busy and self._head_over_limit(data):
            self.refuse(413, f"the request line and headers are over {self.guard.limits.max_head_bytes:,} bytes, "
                             "the limit")
            return
        if self._busy and self._head is not None:
            head, self._head = self._head, None
            conflict = framing_conflict(head)
            if conflict:
                self.refuse(400, f"{conflict}; refused (RFC 9112 section 6.1: such a request may hide another)")
                return
        token = CONNECTION.set(self)  # the request task uvicorn starts now finds its connection
        try:
            self.inner.data_received(data)
        finally:
            CONNECTION.reset(token)

    def eof_received(self) -> bool | None:
        return None if self._refused else self.inner.eof_received()

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self.guard.open.discard(self)
        if self._lingers:
            self.guard.lingering -= 1
        self.inner.connection_lost(exc)
        self.guard.acceptor.release()

    def awaiting_request(self) -> bool:
        """No request of this connection is in progress (it is idle, or still sending a request's head)."""
        return not (self._busy or self._answering or self.transport.is_closing())

    def answering(self) -> int:
        """The application starts answering a request: its number on this connection."""
        self._cycle += 1
        self._busy = self._answering = True
        return self._cycle

    def answered(self, cycle: int) -> None:
        """The response to request number ``cycle`` is complete (a second call, or one for an earlier request,
        changes nothing): the connection waits for its next request, within the read deadline again."""
        if cycle != self._cycle or not self._answering:
            return
        self._busy = self._answering = self.awaiting_body = False
        self._head_bytes, self._tail = 0, b""
        self.idle_since = self._loop.time()
        self._arm()

    def refuse(self, status: int, message: str) -> None:
        """Answer ``status`` with ``message`` outside any request cycle, and close the connection: at once, or
        after :data:`REFUSAL_LINGER_S` half-open (or the client's own close), so the answer is not lost to a
        reset while :data:`MAX_LINGERING` allows."""
        if self.transport.is_closing() or self._refused:
            return
        body = self.guard.error_body(status, message)
        extra = f"retry-after: {self.guard.retry_after_s}\r\n" if status == 503 else ""
        self.transport.write(f"HTTP/1.1 {status} {REASONS.get(status, '')}\r\ncontent-type: application/json\r\n"
                             f"content-length: {len(body)}\r\n{extra}connection: close\r\n\r\n".encode() + body)
        self._refused = True
        if self.guard.lingering < MAX_LINGERING and self.transport.can_write_eof():
            self._lingers = True
            self.guard.lingering += 1
            self.transport.write_eof()
            self._loop.call_later(REFUSAL_LINGER_S, self.transport.close)
        else:
            self.transport.close()

    def _head_over_limit(self, data: bytes) -> bool:
        """Count ``data`` into the head of the request being received (kept in ``_head``, at most
        ``max_head_bytes``, until it is checked); whether the head is over ``max_head_bytes``. Once the head has
        ended, a request is in progress until its response is complete."""
        seen = self._tail + data
        end = HEAD_END.search(seen)
        if end is None:
            self._head_bytes += len(data)
            self._tail = seen[-2:]
            self._received += data
        else:
            self._head_bytes += end.end() - len(self._tail)
            self._busy = True
            self._head, self._received = bytes(self._received + data[:end.end() - len(self._tail)]), bytearray()
        return self._head_bytes > self.guard.limits.max_head_bytes

    def _arm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = self._loop.call_later(self.guard.limits.read_timeout_s, self._expire)

    def _expire(self) -> None:
        # closed unless the application is answering a request and not waiting for its body
        if not self.transport.is_closing() and (not self._answering or self.awaiting_body):
            self.transport.close()


class GuardedServer(uvicorn.Server):
    """uvicorn's server with its connections accepted by the guard's :class:`Acceptor` instead of asyncio's
    accept path, each served by a :class:`GuardedConnection`; it serves the listening sockets given to
    ``run(sockets=...)`` (:func:`listen_socket`)."""

    def __init__(self, config: uvicorn.Config, guard: Guard) -> None:
        super().__init__(config)
        self.guard = guard

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        if not sockets:
            raise ValueError("a guarded server serves listening sockets: run(sockets=[listen_socket(host, port)])")
        await super().startup(sockets=[])  # the lifespan and the server's state, and no asyncio server
        config = self.config

        def protocol() -> asyncio.Protocol:  # as uvicorn makes its own (Server.startup), wrapped
            inner = config.http_protocol_class(config=config, server_state=self.server_state,  # type: ignore[call-arg]
                                               app_state=self.lifespan.state)
            return GuardedConnection(self.guard, inner)

        self.guard.acceptor.start(asyncio.get_running_loop(), sockets, protocol)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.guard.acceptor.stop()  # before uvicorn closes the sockets
        await super().shutdown(sockets=sockets)


def guarded_server(app: ASGIApp, limits: ConnectionLimits, log_level: str = "warning",
                   error_body: Callable[[int, str], bytes] = detail_body,
                   retry_after_s: int = 1) -> GuardedServer:
    """A uvicorn server for ``app`` within ``limits``, its connection bound and open sockets fitted to the
    open-file limit by :func:`connection_budget`; ``error_body`` shapes the guard's own 413 and 503 answers.
    Run it with ``run(sockets=[listen_socket(host, port)])``."""
    connections, max_open = connection_budget(limits.max_connections)
    guard = Guard(limits, connections, Acceptor(max_open), error_body, retry_after_s)
    config = uvicorn.Config(guard.watch(app), log_level=log_level, access_log=False, http="h11", ws="none",
                            timeout_keep_alive=limits.keep_alive_s,
                            h11_max_incomplete_event_size=limits.max_head_bytes + 64 * 1024)
    return GuardedServer(config, guard)
