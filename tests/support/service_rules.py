"""A local stand-in for a public query service's limits (Wikidata's), in front of a real SPARQL server: the tests
of the service client (retries, ``Retry-After``, the in-flight limit) run against it."""

from __future__ import annotations

import contextlib
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass

from sparqlab.core.processes import free_port


@dataclass
class ServiceRules:
    """The limits of Wikidata's query service, played by :func:`serve_service_rules` in front of a real server.

    - ``max_in_flight``: a request arriving while this many are being answered gets HTTP 429 (the service allows
      five queries in flight per client);
    - ``throttle_rate``: the share of the other requests answered 429 at random (a per-minute time budget spent),
      drawn from ``random.Random(seed)``; ``retry_after_s`` is the ``Retry-After`` sent with every 429;
    - ``timeout_pattern``: queries matching this regular expression get the service's HTTP 500 with a Java
      ``TimeoutException`` body (its 60 s limit), as a query that ran too long would;
    - ``require_user_agent``: a request without a ``User-Agent`` gets HTTP 403 (Wikimedia's policy);
    - ``refuse_all``: every query gets 429 (a service that has throttled this client completely), and so does
      every query after the first ``refuse_after`` forwarded ones; mutable while the server runs, as are the
      other rules;
    - ``delay_s``: each forwarded request is held this long, so that concurrent clients overlap.
    """

    max_in_flight: int = 5
    throttle_rate: float = 0.0
    retry_after_s: float = 0.0
    timeout_pattern: str | None = None
    require_user_agent: bool = True
    refuse_all: bool = False
    refuse_after: int | None = None
    delay_s: float = 0.0
    seed: int = 0


@dataclass
class ServiceRecord:
    """What the stand-in did: requests ``forwarded`` to the real server, 429s for ``in_flight`` and at
    ``random``, ``refused`` (``refuse_all``), ``timeouts`` sent, ``forbidden`` (no User-Agent), and the most
    requests it saw in flight at once (``peak_in_flight``)."""

    forwarded: int = 0
    in_flight: int = 0
    random: int = 0
    refused: int = 0
    timeouts: int = 0
    forbidden: int = 0
    peak_in_flight: int = 0

    @property
    def throttled(self) -> int:
        return self.in_flight + self.random + self.refused


SERVICE_TIMEOUT_BODY = """\
SPARQL-QUERY: queryStr={query}
java.util.concurrent.ExecutionException: java.util.concurrent.TimeoutException
\tat java.util.concurrent.FutureTask.report(FutureTask.java:122)
\tat java.util.concurrent.FutureTask.get(FutureTask.java:206)
Caused by: java.util.concurrent.TimeoutException
"""
"""The body of the query service's HTTP 500 for a query stopped at its time limit (abridged)."""


@contextlib.contextmanager
def serve_service_rules(upstream: str, rules: ServiceRules | None = None) -> Iterator[tuple[str, ServiceRecord]]:
    """A local stand-in for a public query service's limits: an HTTP proxy on a free 127.0.0.1 port that applies
    ``rules`` (:class:`ServiceRules`) and forwards the rest to the SPARQL endpoint ``upstream`` (an
    ``oxigraph serve-read-only`` URL). Yields its URL and the live :class:`ServiceRecord`; a test utility."""
    import random
    import re
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import parse_qs, urlsplit

    rules = rules or ServiceRules()
    record = ServiceRecord()
    lock = threading.Lock()
    rng = random.Random(rules.seed)
    running = [0]

    class Handler(BaseHTTPRequestHandler):
        upstream_server: str | None = None

        def log_message(self, *args) -> None:  # quiet
            pass

        def version_string(self) -> str:
            """A forwarded answer names the engine that made it (the ``Server`` header), as a service's front
            end passes its store's on; the stand-in's own answers name the stand-in."""
            return self.upstream_server or super().version_string()

        def _answer(self, status: int, body: bytes, content_type: str = "text/plain", headers=()) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def _rule(self, query: str) -> str | None:
            """Which rule answers this request (counted), or ``None`` to forward it (then counted in flight)."""
            with lock:
                if rules.require_user_agent and not (self.headers.get("User-Agent") or "").strip():
                    record.forbidden += 1
                    return "forbidden"
                refusing = rules.refuse_all or (rules.refuse_after is not None
                                                and record.forwarded + running[0] >= rules.refuse_after)
                rule = ("refused" if refusing else "in_flight" if running[0] >= rules.max_in_flight
                        else "random" if rng.random() < rules.throttle_rate
                        else "timeouts" if rules.timeout_pattern and re.search(rules.timeout_pattern, query)
                        else None)
                if rule is not None:
                    setattr(record, rule, getattr(record, rule) + 1)
                    return rule
                running[0] += 1
                record.peak_in_flight = max(record.peak_in_flight, running[0])
                return None

        def _handle(self, body: bytes | None) -> None:
            query = parse_qs(urlsplit(self.path).query).get("query", [""])[0]
            if body is not None:
                text = body.decode("utf-8", "replace")
                query = parse_qs(text).get("query", [text])[0] if "form" in (self.headers.get("Content-Type")
                                                                             or "") else text
            rule = self._rule(query)
            if rule == "forbidden":
                return self._answer(403, b"Forbidden: please identify your client with a User-Agent")
            if rule == "timeouts":
                return self._answer(500, SERVICE_TIMEOUT_BODY.format(query=query).encode())
            if rule is not None:
                retry = f"{rules.retry_after_s:g}"
                return self._answer(429, f"Too Many Requests - Please retry in {retry} seconds.".encode(),
                                    headers=[("Retry-After", retry)])
            try:
                if rules.delay_s:
                    time.sleep(rules.delay_s)
                status, content_type, answer, self.upstream_server = _forward(upstream, self.path, body,
                                                                              self.headers)
            finally:  # the query is done once answered, before the client can read the answer and send the next
                with lock:
                    running[0] -= 1
                    record.forwarded += 1
            self._answer(status, answer, content_type)

        def do_GET(self) -> None:  # noqa: N802 - the http.server hook's name
            self._handle(None)

        def do_POST(self) -> None:  # noqa: N802
            self._handle(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/sparql", record
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _forward(upstream: str, path: str, body: bytes | None, headers) -> tuple[int, str, bytes, str | None]:
    """Send one request on to ``upstream`` (same query string, body and content headers); its status, content
    type, body and ``Server`` header."""
    from urllib.parse import urlsplit

    target = upstream + (("?" + urlsplit(path).query) if urlsplit(path).query else "")
    request = urllib.request.Request(target, data=body, method="POST" if body is not None else "GET")
    for name in ("Accept", "Content-Type"):
        if headers.get(name):
            request.add_header(name, headers[name])
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return (response.status, response.headers.get("Content-Type", ""), response.read(),
                    response.headers.get("Server"))
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", "text/plain"), error.read(), error.headers.get("Server")
