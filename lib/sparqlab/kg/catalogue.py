"""Elements of a KG known without reading the KG (a profile's ``catalogue``, e.g. DeSQ's KB memory of a KG far too
large to read), and Wikidata's: its properties with labels and descriptions (``data/wikidata_properties``) and the
items whose labels ship (``data/wikidata_labels``; see each folder's PROVENANCE.md). A leaf module: the profiles
import it."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sparqlab.core.paths import data_dir


@dataclass(frozen=True)
class CatalogueEntry:
    """One element of a KG: its IRI, label, description and kind."""

    iri: str
    label: str
    description: str
    kind: Literal["entity", "property", "class"]


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
