"""The endpoint backend: any SPARQL 1.1 HTTP endpoint (Wikidata's service, QLever, Virtuoso, oxigraph server).

Requests go through SPARQLWrapper with content negotiation only (SPARQL JSON results for SELECT/ASK, an RDF
syntax for CONSTRUCT/DESCRIBE). The profile's predefined prefixes that a query does not declare are prepended,
so a query valid for the profile runs the same on every endpoint (QLever, unlike Wikidata's service, predefines
none). Limits (:mod:`sparqlab.kg.transport`): the timeout is a total deadline per attempt (connection, headers and
body, however slowly they come), but the server may go on working after the client gives up unless it has its
own limit (``oxigraph serve --timeout-s``, Wikidata's 60 s); a SPARQL JSON answer is read only up to one binding
over the row cap, whatever its ``Content-Type`` says (the rest is never read; a graph answer is parsed up to one
triple over the cap, RDF/XML declaring entities refused); an answer over a byte cap that grows with the row cap is
refused while it arrives; a redirect to another origin is refused; an engine's own cut (Virtuoso's
``X-SPARQL-MaxRows`` header) marks the result truncated too. A malformed result (rows that are not bindings, JSON
nested too deeply, an ASK whose boolean is a string) is an :class:`~sparqlab.kg.errors.EndpointError` of that
query; an answer that is no SPARQL result at all (an HTML page) is a failure of the endpoint, not of the query:
:class:`~sparqlab.kg.errors.EndpointUnavailable` stops the run. A URL may carry parameters sent with
every query (``default-graph-uri``, an API key: :func:`split_endpoint_url`), and ``graph`` names the default graph;
the engine is read from the ``Server`` header of the answers (:mod:`sparqlab.engines`).

A public service's limits are handled by the KG's :class:`~sparqlab.kg.service.ServiceClient`: at most the
profile's ``max_in_flight`` queries per endpoint at once (Wikidata: 5), HTTP 429 / 502 / 503 / 504 and refused or
reset connections retried (after ``Retry-After`` when sent), until the run's retry budget is spent and
:class:`~sparqlab.kg.errors.EndpointUnavailable` stops the run; HTTP 403 (Wikimedia refuses clients without an
identifying User-Agent, and this one always sends :data:`~sparqlab.kg.vocab.USER_AGENT`) stops it at once. The
query service's own time limit — an HTTP 500 whose body is a Java ``TimeoutException`` — is a
:class:`~sparqlab.kg.errors.QueryTimeout`, a result of the query like any other, and not retried.
"""

from __future__ import annotations

import ast
import contextlib
import http.client
import json
import urllib.error
from itertools import islice
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

from sparqlab.core.cache import JsonCache
from sparqlab.engines import Engine, engine_from_server
from sparqlab.kg.base import KnowledgeGraph, QueryOptions
from sparqlab.kg.errors import (
    EndpointError,
    EndpointUnavailable,
    QueryTimeout,
    SparqlSyntaxError,
    UnsupportedFunction,
    classify_engine_message,
)
from sparqlab.kg.profiles import KGProfile
from sparqlab.kg.results import QueryResult
from sparqlab.kg.service import RETRYABLE_STATUS, Throttled, retry_after_seconds
from sparqlab.kg.vocab import USER_AGENT
from sparqlab.sparql.rewrite import REWRITE_HINT
from sparqlab.sparql.screen import scan

_MAX_GET_URL = 2000
_SYNTAX_HINTS = ("parse", "syntax", "malformed", "lexical", "expected", "error at", "unexpected")
_TIMEOUT_HINTS = ("timeout", "timed out", "time limit", "cancelled")
SERVICE_TIMEOUT_MARK = "java.util.concurrent.TimeoutException"
"""What the body of Wikidata's query service says when it stopped a query at its 60 s limit (HTTP 500)."""


ENGINE_CUT_HEADER = "X-SPARQL-MaxRows"
"""The response header with which Virtuoso says it cut a result at its ``ResultSetMaxRows``."""


