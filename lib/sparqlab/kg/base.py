"""The one interface to a knowledge graph, shared by the embedded store and remote endpoints.

:meth:`KnowledgeGraph.query` is the only way an untrusted query reaches a store: it applies the read-only guard, the
query cache, the timeout and the row cap, so backends only implement :meth:`KnowledgeGraph._execute`. Queries the
workbench writes itself to read a whole KG (label index, question-set generation) use
:meth:`KnowledgeGraph.bulk_values`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from sparqlab.core.cache import JsonCache
from sparqlab.core.hashing import stable_hash
from sparqlab.core.registry import Registry
from sparqlab.engines import Engine
from sparqlab.kg.errors import EndpointError, KGError, QueryTimeout, error_from_kind
from sparqlab.kg.results import QueryResult, SearchHit
from sparqlab.kg.service import RetryPolicy, ServiceClient
from sparqlab.sparql.screen import QUERY_FORMS, QueryForm, Refused, portable_query, screen

if TYPE_CHECKING:
    from sparqlab.kg.profiles import IdKind, KGProfile

def check_read_only(sparql: str, prefixes: dict[str, str] | None = None) -> QueryForm:
    """Stage 1 of the read-only screen (:func:`sparqlab.sparql.screen.screen`) as the KG layer's yes/no: raises
    :class:`~sparqlab.kg.errors.UpdateRefused`, :class:`~sparqlab.kg.errors.SparqlSyntaxError` or (too long)
    :class:`~sparqlab.kg.errors.EndpointError`, returns the query's form (``select``, ``ask`` or ``graph``). The
    full grammar check is the parser's, in the worker or at the endpoint."""
    try:
        return QUERY_FORMS[screen(sparql, prefixes).keyword]  # type: ignore[index, return-value]
    except Refused as refusal:
        raise error_from_kind(refusal.kind, str(refusal)) from None


BULK_TIMEOUT_S = 900.0
BULK_MAX_ROWS = 50_000_000
"""Limits of :meth:`KnowledgeGraph.bulk_values` on a remote KG: a label index or question-set build reads
everything once, which takes far longer than any one agent query may."""


@dataclass
class QueryOptions:
    """Defaults for every query of one KG object; each call may override them.

    ``timeout_s`` bounds a query's run time; ``max_rows`` caps SELECT/graph rows (``QueryResult.truncated`` says
    when it cut); ``cache_errors`` also caches typed errors (off by default: an endpoint may recover). A cached
    timeout is replayed only to calls whose timeout is no longer, so raising the timeout reruns the query.
    ``max_in_flight`` caps the queries running at once on a remote service (``None``: the profile's
    ``max_in_flight``); ``retry`` is how long a throttled service is retried
    (:class:`~sparqlab.kg.service.RetryPolicy`). Neither changes a result, only how it is obtained.
    """

    timeout_s: float = 30.0
    max_rows: int = 10_000
    cache_errors: bool = False
    max_in_flight: int | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)


