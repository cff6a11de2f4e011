"""Typed errors of the KG layer. Each message says what went wrong and what to try."""

from __future__ import annotations

from sparqlab.core.errors import InfrastructureError


class KGError(Exception):
    """Base class: anything that stops a query from producing a result."""

    kind = "kg_error"


class SparqlSyntaxError(KGError):
    """The query text does not parse as SPARQL 1.1."""

    kind = "syntax_error"


class QueryTimeout(KGError):
    """The query ran longer than its timeout."""

    kind = "timeout"


class EndpointError(KGError):
    """The store or endpoint refused or failed the query (HTTP error, unreachable, bad response)."""

    kind = "endpoint_error"


class UpdateRefused(KGError):
    """A SPARQL Update (INSERT, DELETE, LOAD, CLEAR, DROP, CREATE, ...) was refused by the read-only guard."""

    kind = "update_refused"


class UnsupportedFunction(KGError):
    """The engine does not implement a function or cast the query calls (oxigraph: ``xsd:int(...)`` and the other
    derived-integer casts); :func:`sparqlab.sparql.rewrite.rewrite_casts` is the documented workaround."""

    kind = "unsupported_function"


UNSUPPORTED_FUNCTION_MARKS = ("is not supported", "is not implemented")
"""What an engine's message says when a query calls a function it lacks: oxigraph's ``The custom function <…> is
not supported``, Virtuoso's ``Built-in function is not implemented`` (``BNODE()``)."""


def classify_engine_message(message: str) -> str:
    """The error kind of an engine's failure message: ``unsupported_function`` for a missing function or cast,
    else ``endpoint_error``."""
    lowered = message.lower()
    return UnsupportedFunction.kind if "function" in lowered and any(
        mark in lowered for mark in UNSUPPORTED_FUNCTION_MARKS) else EndpointError.kind


def error_from_kind(kind: str, message: str) -> KGError:
    """Rebuild a typed error from its ``kind`` and message (cached errors, errors sent by a worker process)."""
    for cls in KGError.__subclasses__():
        if cls.kind == kind:
            return cls(message)
    return KGError(message)


class EndpointUnavailable(InfrastructureError):
    """The service keeps refusing this client — throttled (HTTP 429 / 503, ``maxlag``) or unreachable past the
    retry budget, or refused outright (HTTP 403) — so every further query would fail the same way: the run stops
    (its finished questions are saved) instead of scoring the refusal. Deliberately not a :class:`KGError`: it is
    never an agent's observation, a cached error or a gold error."""

    kind = "endpoint_unavailable"
