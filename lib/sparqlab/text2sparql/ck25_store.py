"""The CK25 corporate KG of the TEXT2SPARQL'25 challenge as a bundled embedded store (``sparqlab kg build ck25``).

Both Turtle files of ``data/ck25`` (``prod-inst.ttl``: the product vocabulary ``pv:`` with its 58
``rdfs:domain``/``rdfs:range`` declarations and the instances ``prodi:``; ``text2sparql.ttl``: the challenge's
metadata) are bulk-loaded into the default graph, which is what the challenge's endpoint answers the reference
queries from (they name no graph). Provenance and licences: ``data/ck25/PROVENANCE.md``.

The store lives in ``cache_dir()/kg/ck25-{build hash}/store``; the hash covers this builder's declared version
(:data:`BUILD_RECIPE`), the store format's, both input files and the pyoxigraph version, so a change rebuilds
instead of reusing a stale store; the store is checked against the integrity record of its build before each use.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

from sparqlab.core.paths import cache_dir, data_dir
from sparqlab.engines.oxigraph_store import builder_hash, ensure_built, install_store
from sparqlab.graphs.profiles import CK25_VOCAB
from sparqlab.kg.profiles import register_store_builder
from sparqlab.kg.vocab import RDF, RDFS

TURTLE_FILES = ("prod-inst.ttl", "text2sparql.ttl")

BUILD_RECIPE = "ca26004b24bc5a85cf5c8b01a208448dacf80d19ecf6bdda03984f93bd8e378c"
"""The version of what :func:`build` writes (part of the store's hash): give it a new value whenever that
changes. The first value is the SHA-256 this module's source had when the hash covered the source instead, so
the store built before, and the run ids naming it, stay valid."""


def ck25_dir() -> Path:
    """``data/ck25``: the KG, the questions, the official true result set and their provenance."""
    return data_dir() / "ck25"


def build_hash() -> str:
    """Changes whenever the store would: this builder's recipe, the Turtle files, the pyoxigraph version."""
    import pyoxigraph

    inputs = [hashlib.sha256((ck25_dir() / name).read_bytes()).hexdigest() for name in TURTLE_FILES]
    return builder_hash(BUILD_RECIPE, pyoxigraph.__version__, *inputs)


def build_dir() -> Path:
    return cache_dir() / "kg" / f"ck25-{build_hash()}"


def build(target: Path, force: bool = False) -> dict:
    """Bulk-load the Turtle files into ``target/store``; the counts go to ``build.json``."""
    import pyoxigraph

    def fill(store) -> dict:
        for name in TURTLE_FILES:
            store.bulk_load(path=str(ck25_dir() / name), format=pyoxigraph.RdfFormat.TURTLE)
        classes = Counter(q.object.value for q in store.quads_for_pattern(None, pyoxigraph.NamedNode(RDF + "type"),
                                                                           None))
        declared = sum(1 for _ in store.quads_for_pattern(None, pyoxigraph.NamedNode(RDFS + "domain"), None))
        ranged = sum(1 for _ in store.quads_for_pattern(None, pyoxigraph.NamedNode(RDFS + "range"), None))
        return {
            "triples": len(store),
            "files": list(TURTLE_FILES),
            "domain_declarations": declared,
            "range_declarations": ranged,
            "instances_per_class": {iri.removeprefix(CK25_VOCAB): n for iri, n in classes.most_common()
                                    if iri.startswith(CK25_VOCAB)},
        }

    return install_store(target, fill, force)


def ensure_store(force: bool = False) -> Path:
    """The store directory, built first if missing (or if ``force``) and checked against its integrity record.
    Safe when several processes race."""
    return ensure_built(build_dir(), build, force, rebuild="sparqlab kg build ck25 --force")


register_store_builder("ck25", ensure_store)
