"""Wikidata's own pieces beside its profile (:mod:`.profiles`): its element catalogue, the properties with labels and
descriptions (``data/wikidata_properties``) and the items whose labels ship (``data/wikidata_labels``; see each
folder's PROVENANCE.md), and entity search through the public ``wbsearchentities`` API (``search="wikidata_api"``,
:class:`WikidataApiSearch`, registered on import): its hits are kept in the API's order, alias matches included
(responses cached in the KG's query cache for replay; types fetched with one SPARQL query); any similarity
threshold is the caller's option.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from sparqlab.core.hashing import stable_hash
from sparqlab.core.paths import data_dir
from sparqlab.kg.base import KnowledgeGraph, register_searcher
from sparqlab.kg.errors import EndpointError, EndpointUnavailable
from sparqlab.kg.profiles import CatalogueEntry, ElementCatalogue, IdKind
from sparqlab.kg.results import SearchHit
from sparqlab.kg.search import add_types, matches_types, similarity
from sparqlab.kg.service import RETRYABLE_STATUS, Throttled, retry_after_seconds
from sparqlab.kg.vocab import USER_AGENT


def wikidata_properties(folder: str | Path | None = None) -> list[CatalogueEntry]:
    """Every property of the list, in its order: IRI and label from ``wikidata_properties.tsv``, description from
    CoDEx where it has one, else ``"Wikidata property (<datatype>)"``."""
    folder = Path(folder or data_dir() / "wikidata_properties")
    descriptions = json.loads((folder / "codex_relations.json").read_text(encoding="utf-8"))
    entries = []
    with open(folder / "wikidata_properties.tsv", encoding="utf-8", newline="") as handle:
        for number, row in enumerate(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE), start=1):
            if len(row) < 4:
                raise ValueError(f"{folder / 'wikidata_properties.tsv'}:{number}: expected 5 tab-separated fields")
            ident = row[1].rsplit("/", 1)[-1]
            datatype = row[2].rsplit("#", 1)[-1]
            description = descriptions.get(ident, {}).get("description") or f"Wikidata property ({datatype})"
            entries.append(CatalogueEntry(row[1], row[3], description, "property"))
    return entries


WD_ENTITY = "http://www.wikidata.org/entity/"

ITEMS_QUERY = """SELECT ?item ?label ?description WHERE {
    ?item <http://www.w3.org/2000/01/rdf-schema#label> ?label FILTER(LANG(?label) = "en")
    OPTIONAL { ?item <http://schema.org/description> ?description FILTER(LANG(?description) = "en") }
    FILTER(STRSTARTS(STR(?item), "http://www.wikidata.org/entity/Q")) }"""


def wikidata_items(folder: str | Path | None = None) -> list[CatalogueEntry]:
    """Wikidata items with their English label and description, in id order: CoDEx's classes and the items of
    the bundled Wikidata RDF files (``data/wikidata_labels``). Kind ``entity``, as every ``Q`` id is."""
    import pyoxigraph

    folder = Path(folder or data_dir() / "wikidata_labels")
    found: dict[str, CatalogueEntry] = {}
    for ident, item in json.loads((folder / "codex_types.json").read_text(encoding="utf-8")).items():
        found[ident] = CatalogueEntry(WD_ENTITY + ident, item.get("label", ""), item.get("description") or "",
                                      "entity")
    for path in sorted(folder.glob("*.ttl")):
        store = pyoxigraph.Store()
        store.load(path=str(path), format=pyoxigraph.RdfFormat.TURTLE, lenient=True)
        for row in store.query(ITEMS_QUERY):
            ident = row["item"].value.rsplit("/", 1)[-1]
            description = row["description"].value if row["description"] is not None else ""
            found.setdefault(ident, CatalogueEntry(WD_ENTITY + ident, row["label"].value, description, "entity"))
    return [found[ident] for ident in sorted(found)]


def wikidata_catalogue() -> list[CatalogueEntry]:
    """Wikidata's catalogue: every property of the list, then every item whose label and description ship."""
    return wikidata_properties() + wikidata_items()


CATALOGUE = ElementCatalogue("sparqlab.kg.catalogue.wikidata_catalogue", wikidata_catalogue)
"""The catalogue of the ``wikidata`` profile, named as its loader was when run ids began to hash it."""


MAXLAG_S = 5
"""The ``maxlag`` every search request sends (Wikimedia's guidance for automated clients): under replication lag
the API answers a ``maxlag`` error with ``Retry-After`` instead of adding load, and the request is retried."""


MAX_SEARCH_REPLY_BYTES = 4 * 2**20
"""Cap of one search reply's body (4 MiB; 50 hits of ``wbsearchentities`` take a few KiB)."""


class WikidataApiSearch:
    """Search through a MediaWiki ``wbsearchentities`` API (the ``wikidata`` profile's ``search_api_url``), with
    the KG's retries and in-flight limit (:mod:`sparqlab.kg.service`): HTTP 429 / 5xx and ``maxlag`` errors are
    waited out, within the run's retry budget."""

    def __init__(self, kg: KnowledgeGraph, api_url: str, language: str = "en", timeout_s: float = 20.0):
        self.kg = kg
        self.api_url = api_url
        self.language = language
        self.timeout_s = timeout_s

    def _call(self, params: dict) -> dict:
        key = stable_hash(params, 32)
        namespace = f"search:{self.api_url}"
        if self.kg.cache is not None and (hit := self.kg.cache.get(namespace, key)) is not None:
            return hit
        limit = self.kg.options.max_in_flight or self.kg.profile.max_in_flight
        data = self.kg.service.call(self.api_url, limit, lambda: self._request({**params, "maxlag": MAXLAG_S}))
        if self.kg.cache is not None:
            self.kg.cache.put(namespace, key, data)
        return data

    def _request(self, params: dict) -> dict:
        """One API request, bounded as a whole (:func:`~sparqlab.core.http.fetch`: ``timeout_s`` however slowly
        the reply comes, :data:`MAX_SEARCH_REPLY_BYTES`, same origin): its JSON, or
        :class:`~sparqlab.kg.service.Throttled` for an answer worth retrying."""
        import httpx2

        from sparqlab.core.http import ReplyRefused, fetch

        try:
            response, body = fetch(self.api_url, params={k: str(v) for k, v in params.items()},
                                   headers={"User-Agent": USER_AGENT}, timeout_s=self.timeout_s,
                                   max_bytes=MAX_SEARCH_REPLY_BYTES, hint="lower the search limit")
        except (httpx2.ConnectError, httpx2.RemoteProtocolError, httpx2.ReadError) as error:
            raise Throttled(None, None, f"entity search at {self.api_url}: {error}", connection=True) from None
        except TimeoutError:
            raise EndpointError(f"entity search at {self.api_url} failed: no complete reply within "
                                f"{self.timeout_s:g} s") from None
        except (httpx2.HTTPError, ReplyRefused) as error:
            raise EndpointError(f"entity search at {self.api_url} failed: {error}") from None
        text = body.decode("utf-8", "replace")
        retry_after = retry_after_seconds(response.headers.get("Retry-After"))
        if response.status_code in RETRYABLE_STATUS:
            raise Throttled(response.status_code, retry_after, text[:300])
        if response.status_code == 403:
            self.kg.service.count("refused")
            raise EndpointUnavailable(f"entity search at {self.api_url} refused this client (HTTP 403): {text[:300]}")
        if response.status_code >= 400:
            raise EndpointError(f"entity search at {self.api_url} failed: HTTP {response.status_code}: {text[:300]}")
        try:
            data = json.loads(body)
        except ValueError as error:
            raise EndpointError(f"entity search at {self.api_url} failed: {error}") from None
        error = data.get("error") if isinstance(data, dict) else None
        if error and error.get("code") == "maxlag":
            raise Throttled(None, retry_after if retry_after is not None else float(MAXLAG_S), error.get("info", ""))
        if error:
            raise EndpointError(f"entity search at {self.api_url} failed: {error}")
        return data

    def search(self, text: str, *, kind: IdKind = "entity", limit: int = 10,
               types: list[str] | None = None) -> list[SearchHit]:
        if kind == "class":
            kind = "entity"  # Wikidata classes are items
        data = self._call({
            "action": "wbsearchentities", "search": text, "language": self.language, "uselang": self.language,
            "type": "item" if kind == "entity" else "property", "limit": 50 if types else min(limit, 50),
            "format": "json",
        })
        hits = [api_hit(m, kind, text) for m in data.get("search", [])]
        add_types(self.kg, hits, self.language)
        return [h for h in hits if matches_types(h, types)][:limit]


def api_hit(match: dict, kind: IdKind, query: str) -> SearchHit:
    """One ``wbsearchentities`` result as a hit: its label (the id when it has none), the alias or other-language
    label the API matched (``match.text``) when that is not the label, and the similarity of the query to the
    matched name as ``score`` (informative: the API's order is kept)."""
    label = match.get("label", match["id"])
    matched = (match.get("match") or {}).get("text", "")
    matched = "" if matched == label else matched
    return SearchHit(match["concepturi"], label, match.get("description", ""), kind=kind, matched=matched,
                     score=round(similarity(query, matched or label), 2))


register_searcher("wikidata_api", lambda kg: WikidataApiSearch(kg, kg.profile.search_api_url or "",
                                                                 kg.profile.label_languages[0]))
