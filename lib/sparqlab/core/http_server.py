"""Serving an ASGI application on uvicorn with the limits an endpoint reachable by others needs: used by
``sparqlab serve`` (the TEXT2SPARQL endpoint) and ``sparqlab serve-model``.

uvicorn's own settings are used where it has them: ``timeout_keep_alive`` closes a connection idle after a
response, ``h11_max_incomplete_event_size`` bounds what the HTTP parser buffers. What uvicorn lacks is added by
:class:`GuardedProtocol` (its HTTP/1.1 protocol, extended) and :class:`Acceptor` (which accepts the connections):

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
  before they are parsed;
- a **bound on open sockets**, below the process's open-file limit (:func:`connection_budget`): every accepted
  connection not closed yet counts, from the moment it is accepted, so a burst of connections can never exhaust
  the descriptors the server needs for everything else (:class:`Acceptor` says why asyncio's own accept path
  cannot hold this bound).
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import resource
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

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


REASONS = {413: "Content Too Large", 503: "Service Unavailable"}

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
    (:class:`GuardedProtocol`). Only public asyncio calls are used (``add_reader``, ``remove_reader``,
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


class GuardedServer(uvicorn.Server):
    """uvicorn's server with its connections accepted by an :class:`Acceptor` instead of asyncio's accept path;
    it serves the listening sockets given to ``run(sockets=...)`` (:func:`listen_socket`)."""

    def __init__(self, config: uvicorn.Config, acceptor: Acceptor) -> None:
        super().__init__(config)
        self.acceptor = acceptor

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        if not sockets:
            raise ValueError("a guarded server serves listening sockets: run(sockets=[listen_socket(host, port)])")
        await super().startup(sockets=[])  # the lifespan and the server's state, and no asyncio server
        config = self.config

        def protocol() -> asyncio.Protocol:
            return config.http_protocol_class(config=config, server_state=self.server_state,
                                              app_state=self.lifespan.state)

        self.acceptor.start(asyncio.get_running_loop(), sockets, protocol)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.acceptor.stop()  # before uvicorn closes the sockets
        await super().shutdown(sockets=sockets)


class GuardedProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a read deadline, a connection bound and a request-size limit (module
    docstring). Subclassed per server by :func:`guarded_server` with its limits as class attributes."""

    limits = ConnectionLimits()
    max_connections = limits.max_connections
    acceptor: Acceptor
    """The server's :class:`Acceptor`, told when a connection closes."""
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
        self.acceptor.release()

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
                   error_body: Callable[[int, str], bytes] = detail_body,
                   retry_after_s: int = 1) -> GuardedServer:
    """A uvicorn server for ``app`` within ``limits``, its connection bound and open sockets fitted to the
    open-file limit by :func:`connection_budget`; ``error_body`` shapes the protocol's own 413 and 503 answers.
    Run it with ``run(sockets=[listen_socket(host, port)])``."""
    connections, max_open = connection_budget(limits.max_connections)
    acceptor = Acceptor(max_open)
    protocol = type("Guarded", (GuardedProtocol,), {
        "limits": limits, "max_connections": connections, "acceptor": acceptor,
        "error_body": staticmethod(error_body), "retry_after_s": retry_after_s, "lingering": [0]})
    config = uvicorn.Config(app, log_level=log_level, access_log=False, http=protocol,
                            timeout_keep_alive=limits.keep_alive_s,
                            h11_max_incomplete_event_size=limits.max_head_bytes + 64 * 1024)
    return GuardedServer(config, acceptor)