def split_endpoint_url(url: str) -> tuple[str, list[tuple[str, str]]]:
    """An endpoint URL as people write it — ``https://host/sparql?default-graph-uri=urn:x&key=K`` — split into
    the URL queries are sent to and the parameters sent with every query (in their order, repeats kept).
    A ``query`` parameter is refused: the query is what each request adds."""
    parts = urlsplit(url)
    parameters = parse_qsl(parts.query, keep_blank_values=True)
    if any(name in ("query", "update") for name, _ in parameters):
        raise ValueError(f"the endpoint URL {url} carries a query itself; give the URL of the endpoint, with only "
                         "the parameters every query should be sent with (default-graph-uri, an API key)")
    return urlunsplit(parts._replace(query="", fragment="")), parameters


def declare_prefixes(sparql: str, prefixes: dict[str, str], declared: frozenset[str] | None = None) -> str:
    """``sparql`` after one line declaring those of ``prefixes`` that it does not declare itself (``declared``:
    the query's own prefixes, if already scanned): what a plain SPARQL endpoint needs to run a query written
    with a profile's predefined prefixes."""
    declared = scan(sparql).declared_prefixes if declared is None else declared
    missing = [f"PREFIX {name}: <{iri}>" for name, iri in prefixes.items() if name not in declared]
    return " ".join(missing) + "\n" + sparql if missing else sparql


