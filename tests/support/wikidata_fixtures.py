"""The Wikidata-shaped test KGs (imported by the suite's conftest files and by tests that start their own
servers)."""

import warnings
from pathlib import Path

from sparqlab.core.paths import PROJECT_ROOT

WIKIDATA_FIXTURES = {
    "handwritten": PROJECT_ROOT / "data" / "wikidata_test" / "wikidata_test.ttl",
    "real": PROJECT_ROOT / "data" / "wikidata_real" / "wikidata_real.ttl",
}
"""The hand-written Wikidata-shaped KG (truthy edges only) and the real-shaped one (the shipped munged Q42 plus
the same entities as statements with ranks, qualifiers and references; data/wikidata_real/PROVENANCE.md)."""


def wikidata_store(ttl: Path, folder: Path) -> Path:
    """A pyoxigraph store at ``folder/store`` holding ``ttl`` (loaded leniently, as real dumps need), closed so a
    server can open it."""
    import pyoxigraph

    from sparqlab.kg.embedded import load_rdf

    path = folder / "store"
    store = pyoxigraph.Store(str(path))
    load_rdf(store, ttl)
    store.flush()
    del store
    return path


def open_wikidata(ttl: Path, **options):
    """An embedded KG over ``ttl`` with the wikidata profile, local search and no query cache."""
    from sparqlab.kg import open_kg
    from sparqlab.kg.embedded import LenientLoad

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LenientLoad)
        return open_kg(ttl, profile="wikidata", search="local", cache=False, **options)
