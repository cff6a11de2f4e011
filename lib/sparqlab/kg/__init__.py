"""Knowledge-graph access: one object per KG, whatever the backend.

>>> kg = open_kg("movies")                        # the bundled movie KG (built on first use)
>>> kg.query('SELECT ?f WHERE { ?f rdfs:label "Wind" }').rows
>>> kg.search("Mathias Schoenarts")[0].label      # 'Matthias Schoenaerts'
"""

from __future__ import annotations

import contextlib
import dataclasses
import weakref
from pathlib import Path

from sparqlab.core.cache import JsonCache
from sparqlab.core.paths import cache_dir
from sparqlab.core.plugins import KG_GROUP, load_plugins
from sparqlab.core.typed import Range, check_range, coerce
from sparqlab.engines import ENGINES
from sparqlab.kg import search as _search_backends  # noqa: F401  registers "local"
from sparqlab.kg.base import KnowledgeGraph, QueryOptions, check_read_only
from sparqlab.kg.embedded import EmbeddedKG, derived_profile, load_rdf_file, register_file_kg
from sparqlab.kg.endpoint import EndpointKG
from sparqlab.kg.errors import (
    EndpointError,
    EndpointUnavailable,
    KGError,
    QueryTimeout,
    SparqlSyntaxError,
    UnsupportedFunction,
    UpdateRefused,
)
from sparqlab.kg.profiles import PROFILES, KGProfile, generic_profile, get_profile, known_prefixes
from sparqlab.kg.results import QueryResult, SearchHit, Term
from sparqlab.kg.service import RetryPolicy

__all__ = [
    "PROFILES", "EmbeddedKG", "EndpointError", "EndpointKG", "EndpointUnavailable", "KGError", "KGProfile",
    "KnowledgeGraph", "QueryOptions", "QueryResult", "QueryTimeout", "SearchHit", "SparqlSyntaxError", "Term",
    "UnsupportedFunction", "UpdateRefused",
    "check_kg_options", "check_read_only", "get_profile", "open_kg", "query_cache", "register_file_kg",
]


load_plugins(KG_GROUP)  # the KG modules (sparqlab's Freebase, DBpedia, movie, CK25; plug-ins'): their profiles
# and prefixes are known to every layer above, as answers are normalised with every profile's namespaces
known_prefixes()  # the prefixes queries are read with: fixed now, once every KG module has registered its profile

SEARCH_BACKENDS = {"local": "local", "api": "wikidata_api"}
"""``open_kg(search=...)`` values and the profile search backends they select."""


KG_NUMBERS: dict[str, tuple[type, Range]] = {
    "timeout_s": (float, Range(gt=0)),
    "max_rows": (int, Range(ge=1)),
    "workers": (int, Range(ge=1)),
    "memory_limit_gb": (float, Range(gt=0)),
    "max_in_flight": (int, Range(ge=1)),
}
"""The numeric options of :func:`open_kg`: their type and allowed interval (a zero row cap or timeout would
answer every query with nothing; ``memory_limit_gb="8G"`` would be multiplied into a 2 GiB string)."""


def check_kg_options(options: dict, where: str = "open_kg") -> None:
    """Refuse a numeric KG option of the wrong type or outside its range (:data:`KG_NUMBERS`), with a
    ``ValueError`` naming it; ``None`` leaves an option to its default."""
    for name, (kind, allowed) in KG_NUMBERS.items():
        value = options.get(name)
        if value is not None:
            check_range(coerce(value, kind, f"{where} {name}"), allowed, f"{where} {name}")


def query_cache() -> JsonCache:
    """The shared query cache file, ``cache_dir()/queries.sqlite`` (namespaced by each KG's identity); a corrupt
    file is moved aside and rebuilt, with a warning (every entry can be recomputed from the KG)."""
    return JsonCache(cache_dir() / "queries.sqlite", rebuild=True)