class EndpointKG(KnowledgeGraph):
    """A KG behind a SPARQL 1.1 endpoint URL."""

    def __init__(self, url: str, profile: KGProfile, *, cache: JsonCache | None = None,
                 options: QueryOptions | None = None, user_agent: str = USER_AGENT, graph: str | None = None,
                 identity: str | None = None):
        super().__init__(profile, cache, options)
        self.url = url
        self._identity = identity
        self.user_agent = user_agent
        self.graph = graph
        """The named graph queried as the default graph (``default-graph-uri``), or ``None``: the server's own
        default graph (on Virtuoso the union of every graph it holds, its system graphs included)."""
        self.base_url, self.parameters = split_endpoint_url(url)
        if graph:
            self.parameters.append(("default-graph-uri", graph))
        self._server: str | None = None

    @property
    def identity(self) -> str:
        """The URL with its parameters, and the graph: each changes the answers (``identity``, when given: a KG
        served locally on a port of the moment is named by its content and engine instead)."""
        return self._identity or f"endpoint:{self.url}" + (f" graph={self.graph}" if self.graph else "")

    def engine(self) -> Engine:
        """The engine behind the URL, from the ``Server`` header of its answers (one ``ASK {}`` when no query has
        been answered yet; an endpoint that cannot be reached raises as any query would)."""
        if self._server is None:
            self.query("ASK {}", use_cache=False)
        return engine_from_server(self._server)

    def describe(self) -> dict:
        """Adds the endpoint that answers the queries, its graph and the engine it names (``Server`` header)."""
        engine = self.engine()
        return {**super().describe(), "endpoint": self.url, "graph": self.graph,
                "engine": f"{engine.label} (SPARQL endpoint {self.url})", "engine_name": engine.name,
                "engine_version": engine.version, "server": engine.server}

    def with_prefixes(self, sparql: str, declared: frozenset[str] | None = None) -> str:
        """``sparql`` after one line declaring the profile's prefixes that it does not declare itself
        (``declared``: the query's own prefixes, if already scanned)."""
        return declare_prefixes(sparql, self.profile.prefixes, declared)

    def _execute(self, sparql: str, timeout_s: float, max_rows: int) -> QueryResult:
        from SPARQLWrapper import GET, JSON, POST, TURTLE, SPARQLWrapper

        from sparqlab.kg.transport import Exchange, result_byte_cap

        found = scan(sparql)
        graph = found.keyword in ("CONSTRUCT", "DESCRIBE")
        text = self.with_prefixes(sparql, found.declared_prefixes)

        def attempt() -> tuple[bytes, Any]:
            with Exchange(self.url, timeout_s, result_byte_cap(max_rows), None if graph else max_rows) as exchange:
                client = SPARQLWrapper(self.base_url, agent=self.user_agent)
                for name, value in self.parameters:
                    client.addParameter(name, value)
                client.setOnlyConneg(True)
                client.setReturnFormat(TURTLE if graph else JSON)
                client.timeout = timeout_s  # setTimeout() would round it down to whole seconds (0.5 -> no timeout)
                client.setMethod(GET if len(self.url) + len(quote(text)) < _MAX_GET_URL else POST)
                client.setQuery(text)
                return self._fetch(client, exchange, timeout_s, added_line=text != sparql)

        limit = self.options.max_in_flight or self.profile.max_in_flight
        raw, headers = self.service.call(self.url, limit, attempt)
        self._server = headers.get("Server") or ""
        content_type = headers.get("Content-Type", "")
        result = (_graph_result(raw, content_type, self.url, max_rows) if graph
                  else _json_result(raw, self.url, content_type))
        if headers.get(ENGINE_CUT_HEADER):
            result.truncated = True
        if len(result.rows) > max_rows:
            result.rows = result.rows[:max_rows]
            result.truncated = True
        return result

    def _fetch(self, client: Any, exchange: Any, timeout_s: float, added_line: bool) -> tuple[bytes, Any]:
        """Run the request and read the answer within the ``exchange`` (a
        :class:`~sparqlab.kg.transport.Exchange`: its deadline, byte cap and origin); map every failure to a typed
        error, and the answers worth another try to :class:`~sparqlab.kg.service.Throttled`. Returns the body and
        the response's headers (content type, ``Server``, an engine's row cut)."""
        from SPARQLWrapper.SPARQLExceptions import QueryBadFormed, SPARQLWrapperException

        try:
            return exchange.query(client)
        except QueryBadFormed as error:
            body = _body(error)
            refusal = _engine_error(f"HTTP 400 from {self.url}: {body}")
            syntax = any(hint in body.lower() for hint in _SYNTAX_HINTS)
            if syntax and not isinstance(refusal, UnsupportedFunction):
                note = " (its line numbers count the added line of PREFIX declarations)" if added_line else ""
                raise SparqlSyntaxError(f"the endpoint rejected the query{note}: {body}") from None
            raise refusal from None
        except SPARQLWrapperException as error:
            body = _body(error)
            if SERVICE_TIMEOUT_MARK in body or any(hint in body.lower() for hint in _TIMEOUT_HINTS):
                self.service.count("server_timeouts")
                raise QueryTimeout(f"the endpoint {self.url} stopped the query (its own time limit): {body}") from None
            raise _engine_error(f"{type(error).__name__} from {self.url}: {body}") from None
        except urllib.error.HTTPError as error:
            body = _body(error)
            if error.code in RETRYABLE_STATUS:
                raise Throttled(error.code, retry_after_seconds(error.headers.get("Retry-After")), body) from None
            if error.code == 403:
                self.service.count("refused")
                raise EndpointUnavailable(
                    f"{self.url} refused this client (HTTP 403): {body}; a public service refuses clients without "
                    "an identifying User-Agent or over its policy, so every further query would be refused too"
                ) from None
            raise EndpointError(f"HTTP {error.code} from {self.url}: {body}") from None
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                raise _timeout(self.url, timeout_s) from None
            raise Throttled(None, None, f"cannot reach the SPARQL endpoint {self.url}: {error.reason}; is the "
                                        "server running and the URL right?", connection=True) from None
        except TimeoutError:
            raise _timeout(self.url, timeout_s) from None
        except (ConnectionError, http.client.HTTPException) as error:  # reset, closed mid-answer
            raise Throttled(None, None, f"connection to {self.url} failed: {error}", connection=True) from None
        except OSError as error:
            raise EndpointError(f"connection to {self.url} failed: {error}") from None


def _engine_error(message: str) -> EndpointError | UnsupportedFunction:
    """The typed error of an engine's refusal: :class:`UnsupportedFunction` (with the rewrite to try) when it
    lacks a function or cast the query calls, as on the embedded store, else :class:`EndpointError`."""
    if classify_engine_message(message) == UnsupportedFunction.kind:
        return UnsupportedFunction(f"{message}. {REWRITE_HINT}" if "XMLSchema#" in message else message)
    return EndpointError(message)


def _timeout(url: str, timeout_s: float) -> QueryTimeout:
    return QueryTimeout(
        f"no answer from {url} within {timeout_s:g} s; make the query more selective or raise the timeout"
    )


