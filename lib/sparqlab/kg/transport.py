"""One HTTP exchange with a SPARQL endpoint, bounded as a whole: the transport under SPARQLWrapper.

A socket timeout bounds each read, not the exchange: a server dripping one byte a second never trips it. An
:class:`Exchange` is one attempt at a query with a total deadline: when it passes, the attempt's connection is
shut down, which ends a read blocked in the headers or in the body however the bytes arrive. It also caps the
bytes read (so a huge result is refused while it arrives, not parsed whole first) and refuses a redirect to
another origin (scheme, host, port): the run id names the endpoint it was given, and its answers must come from
there.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urljoin

from SPARQLWrapper import SPARQLWrapper
from SPARQLWrapper.SPARQLExceptions import (
    EndPointInternalError,
    EndPointNotFound,
    QueryBadFormed,
    Unauthorized,
    URITooLong,
)

from sparqlab.core.urls import origin
from sparqlab.kg.errors import EndpointError, QueryTimeout

MIN_RESULT_BYTES = 64 * 2**20
BYTES_PER_ROW = 4096
"""An answer may hold :data:`MIN_RESULT_BYTES` plus this many bytes per row of the query's row cap (64 MiB + 40
MiB at the default 10,000 rows); a larger one is refused while it arrives: a query with no LIMIT over a large
endpoint would otherwise be read and parsed whole (a 400 MB answer takes ~4 GB) before the row cap applies."""

_STATUS_ERRORS = {400: QueryBadFormed, 401: Unauthorized, 404: EndPointNotFound, 414: URITooLong,
                  500: EndPointInternalError}
"""The statuses SPARQLWrapper turns into its own exceptions (its ``_query``), which the caller maps on."""


def result_byte_cap(max_rows: int) -> int:
    """The most bytes an answer to a query capped at ``max_rows`` rows may have (:data:`BYTES_PER_ROW`)."""
    return MIN_RESULT_BYTES + max_rows * BYTES_PER_ROW


class Exchange:
    """One attempt at a request to ``url``: ends at ``timeout_s`` after it starts (a context manager), reads at
    most ``max_bytes``, follows redirects only within the URL's origin.

    Leaving the block after the deadline raises :class:`QueryTimeout` in place of whatever error the shut-down
    connection caused (a truncated answer, a reset), so it is never retried as a connection failure.
    """

    def __init__(self, url: str, timeout_s: float, max_bytes: int):
        self.url = url
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(timeout_s, self._expire)
        self._timer.daemon = True
        self.opener = urllib.request.build_opener(_Watched(self), _SameOrigin(url))

    def __enter__(self) -> Exchange:
        self._timer.start()
        return self

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        self._timer.cancel()
        if error is not None and self.expired:
            raise QueryTimeout(f"no complete answer from {self.url} within {self.timeout_s:g} s (the whole "
                               "exchange, however slowly it came); make the query more selective or raise the "
                               "timeout") from None

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
        """The whole body of ``response``, read as it arrives; over ``max_bytes`` is an :class:`EndpointError`."""
        chunks, size = [], 0
        while chunk := response.read1(1 << 16):
            size += len(chunk)
            if size > self.max_bytes:
                response.close()
                raise EndpointError(
                    f"the answer from {self.url} is larger than {self.max_bytes:,} bytes (refused while "
                    "reading, before parsing); add a LIMIT or make the query more selective")
            chunks.append(chunk)
            if self.expired:
                raise TimeoutError
        if self.expired:
            raise TimeoutError
        return b"".join(chunks)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


class _Watched(urllib.request.BaseHandler):
    """Opens http and https URLs (before urllib's own handlers) with connections the :class:`Exchange` watches."""

    handler_order = 400

    def __init__(self, exchange: Exchange):
        self.exchange = exchange
        self._http = urllib.request.HTTPHandler()
        self._https = urllib.request.HTTPSHandler()

    def http_open(self, request: urllib.request.Request) -> Any:
        return self._http.do_open(self._connection(http.client.HTTPConnection), request)

    def https_open(self, request: urllib.request.Request) -> Any:
        return self._https.do_open(self._connection(http.client.HTTPSConnection), request)

    def _connection(self, kind: type) -> type:
        exchange = self.exchange

        class Watched(kind):  # type: ignore[misc, valid-type]
            def connect(self) -> None:
                super().connect()
                exchange.watch(self.sock)

        return Watched


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    """Follows a redirect within the endpoint's origin; one to another origin is an :class:`EndpointError`."""

    def __init__(self, url: str):
        self.url = url

    def redirect_request(self, request: Any, fp: Any, code: int, message: str, headers: Any, new_url: str) -> Any:
        target = urljoin(request.full_url, new_url)
        if origin(target) != origin(self.url):
            raise EndpointError(f"the endpoint {self.url} redirected to another origin ({target}, HTTP {code}); "
                                "refused: give that URL as the endpoint if it is the one meant")
        return super().redirect_request(request, fp, code, message, headers, new_url)


class DeadlineClient(SPARQLWrapper):
    """SPARQLWrapper sending its request through an :class:`Exchange` (SPARQLWrapper itself always opens URLs
    with urllib's global opener, which has neither a total deadline nor an origin check)."""

    def __init__(self, url: str, agent: str, exchange: Exchange):
        super().__init__(url, agent=agent)
        self.exchange = exchange

    def _query(self) -> tuple[Any, str]:
        request = self._createRequest()
        try:
            return self.exchange.opener.open(request, timeout=self.timeout), self.returnFormat
        except urllib.error.HTTPError as error:
            kind = _STATUS_ERRORS.get(error.code)
            if kind is None:
                raise
            raise kind(error.read()) from error
