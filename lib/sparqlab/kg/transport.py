"""One HTTP exchange with a SPARQL endpoint, bounded as a whole, around SPARQLWrapper's public ``query()``.

A socket timeout bounds each read, not the exchange: a server dripping one byte a second never trips it. An
:class:`Exchange` is one attempt at a query with a total deadline: when it passes, the attempt's connection is
shut down, which ends a read blocked in the headers or in the body however the bytes arrive. It also stops
reading a SPARQL JSON answer one binding past the row cap, caps the bytes read (so a huge result is refused while
it arrives, not parsed whole first) and refuses a redirect to
another origin (scheme, host, port): the run id names the endpoint it was given, and its answers must come from
there. SPARQLWrapper is used through its public API only: it opens URLs with ``urllib.request.urlopen``, so the
connections and redirects are watched by the opener installed through urllib's ``install_opener``
(docs/security.md, "SPARQL endpoints").
"""

from __future__ import annotations

import codecs
import contextlib
import http.client
import json
import re
import socket
import threading
import urllib.request
from contextvars import ContextVar
from typing import Any
from urllib.parse import urljoin

from SPARQLWrapper import SPARQLWrapper

from sparqlab.core.urls import origin
from sparqlab.kg.errors import EndpointError, QueryTimeout

MIN_RESULT_BYTES = 64 * 2**20
BYTES_PER_ROW = 4096
"""An answer may hold :data:`MIN_RESULT_BYTES` plus this many bytes per row of the query's row cap (64 MiB + 40
MiB at the default 10,000 rows); a larger one is refused while it arrives: a query with no LIMIT over a large
endpoint would otherwise be read and parsed whole (a 400 MB answer takes ~4 GB) before the row cap applies."""


def result_byte_cap(max_rows: int) -> int:
    """The most bytes an answer to a query capped at ``max_rows`` rows may have (:data:`BYTES_PER_ROW`)."""
    return MIN_RESULT_BYTES + max_rows * BYTES_PER_ROW


class Exchange:
    """One attempt at a request to ``url``: ends at ``timeout_s`` after it starts (a context manager), reads at
    most ``max_bytes``, follows redirects only within the URL's origin.

    Leaving the block after the deadline raises :class:`QueryTimeout` in place of whatever error the shut-down
    connection caused (a truncated answer, a reset), so it is never retried as a connection failure.
    """

    def __init__(self, url: str, timeout_s: float, max_bytes: int, max_rows: int | None = None):
        self.url = url
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes
        self.max_rows = max_rows
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(timeout_s, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Exchange:
        self._timer.start()
        return self

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        self._timer.cancel()
        if error is not None and self.expired:
            raise QueryTimeout(f"no complete answer from {self.url} within {self.timeout_s:g} s (the whole "
                               "exchange, however slowly it came); make the query more selective or raise the "
                               "timeout") from None

    def query(self, client: SPARQLWrapper) -> tuple[bytes, Any]:
        """``client.query()`` within this exchange: the body (read by :meth:`read`) and the headers of its answer.

        SPARQLWrapper opens its request with ``urllib.request.urlopen``, that is through the opener installed
        with ``urllib.request.install_opener`` (urllib's documented hook): :data:`OPENER` is installed, and it
        watches the connections and redirects of the exchange the calling thread has started here. An answer that
        came through another opener (a program installed its own since) is refused rather than read unbounded."""
        urllib.request.install_opener(OPENER)
        token = _CURRENT.set(self)
        try:
            response = client.query().response
        finally:
            _CURRENT.reset(token)
        if not self._sockets:
            response.close()
            raise EndpointError(f"the query to {self.url} went through another urllib opener than sparqlab's (a "
                                "program called urllib.request.install_opener), so its deadline, byte cap and "
                                "origin check did not apply; refused")
        return self.read(response), response.headers

    def watch(self, sock: socket.socket) -> None:
        """Shut ``sock`` down when the deadline passes (at once if it has)."""
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)

    def read(self, response: Any) -> bytes:
        """The body of ``response``, read as it arrives; over ``max_bytes`` is an :class:`EndpointError`. With
        ``max_rows``, a SPARQL JSON answer is read only until it holds ``max_rows + 1`` bindings (one more than the
        cap, so the caller sees it was cut): the rest is never read, and the document is closed after them. The
        cap applies whatever the ``Content-Type`` says (``text/plain``, ``…+JSON``): only the parse decides what
        the bytes are."""
        rows = _RowCap(self.max_rows) if self.max_rows is not None else None
        chunks, size = [], 0
        while chunk := response.read1(1 << 16):
            size += len(chunk)
            if size > self.max_bytes:
                response.close()
                raise EndpointError(
                    f"the answer from {self.url} is larger than {self.max_bytes:,} bytes (refused while "
                    "reading, before parsing); add a LIMIT or make the query more selective")
            chunks.append(chunk)
            if rows is not None and rows.feed(chunk):
                response.close()
                return rows.document()
            if self.expired:
                raise TimeoutError
        if self.expired:
            raise TimeoutError
        return b"".join(chunks)


