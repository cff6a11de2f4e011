"""Elements of a KG known without reading the KG (a profile's ``catalogue``, e.g. DeSQ's KB memory of a KG far too
large to read), and Wikidata's: its properties with labels and descriptions, from ``data/wikidata_properties``
(see its PROVENANCE.md). A leaf module: the profiles import it."""

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
