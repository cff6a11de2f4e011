"""Typed errors of the KG layer. Each message says what went wrong and what to try."""

from __future__ import annotations


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


def error_from_kind(kind: str, message: str) -> KGError:
    """Rebuild a typed error from its ``kind`` and message (cached errors, errors sent by a worker process)."""
    for cls in KGError.__subclasses__():
        if cls.kind == kind:
            return cls(message)
    return KGError(message)