def open_kg(name_or_url_or_path: str | Path, *, profile: KGProfile | str | None = None,
            cache: bool | JsonCache = True, timeout_s: float = 30.0, max_rows: int = 10_000,
            workers: int = 2, memory_limit_gb: float | None = None, search: str | None = None,
            max_in_flight: int | None = None, retry: RetryPolicy | dict | None = None,
            graph: str | None = None, engine: str | None = None) -> KnowledgeGraph:
    """Open a KG by profile name (``movies``, ``wikidata``), SPARQL endpoint URL, RDF file or store directory.

    ``profile`` overrides the profile (e.g. ``profile="wikidata"`` for a QLever mirror's URL); without it a URL,
    file or store folder gets the profile derived from its data (:mod:`sparqlab.graphs.derive`: its prefixes,
    labels and schema, refined by a ``<name>.kg.yaml`` file beside a file or folder). A name is a registered
    profile's (``sparqlab kg prefixes`` lists them; plug-ins add more). ``cache`` is ``True`` for the shared query cache, ``False`` for none,
    or a :class:`JsonCache` to use. ``timeout_s`` and ``max_rows`` are the defaults of every ``query`` call;
    ``workers`` bounds concurrent queries on an embedded store and ``memory_limit_gb`` caps each worker's heap
    (default ``SPARQLAB_WORKER_MEMORY_GB`` or 2 GiB; see :data:`sparqlab.kg.embedded.DEFAULT_MEMORY_LIMIT_GB`).
    ``search`` overrides the profile's entity search: ``"api"`` (a ``wbsearchentities`` API) or ``"local"`` (a
    label index built from the KG itself, for a small mirror or a Wikidata-shaped RDF file behind an endpoint).
    ``max_in_flight`` caps the queries running at once on a remote service (default: the profile's, Wikidata's
    query service allows 5; raise it for a mirror of your own) and ``retry`` is how long a throttling service is
    retried before the run stops (:class:`~sparqlab.kg.service.RetryPolicy` or a dict of its fields).
    ``graph``: the named graph an endpoint queries as its default graph (sent as ``default-graph-uri``; part of
    the KG's identity), as for a KG loaded into a named graph of Virtuoso; an endpoint URL may also carry
    ``?default-graph-uri=...`` and other parameters itself (docs/engines.md). ``engine``: answer the queries of a
    bundled, file or folder KG with another engine than the embedded store — ``oxigraph-server`` or ``virtuoso``
    (:data:`~sparqlab.engines.ENGINES`), started on 127.0.0.1 for as long as the KG object lives (closed or
    collected) and named by the KG's content and the engine, so its results are cached and its runs resumed.
    """
    check_kg_options({"timeout_s": timeout_s, "max_rows": max_rows, "workers": workers,
                      "memory_limit_gb": memory_limit_gb, "max_in_flight": max_in_flight})
    if engine not in (None, "embedded"):
        if graph:
            raise ValueError(f"graph={graph} names a graph of an endpoint; engine={engine} serves the KG itself")
        return _served(name_or_url_or_path, engine, profile=profile, cache=cache, timeout_s=timeout_s,
                       max_rows=max_rows, max_in_flight=max_in_flight, retry=retry, search=search)
    if isinstance(profile, str):
        profile = get_profile(profile)
    target = str(name_or_url_or_path)
    path = Path(target).expanduser()
    named = target in PROFILES or (not target.startswith(("http://", "https://")) and not path.exists()
                                   and PROFILES.known(target))
    if search is not None:
        if search not in SEARCH_BACKENDS:
            raise ValueError(f"search must be one of {', '.join(SEARCH_BACKENDS)}; got {search!r}")
        profile = profile or (PROFILES.get(target) if named else _derive(target, path, cache, timeout_s, max_rows))
        profile = dataclasses.replace(profile, search=SEARCH_BACKENDS[search])
    query_cache_ = query_cache() if cache is True else cache if isinstance(cache, JsonCache) else None
    options = QueryOptions(timeout_s=timeout_s, max_rows=max_rows, max_in_flight=max_in_flight,
                           retry=RetryPolicy.from_value(retry))
    endpoint = {"cache": query_cache_, "options": options, "graph": graph}
    embedded = {"cache": query_cache_, "options": options, "workers": workers}
    if memory_limit_gb is not None:
        embedded["memory_limit_gb"] = memory_limit_gb

    if named:
        named_profile = PROFILES.get(target)
        builder = named_profile.store_builder
        if builder is not None:
            _no_graph(graph, target)
            store = builder()
            return EmbeddedKG(store, profile or named_profile, identity=f"{named_profile.name}@{store.parent.name}",
                              **embedded)
        if named_profile.endpoint:
            return EndpointKG(named_profile.endpoint, profile or named_profile, **endpoint)
        raise ValueError(f"KG {target!r} is not bundled and has no default endpoint: give the URL of a SPARQL "
                         f"endpoint serving it (--kg {target} --kg-url URL, or open_kg(URL, profile={target!r}))")
    if target.startswith(("http://", "https://")):
        kg = EndpointKG(target, profile or generic_profile(target), **endpoint)
        if profile is None:
            kg.profile = derived_profile(kg, target, {}, None)
        return kg
    _no_graph(graph, target)
    if path.is_dir():
        return EmbeddedKG(path, profile or derived_profile(path, path.name, {}, path), **embedded)
    if path.is_file():
        return load_rdf_file(path, profile, **embedded)
    raise ValueError(
        f"{PROFILES.unknown_message(target).replace('KG profile', 'KG')}; nor is it an http(s) SPARQL endpoint "
        "URL, an RDF file or a pyoxigraph store directory"
    )


def _served(target: str | Path, engine: str, *, profile: KGProfile | str | None, **options) -> EndpointKG:
    """The KG ``target`` (bundled, file or folder) behind a local server of ``engine`` (:func:`open_kg`)."""
    from sparqlab.engines import serve_on

    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}; got {engine!r}")
    store, identity, local_profile = local_store(target, profile)
    identity = f"{identity} on {engine}"
    servers = contextlib.ExitStack()
    url = servers.enter_context(serve_on(engine, store))
    try:
        opened = open_kg(url, profile=local_profile, **options)
    except BaseException:
        servers.close()
        raise
    kg = EndpointKG(url, opened.profile, cache=opened.cache, options=opened.options, identity=identity)
    kg.close = weakref.finalize(kg, servers.close)  # close() stops the server; so does collection or exit
    return kg


def local_store(target: str | Path, profile: KGProfile | str | None = None) -> tuple[Path, str, KGProfile]:
    """The store folder, identity and profile of the bundled, file or folder KG ``target``: what a local server of
    another engine serves (``open_kg(engine=...)``, ``sparqlab kg serve``); ``ValueError`` for an endpoint."""
    with open_kg(target, profile=profile, cache=False, workers=1) as local:
        if not isinstance(local, EmbeddedKG):
            raise ValueError(f"{target} is a SPARQL endpoint already: another engine serves a bundled, file or "
                             "folder KG locally")
        return local.store_path, local.identity, local.profile


def _no_graph(graph: str | None, target: str) -> None:
    if graph:
        raise ValueError(f"graph={graph} selects a named graph of a SPARQL endpoint; {target} opens an embedded "
                         "store, whose RDF is queried as one default graph")


def _derive(target: str, path: Path, cache, timeout_s: float, max_rows: int) -> KGProfile:
    """The derived profile of a URL, file or folder (to change its search backend before opening it for good)."""
    with open_kg(target if not path.exists() else path, cache=cache, timeout_s=timeout_s, max_rows=max_rows) as kg:
        return kg.profile