def _body(error: Exception) -> str:
    """The server's message from a SPARQLWrapper or urllib error, on one line and not too long."""
    if isinstance(error, urllib.error.HTTPError):
        try:
            text = error.read().decode("utf-8", "replace")
        except OSError:
            text = str(error)
    else:  # SPARQLWrapper keeps the server's answer only as a bytes repr inside its message
        text = str(error)
        if "Response:\n" in text:
            with contextlib.suppress(ValueError, SyntaxError, AttributeError):
                text = ast.literal_eval(text.split("Response:\n", 1)[1]).decode("utf-8", "replace")
    text = " ".join(text.replace("\\n", " ").split())
    return text[:500] + (" …" if len(text) > 500 else "")


def _json_result(raw: bytes, url: str, content_type: str) -> QueryResult:
    try:
        data = json.loads(raw)
    except RecursionError:
        raise EndpointError(f"malformed SPARQL JSON results from {url}: nested too deeply") from None
    except ValueError:
        text = raw[-2000:].decode("utf-8", "replace")
        if any(hint in text.lower() for hint in _TIMEOUT_HINTS):
            raise QueryTimeout(f"the endpoint {url} stopped the query mid-answer (its own time limit)") from None
        if not raw.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
            raise _not_a_result(url, content_type, raw) from None
        raise EndpointError(
            f"incomplete or invalid SPARQL JSON results from {url} ({len(raw)} bytes, ending {text[-120:]!r}); "
            "the server may have stopped the query at its own time limit"
        ) from None
    try:
        return QueryResult.from_json(_standard_ask(data))
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        raise EndpointError(f"malformed SPARQL JSON results from {url}: {type(error).__name__}: "
                            f"{error}"[:500]) from None


def _not_a_result(url: str, content_type: str, raw: bytes) -> EndpointUnavailable:
    """A 200 answer that is no SPARQL result at all (an HTML error page, a proxy's login form): the endpoint is
    broken for every query, so the run stops and its rerun asks these questions again — never a method's empty
    answer."""
    start = " ".join(raw[:160].decode("utf-8", "replace").split())
    return EndpointUnavailable(
        f"{url} answered a query with something that is not a SPARQL result ({content_type or 'no Content-Type'}, "
        f"{len(raw):,} bytes: {start!r}); the run stops rather than score it: check the endpoint and rerun")


def _standard_ask(data: Any) -> Any:
    """SPARQL JSON results as the standard writes them: Virtuoso 7 answers an ASK asked for JSON with a one-row
    SELECT of ``__ASK_RETVAL`` (``1`` or ``0``) instead of ``{"boolean": ...}``."""
    try:
        variables, bindings = data["head"]["vars"], data["results"]["bindings"]
    except (KeyError, TypeError):
        return data
    if [name.lower() for name in variables] == ["__ask_retval"] and len(bindings) <= 1:
        value = bindings[0].get(variables[0], {}).get("value") if bindings else "0"
        return {"head": {}, "boolean": value not in ("0", "false")}
    return data


def _graph_result(raw: bytes, content_type: str, url: str, max_rows: int) -> QueryResult:
    """A CONSTRUCT/DESCRIBE answer parsed as it is read, up to one triple over ``max_rows``. Parsers of RDF
    syntaxes run in linear time and memory except RDF/XML's entity expansion, refused
    (:func:`~sparqlab.kg.embedded.refuse_xml_entities`)."""
    import pyoxigraph

    from sparqlab.kg.embedded import GRAPH_VARS, refuse_xml_entities, triple_row

    media_type = content_type.split(";")[0].strip().lower() or "text/turtle"
    rdf_format = pyoxigraph.RdfFormat.from_media_type(media_type)
    if rdf_format is None:
        raise _not_a_result(url, content_type, raw)
    try:
        refuse_xml_entities(raw, rdf_format, "it")
        triples = list(islice(pyoxigraph.parse(raw, format=rdf_format), max_rows + 1))
    except (SyntaxError, ValueError) as error:
        raise EndpointError(f"cannot parse the graph returned by {url}: {error}") from None
    rows = [triple_row(t) for t in triples]
    return QueryResult("graph", vars=list(GRAPH_VARS), rows=rows[:max_rows], truncated=len(rows) > max_rows)
