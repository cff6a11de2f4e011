"""A Turtle fixture's store (what ``kg serve`` and the endpoint tests serve) is built like every other store: in a
scratch folder renamed into place, with its integrity record, and nothing left behind by a failed build."""

from __future__ import annotations

import json

import pytest

from sparqlab.engines.oxigraph_store import BUILD_FILE, BUILDING, store_problem, turtle_store


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_turtle_store_is_built_once_with_its_integrity_record(cache, small_ttl, small_triples):
    import pyoxigraph

    store = turtle_store("small", small_ttl)
    assert store.parent.parent == cache / "kg" and store.parent.name.startswith("small-")
    assert store_problem(store.parent) is None
    built = (store.parent / BUILD_FILE).stat().st_mtime_ns
    assert json.loads((store.parent / BUILD_FILE).read_text(encoding="utf-8"))["triples"] == small_triples
    reader = pyoxigraph.Store.read_only(str(store))
    assert len(reader) == small_triples
    del reader
    assert turtle_store("small", small_ttl) == store
    assert (store.parent / BUILD_FILE).stat().st_mtime_ns == built  # reused, not rebuilt


def test_a_turtle_file_that_does_not_parse_leaves_no_scratch_folder(cache, tmp_path):
    broken = tmp_path / "broken.ttl"
    broken.write_text("<http://example.org/s> <http://example.org/p> .\n", encoding="utf-8")
    with pytest.raises(SyntaxError):
        turtle_store("broken", broken)
    assert not list((cache / "kg").glob(BUILDING + "*"))
    assert not list((cache / "kg").glob("broken-*"))