class KnowledgeGraph:
    """A KG: a backend plus a :class:`~sparqlab.kg.profiles.KGProfile` and an optional query cache."""

    def __init__(self, profile: KGProfile, cache: JsonCache | None = None, options: QueryOptions | None = None):
        self.profile = profile
        self.cache = cache
        self.options = options or QueryOptions()
        self.service = ServiceClient(self.options.retry)
        """Retries and in-flight limits of the services this KG calls (its endpoint, a search API); its
        :meth:`~sparqlab.kg.service.ServiceClient.stats` are a run's ``kg_retries`` / ``kg_throttled`` ..."""

    @property
    def identity(self) -> str:
        """What distinguishes this KG's results from another's (endpoint URL, store path + build hash)."""
        raise NotImplementedError

    def _execute(self, sparql: str, timeout_s: float, max_rows: int) -> QueryResult:
        raise NotImplementedError

    def engine(self) -> Engine:
        """The SPARQL engine that answers this KG's queries (:mod:`sparqlab.engines`)."""
        return Engine("unknown")

    def cache_key(self, sparql: str, max_rows: int) -> str:
        """The query cache's key of one query within this KG's :attr:`identity`: everything else that changes
        the answer — the row cap and the profile's predefined prefixes (the same text means another query under
        another profile)."""
        return stable_hash([sparql, max_rows, sorted(self.profile.prefixes.items())], 32)

    def query(self, sparql: str, *, timeout_s: float | None = None, max_rows: int | None = None,
              use_cache: bool = True) -> QueryResult:
        """Run a read-only query. Raises a :class:`~sparqlab.kg.errors.KGError` subclass on failure."""
        check_read_only(sparql, self.profile.prefixes)
        timeout_s = self.options.timeout_s if timeout_s is None else timeout_s
        max_rows = self.options.max_rows if max_rows is None else max_rows
        key = self.cache_key(sparql, max_rows)
        if self.cache is not None and use_cache:
            hit = self.cache.get(self.identity, key)
            if hit is not None and "error" in hit:
                error = hit["error"]
                if timeout_s <= error.get("timeout_s", float("inf")):  # else a longer timeout may succeed
                    raise error_from_kind(error["kind"], error["message"])
            elif hit is not None:
                result = QueryResult.from_json(hit)
                result.cached = True
                return result
        start = time.perf_counter()
        try:
            result = self._execute(portable_query(sparql, self.profile.prefixes), timeout_s, max_rows)
        except KGError as error:
            if self.cache is not None and use_cache and self.options.cache_errors:
                entry = {"kind": error.kind, "message": str(error)}
                if isinstance(error, QueryTimeout):
                    entry["timeout_s"] = timeout_s
                self.cache.put(self.identity, key, {"error": entry})
            raise
        result.elapsed_s = time.perf_counter() - start
        if self.cache is not None and use_cache:
            self.cache.put(self.identity, key, result.to_json())
        return result

    def bulk_values(self, sparql: str) -> list[dict[str, str]]:
        """Every row of a trusted query the workbench writes itself (label index, question-set generation), as
        ``{variable: value}``; uncached, with :data:`BULK_TIMEOUT_S`, and an error rather than a cut result.

        Never pass it generated SPARQL: an embedded store answers it in-process, without the worker's timeout.
        """
        result = self.query(sparql, timeout_s=BULK_TIMEOUT_S, max_rows=BULK_MAX_ROWS, use_cache=False)
        if result.truncated and len(result.rows) < BULK_MAX_ROWS:
            raise EndpointError(
                f"{self.identity} cut a full read at {len(result.rows):,} rows, its engine's own row cap (Virtuoso: "
                "ResultSetMaxRows in virtuoso.ini); raise the cap to build an index or sample from this KG")
        if result.truncated:
            raise EndpointError(
                f"reading all of {self.identity} gives more than {BULK_MAX_ROWS:,} rows: too large to index or "
                "sample locally; a KG this size needs a search API (as the wikidata profile uses)"
            )
        return [{var: term.value for var, term in row.items()} for row in result.rows]

    def search(self, text: str, *, kind: str = "entity", limit: int = 10,
               types: list[str] | None = None) -> list[SearchHit]:
        """Entities (or ``kind="property"``/``"class"``) whose label matches ``text``, best first, as
        :class:`~sparqlab.kg.results.SearchHit` (id, label, description, types); backend chosen by the profile
        (:data:`SEARCHERS`)."""
        return searcher_for(self).search(text, kind=kind, limit=limit, types=types)

    def close(self) -> None:
        """Release what the backend holds (worker processes); a no-op for plain endpoints."""

    def __enter__(self) -> KnowledgeGraph:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def describe(self) -> dict:
        """What a manifest records about this KG."""
        return {"profile": self.profile.name, "identity": self.identity, "backend": type(self).__name__}


SEARCHERS: Registry[Callable[[KnowledgeGraph], Searcher]] = Registry("search backend")
"""Search backends by the profile ``search`` value they serve -> ``factory(kg)``: ``local`` (the label index, in
:mod:`sparqlab.kg.search`, which the package imports) and those KG modules register (Wikidata's ``wikidata_api``,
Freebase's ``freebase_labels``). The table lives here, beside the interface whose :meth:`KnowledgeGraph.search`
reads it, so that the backends build on the interface and not the other way round."""


class Searcher(Protocol):
    """A search backend: what :meth:`KnowledgeGraph.search` delegates to."""

    def search(self, text: str, *, kind: IdKind = "entity", limit: int = 10,
               types: list[str] | None = None) -> list[SearchHit]: ...


def register_searcher(name: str, factory: Callable[[KnowledgeGraph], Searcher]) -> None:
    """Make ``factory(kg)`` the search backend of profiles whose ``search`` is ``name``."""
    SEARCHERS.register(name, factory)


def searcher_for(kg: KnowledgeGraph) -> Searcher:
    """The search backend the KG's profile asks for, created once per KG object."""
    existing = kg.__dict__.get("_searcher")
    if existing is None:
        existing = SEARCHERS.get(kg.profile.search)(kg)
        kg.__dict__["_searcher"] = existing
    return existing
