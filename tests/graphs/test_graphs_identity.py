"""The named KGs keep the identities existing runs recorded: a run id hashes the KG profile's digest and the store
folder's name, so neither may change when their code moves (issue 53: kg/ apart from the KGs)."""

from __future__ import annotations

import ast
import hashlib
import io
import tokenize
from dataclasses import replace
from pathlib import Path

import pytest

from sparqlab.engines import oxigraph_store
from sparqlab.graphs import movies
from sparqlab.graphs.profiles import WIKIDATA
from sparqlab.kg.profiles import PROFILES, ElementCatalogue
from sparqlab.text2sparql import ck25_store

RECORDED_PROFILE_DIGESTS = {
    "ck25": "699cabaf797df2e4", "dbpedia": "797f224b2f423002", "freebase": "93c924a8c846dec1",
    "movies": "261c247d17d23983", "orkg": "e35c95bafa6447a1", "wikidata": "e3c723d24a9a06ec",
}
"""Each named profile's digest as runs recorded it before the KG modules left ``kg/``."""

RECORDED_STORES = {"pyoxigraph": "0.5.13", "movies": "movies-2dbc3e39f342", "ck25": "ck25-bdf911c37647"}
"""The bundled stores' folder names (part of their KG identity) as runs recorded them, for this pyoxigraph."""

RECORDED_BUILDER_CODE = {
    movies: "e71a026725c06fef", ck25_store: "456ac5f69abeea90", oxigraph_store: "0dde25cab3e3d676",
}
"""The code of each module a store hash declares a version for (:data:`movies.BUILD_RECIPE`,
:data:`ck25_store.BUILD_RECIPE`, :data:`oxigraph_store.STORE_FORMAT`), without docstrings and comments."""


def code_fingerprint(path: Path) -> str:
    """A digest of a module's tokens, docstrings and comments left out: edits to its docs do not change it."""
    source = path.read_text(encoding="utf-8")
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        for statement in body if isinstance(body, list) else ():
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
                    and isinstance(statement.value.value, str):
                docstrings.update(range(statement.lineno, statement.end_lineno + 1))
    kept = [token.string for token in tokenize.generate_tokens(io.StringIO(source).readline)
            if token.type not in (tokenize.COMMENT, tokenize.NL) and token.start[0] not in docstrings]
    return hashlib.sha256("\x00".join(kept).encode()).hexdigest()[:16]


def test_every_named_profile_keeps_the_digest_runs_recorded():
    assert {name: profile.digest() for name, profile in PROFILES.loaded().items()
            if name in RECORDED_PROFILE_DIGESTS} == RECORDED_PROFILE_DIGESTS


def test_a_catalogue_enters_the_digest_by_its_declared_name_not_by_where_its_loader_lives():
    moved = replace(WIKIDATA, catalogue=ElementCatalogue(WIKIDATA.catalogue.name, lambda: []))
    renamed = replace(WIKIDATA, catalogue=ElementCatalogue("another catalogue", WIKIDATA.catalogue.load))
    assert moved.digest() == WIKIDATA.digest()
    assert renamed.digest() != WIKIDATA.digest()


def test_the_bundled_stores_keep_the_folder_names_runs_recorded():
    import pyoxigraph

    if pyoxigraph.__version__ != RECORDED_STORES["pyoxigraph"]:
        pytest.skip(f"store names were recorded with pyoxigraph {RECORDED_STORES['pyoxigraph']}")
    assert movies.build_dir().name == RECORDED_STORES["movies"]
    assert ck25_store.build_dir().name == RECORDED_STORES["ck25"]


@pytest.mark.parametrize("module", list(RECORDED_BUILDER_CODE), ids=lambda module: module.__name__)
def test_a_builder_whose_code_changes_is_looked_at_for_a_new_recipe_version(module):
    """A store hash covers a declared version, not the builder's source: this fails when the code changes, so
    whoever changes it decides whether the stores change too."""
    assert code_fingerprint(Path(module.__file__)) == RECORDED_BUILDER_CODE[module], (
        f"{module.__name__} changed: if what it writes changed, give its declared version (BUILD_RECIPE or "
        "STORE_FORMAT) a new value; then record the new fingerprint here")
