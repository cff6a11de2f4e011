"""Knowledge-graph access: one object per KG, whatever the backend.

>>> kg = open_kg("movies")                        # the bundled movie KG (built on first use)
>>> kg.query('SELECT ?f WHERE { ?f rdfs:label "Wind" }').rows
>>> kg.search("Mathias Schoenarts")[0].label      # 'Matthias Schoenaerts'
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from sparqlab.core.cache import JsonCache
from sparqlab.core.paths import cache_dir
from sparqlab.kg import ck25 as _ck25  # noqa: F401  (registers the CK25 store builder)
from sparqlab.kg import dbpedia as _dbpedia  # noqa: F401  (registers the DBpedia profile and search)
from sparqlab.kg import freebase as _freebase  # noqa: F401  (registers the Freebase profile, schema and search)
from sparqlab.kg import movies as _movies  # noqa: F401  (registers the movie store builder)
from sparqlab.kg.base import KnowledgeGraph, QueryOptions
from sparqlab.kg.embedded import EmbeddedKG, load_rdf_file
from sparqlab.kg.endpoint import EndpointKG
from sparqlab.kg.errors import (
    EndpointError,
    KGError,
    QueryTimeout,
    SparqlSyntaxError,
    UnsupportedFunction,
    UpdateRefused,
)
from sparqlab.kg.guard import check_read_only
from sparqlab.kg.profiles import PROFILES, KGProfile, generic_profile, get_profile
from sparqlab.kg.results import QueryResult, Term
from sparqlab.kg.search import SearchHit

__all__ = [
    "PROFILES", "EmbeddedKG", "EndpointError", "EndpointKG", "KGError", "KGProfile", "KnowledgeGraph",
    "QueryOptions", "QueryResult", "QueryTimeout", "SearchHit", "SparqlSyntaxError", "Term", "UnsupportedFunction", "UpdateRefused",
    "check_read_only", "get_profile", "open_kg", "query_cache",
]


SEARCH_BACKENDS = {"local": "local", "api": "wikidata_api"}
"""``open_kg(search=...)`` values and the profile search backends they select."""


def query_cache() -> JsonCache:
    """The shared query cache file, ``cache_dir()/queries.sqlite`` (namespaced by each KG's identity); a corrupt
    file is moved aside and rebuilt, with a warning (every entry can be recomputed from the KG)."""
    return JsonCache(cache_dir() / "queries.sqlite", rebuild=True)


def open_kg(name_or_url_or_path: str | Path, *, profile: KGProfile | str | None = None,
            cache: bool | JsonCache = True, timeout_s: float = 30.0, max_rows: int = 10_000,
            workers: int = 2, memory_limit_gb: float | None = None, search: str | None = None) -> KnowledgeGraph:
    """Open a KG by profile name (``movies``, ``wikidata``), SPARQL endpoint URL, RDF file or store directory.

    ``profile`` overrides the profile (e.g. ``profile="wikidata"`` for a QLever mirror's URL); without it a URL
    or file gets a generic RDFS profile. ``cache`` is ``True`` for the shared query cache, ``False`` for none,
    or a :class:`JsonCache` to use. ``timeout_s`` and ``max_rows`` are the defaults of every ``query`` call;
    ``workers`` bounds concurrent queries on an embedded store and ``memory_limit_gb`` caps each worker's heap
    (default ``SPARQLAB_WORKER_MEMORY_GB`` or 2 GiB; see :data:`sparqlab.kg.embedded.DEFAULT_MEMORY_LIMIT_GB`).
    ``search`` overrides the profile's entity search: ``"api"`` (a ``wbsearchentities`` API) or ``"local"`` (a
    label index built from the KG itself, for a small mirror or a Wikidata-shaped RDF file behind an endpoint).
    """
    if isinstance(profile, str):
        profile = get_profile(profile)
    if search is not None:
        if search not in SEARCH_BACKENDS:
            raise ValueError(f"search must be one of {', '.join(SEARCH_BACKENDS)}; got {search!r}")
        profile = profile or PROFILES.get(str(name_or_url_or_path)) or generic_profile(str(name_or_url_or_path))
        profile = dataclasses.replace(profile, search=SEARCH_BACKENDS[search])
    query_cache_ = query_cache() if cache is True else cache if isinstance(cache, JsonCache) else None
    options = QueryOptions(timeout_s=timeout_s, max_rows=max_rows)
    target = str(name_or_url_or_path)
    embedded = {"cache": query_cache_, "options": options, "workers": workers}
    if memory_limit_gb is not None:
        embedded["memory_limit_gb"] = memory_limit_gb

    if target in PROFILES:
        named = PROFILES[target]
        if named.store_builder is not None:
            store = named.store_builder()
            return EmbeddedKG(store, profile or named, identity=f"{named.name}@{store.parent.name}", **embedded)
        if named.endpoint:
            return EndpointKG(named.endpoint, profile or named, cache=query_cache_, options=options)
        raise ValueError(f"KG {target!r} is not bundled and has no default endpoint: give the URL of a SPARQL "
                         f"endpoint serving it (--kg {target} --kg-url URL, or open_kg(URL, profile={target!r}))")
    if target.startswith(("http://", "https://")):
        return EndpointKG(target, profile or generic_profile(target), cache=query_cache_, options=options)
    path = Path(target).expanduser()
    if path.is_dir():
        return EmbeddedKG(path, profile or generic_profile(path.name), **embedded)
    if path.is_file():
        return load_rdf_file(path, profile, **embedded)
    raise ValueError(
        f"unknown KG {target!r}: expected a KG name ({', '.join(sorted(PROFILES))}), an http(s) SPARQL endpoint "
        "URL, an RDF file or a pyoxigraph store directory"
    )