_BINDINGS = re.compile(r'(?<!\\)"bindings"\s*:\s*\[')


class _RowCap:
    """Counts the bindings of a SPARQL JSON answer as its bytes arrive (each object decoded once it is whole), and
    says when there is one more than ``limit``. Text is kept only up to the bindings counted (``head``, the text
    before the array; ``items``, the counted ones; ``pending``, what follows them). Arriving text is joined to
    ``pending`` and looked at again only once it has doubled, so a 40 MB literal costs linear time."""

    def __init__(self, limit: int):
        self.limit = limit
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.head: str | None = None
        self.items: list[str] = []
        self.pending = ""
        self._arrived: list[str] = []  # text not joined to ``pending`` yet
        self._arrived_chars = 0
        self._retry_at = 0  # ``pending`` is looked at again once it (with what arrived) is this long
        self._rows = 0
        self._done = False

    def feed(self, chunk: bytes) -> bool:
        """Add ``chunk``; true once ``limit + 1`` whole bindings have been counted."""
        if self._done:
            return False
        text = self._decoder.decode(chunk)
        self._arrived.append(text)
        self._arrived_chars += len(text)
        if len(self.pending) + self._arrived_chars < self._retry_at:
            return False
        self.pending += "".join(self._arrived)
        self._arrived, self._arrived_chars = [], 0
        if self.head is None:
            found = _BINDINGS.search(self.pending)
            if found is None:
                self._retry_at = 2 * len(self.pending)
                return False
            self.head, self.pending = self.pending[:found.end()], self.pending[found.end():]
        decoder, position, cut, partial = json.JSONDecoder(), 0, False, False
        while not cut:
            while position < len(self.pending) and self.pending[position] in " \t\r\n,":
                position += 1
            if position >= len(self.pending):
                break
            if self.pending[position] == "]":  # the whole array fits under the cap: the caller reads the rest
                self._done, self.items, self.pending = True, [], ""
                return False
            try:
                _, position = decoder.raw_decode(self.pending, position)
            except ValueError:  # not whole yet (or not JSON: the caller's parse will say so)
                partial = True
                break
            self._rows += 1
            cut = self._rows > self.limit
        self.items.append(self.pending[:position])
        self.pending = self.pending[position:]
        # decode a partial object again only once its text has doubled: linear, however long the object
        self._retry_at = len(self.pending) + max(1 << 16, len(self.pending)) if partial else 0
        return cut

    def document(self) -> bytes:
        """The text up to the last counted binding, with the arrays and objects open there closed."""
        assert self.head is not None
        return (self.head + "".join(self.items) + _closers(self.head)).encode("utf-8")


def _closers(prefix: str) -> str:
    """What closes the JSON arrays and objects left open at the end of ``prefix``."""
    stack, in_string, escaped = [], False, False
    for char in prefix:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]" and stack:
            stack.pop()
    return "".join(reversed(stack))


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


_CURRENT: ContextVar[Exchange | None] = ContextVar("sparqlab_exchange", default=None)
"""The exchange whose request the calling thread is opening (:meth:`Exchange.query`)."""


class _Watched(urllib.request.BaseHandler):
    """Opens http and https URLs (before urllib's own handlers) with connections the current :class:`Exchange`
    watches; without one, leaves the URL to urllib's own handlers."""

    handler_order = 400

    def __init__(self) -> None:
        self._http = urllib.request.HTTPHandler()
        self._https = urllib.request.HTTPSHandler()

    def http_open(self, request: urllib.request.Request) -> Any:
        exchange = _CURRENT.get()
        return None if exchange is None else self._http.do_open(_watched(http.client.HTTPConnection, exchange),
                                                                request)

    def https_open(self, request: urllib.request.Request) -> Any:
        exchange = _CURRENT.get()
        return None if exchange is None else self._https.do_open(_watched(http.client.HTTPSConnection, exchange),
                                                                 request)


def _watched(kind: type, exchange: Exchange) -> type:
    """``kind`` of connection whose socket ``exchange`` shuts down at its deadline."""

    class Watched(kind):  # type: ignore[misc, valid-type]
        def connect(self) -> None:
            super().connect()
            exchange.watch(self.sock)

    return Watched


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    """Follows a redirect within the current :class:`Exchange`'s origin; one to another origin is an
    :class:`EndpointError` (without an exchange, urllib's own redirect rules)."""

    def redirect_request(self, request: Any, fp: Any, code: int, message: str, headers: Any, new_url: str) -> Any:
        exchange = _CURRENT.get()
        target = urljoin(request.full_url, new_url)
        if exchange is not None and origin(target) != origin(exchange.url):
            raise EndpointError(f"the endpoint {exchange.url} redirected to another origin ({target}, HTTP {code}); "
                                "refused: give that URL as the endpoint if it is the one meant")
        return super().redirect_request(request, fp, code, message, headers, new_url)


OPENER = urllib.request.build_opener(_Watched(), _SameOrigin())
"""urllib's default opener plus the bounds of the current :class:`Exchange`, installed by :meth:`Exchange.query`
for the process (urllib has one installed opener); a request outside an exchange goes through it unchanged."""
