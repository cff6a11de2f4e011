"""The KB memory with the real offline MiniLM: build, save, reload, exact search by kind; the memory sources."""

import importlib.util

import numpy as np
import pytest
from desq_helpers import MOVIE_ENTRIES

from sparqlab.kg import get_profile
from sparqlab.methods.desq.kb_memory import Entry, KBMemory, catalogue_entries, limit_entries


@pytest.fixture(scope="module")
def minilm_memory():
    return KBMemory.build(MOVIE_ENTRIES, progress=False)


def test_build_save_reload_and_search(minilm_memory, tmp_path):
    assert len(minilm_memory) == 8 and minilm_memory.dimension == 384
    assert minilm_memory.kinds == {"entity", "property", "class"}
    assert np.allclose(np.linalg.norm(minilm_memory.vectors, axis=1), 1.0, atol=1e-4)
    minilm_memory.save(tmp_path / "memory")
    again = KBMemory.load(tmp_path / "memory")
    assert again.digest == minilm_memory.digest and again.entries == minilm_memory.entries
    assert np.array_equal(again.vectors, minilm_memory.vectors)
    hits = again.search("Ridley Scott", "a film director", kind="entity", k=2)
    assert hits[0].entry.id == "entity/Person/Ridley%20Scott" and hits[0].score > hits[1].score
    assert again.search("directed by", "who directed the film", kind="property")[0].entry.id == \
        "relation/directed_by"
    assert all(h.entry.kind == "class" for h in again.search("Ridley Scott", kind="class", k=3))
    # every entry finds itself first
    for entry in MOVIE_ENTRIES:
        assert again.search(entry.label, entry.description, kind=entry.kind)[0].entry.id == entry.id


def test_load_or_build_builds_once(tmp_path, monkeypatch):
    calls = []

    def entries():
        calls.append(1)
        return MOVIE_ENTRIES[:3]

    first = KBMemory.load_or_build(tmp_path, entries, progress=False)
    second = KBMemory.load_or_build(tmp_path, entries, progress=False)
    assert calls == [1] and first.digest == second.digest


def test_bad_inputs_get_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a saved KB memory"):
        KBMemory.load(tmp_path)
    with pytest.raises(ValueError, match="at least one entry"):
        KBMemory.build([], progress=False)
    with pytest.raises(ValueError, match="backend must be"):
        KBMemory(MOVIE_ENTRIES[:1], np.ones((1, 4), np.float32), backend="annoy")
    if importlib.util.find_spec("faiss") is None:
        with pytest.raises(ImportError, match="faiss-cpu"):
            KBMemory(MOVIE_ENTRIES[:1], np.ones((1, 4), np.float32), backend="faiss")


def test_wikidata_catalogue_memory_entries():
    entries = catalogue_entries(get_profile("wikidata"))
    properties = [e for e in entries if e.kind == "property"]
    assert len(properties) == 12066 and entries[:12066] == properties  # the properties, then the items
    assert {e.kind for e in entries[12066:]} == {"entity"} and len(entries) == 12066 + 3446
    by_id = {e.id: e for e in entries}
    assert by_id["P36"].label == "capital"
    assert by_id["P749"].description.startswith("parent organization of an organization")  # from CoDEx
    assert by_id["P10"].description == "Wikidata property (String)"


def test_limit_keeps_other_kinds_and_the_first_ids():
    limited = limit_entries(MOVIE_ENTRIES, "entity", 2)
    assert [e.id for e in limited if e.kind == "entity"] == ["entity/Film/Wind", "entity/Genre/Drama"]
    assert sum(e.kind != "entity" for e in limited) == 3
    assert limit_entries(MOVIE_ENTRIES, "entity", 0) == MOVIE_ENTRIES
    assert Entry("a", "x", "", "entity").text == "x"
