"""Damaged build outputs: a KG store, a search index, a schema index or a KB memory that was cut, overwritten or
edited after its build is found before it is used, and rebuilt or refused with a message naming the file and the
command that rebuilds it, never read into one error per question (F1 0 %, exit 0)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

from sparqlab.data.question import Question
from sparqlab.platform.base import Method, MethodOutput
from sparqlab.runs import RunConfig, run


def _cut(path, keep: float = 0.5) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def _garble(path) -> None:
    """Overwrite the middle third with other bytes, keeping the size (only a content digest sees it)."""
    data = bytearray(path.read_bytes())
    third = len(data) // 3
    data[third: 2 * third] = bytes((b + 1) % 256 for b in data[third: 2 * third])
    path.write_bytes(bytes(data))


def _warnings_during(call):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = call()
    return result, " ".join(str(w.message) for w in seen)


# -- KG stores -----------------------------------------------------------------------------------------------


@pytest.fixture
def ck25_store(isolated_paths):
    """A ck25 store built in the test's own cache (2 MB, about a second), so it can be damaged."""
    from sparqlab.text2sparql.ck25_store import ensure_store

    return ensure_store()


def _largest(store):
    return max((p for p in store.iterdir() if p.suffix == ".sst"), key=lambda p: p.stat().st_size)


@pytest.mark.parametrize("damage", [_cut, _garble])
def test_a_damaged_store_is_refused_at_open_naming_the_file_and_the_command(ck25_store, damage):
    from sparqlab.kg import open_kg

    victim = _largest(ck25_store)
    damage(victim)
    with pytest.raises(Exception, match="is damaged") as refused:
        open_kg("ck25", cache=False).close()
    assert victim.name in str(refused.value) and str(ck25_store) in str(refused.value)
    assert "sparqlab kg build ck25 --force" in str(refused.value)


def test_kg_build_rebuilds_a_damaged_store_and_says_ready_only_after_the_check(ck25_store, isolated_paths):
    from sparqlab.kg import open_kg

    victim = _largest(ck25_store)
    _cut(victim)
    built = subprocess.run([sys.executable, "-m", "sparqlab", "kg", "build", "ck25"], capture_output=True,
                           text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    assert "is damaged" in built.stderr and victim.name in built.stderr and "rebuilding" in built.stderr
    assert "ready in" in built.stdout and "match their build record" in built.stdout
    with open_kg("ck25", cache=False) as kg:
        assert kg.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }").rows[0]["n"].value != "0"


def test_a_run_over_a_damaged_store_stops_with_the_message_not_f1_zero(ck25_store, isolated_paths):
    _cut(_largest(ck25_store))
    result = subprocess.run([sys.executable, "-m", "sparqlab", "run", "direct", "--dataset", "ck25", "-m",
                             "standin-echo", "--limit", "2"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    assert "is damaged" in result.stderr and "sparqlab kg build ck25 --force" in result.stderr
    assert not list((isolated_paths / "runs").glob("*/*/predictions.jsonl"))


# -- search indexes --------------------------------------------------------------------------------------------


class SearchFirst(Method):
    """Answers with the IRI of the best search hit for the question text (one ``search`` call per question)."""

    name = "test-search-first"
    roles = ()
    needs_model = False

    async def answer(self, question, ctx):
        hits = await ctx.search(question.text, limit=1)
        return MethodOutput(f"SELECT ?x WHERE {{ BIND(<{hits[0].id}> AS ?x) }}" if hits else None)


SEARCH_QUESTIONS = [Question("alice", "Alice", gold_answers=["http://example.org/alice"], kg="small"),
                    Question("bob", "Bob", gold_answers=["http://example.org/bob"], kg="small")]


def _search_run(small_ttl, experiment):
    from sparqlab.kg import open_kg

    with open_kg(small_ttl, cache=False) as kg:  # a fresh KG object opens the index again
        config = RunConfig(experiment=experiment, progress=False)
        return run(SearchFirst(), SEARCH_QUESTIONS, config, kg=kg), kg


@pytest.mark.parametrize("damage", [_cut, _garble])
def test_a_damaged_search_index_is_rebuilt_and_the_run_scores_as_before(small_ttl, isolated_paths, damage):
    from sparqlab.kg.search import default_index_path

    clean, kg = _search_run(small_ttl, "clean")
    assert clean.metrics["f1"] == 1.0
    index = default_index_path(kg)
    damage(index)
    (again, _), said = _warnings_during(lambda: _search_run(small_ttl, "damaged"))
    assert f"the search index {index} was damaged" in said
    assert again.metrics["f1"] == 1.0
    assert "method_error" not in {r.get("error_category") for r in again.predictions().to_dict("records")}


# -- schema indexes --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("damage", [_cut, _garble])
def test_a_damaged_schema_index_is_named_and_rebuilt(small_kg, tmp_path, damage):
    from sparqlab.methods.agents.schema import load_or_build
    from sparqlab.methods.agents.schema.index import SchemaIndex

    built = load_or_build(small_kg, tmp_path / "schema", progress=False)
    path = tmp_path / "schema" / "schema.json"
    damage(path)
    with pytest.raises(Exception, match="is damaged") as refused:
        SchemaIndex.load(path)
    assert str(path) in str(refused.value) and f"rm '{path}'" in str(refused.value)
    rebuilt, said = _warnings_during(lambda: load_or_build(small_kg, tmp_path / "schema", progress=False))
    assert f"the schema index {path} was damaged" in said
    assert rebuilt.to_json() == built.to_json()
    assert SchemaIndex.load(path).to_json() == built.to_json()


# -- KB memories ---------------------------------------------------------------------------------------------------


def _memory(folder):
    from sparqlab.methods.desq.kb_memory import Entry, KBMemory

    entries = [Entry(f"e{i}", f"name {i}", f"a thing numbered {i}", "entity") for i in range(200)]
    KBMemory.build(entries, "hashing", progress=False, prebuilt=False).save(folder)
    return entries


@pytest.mark.parametrize(("name", "damage"), [("vectors.npy", _cut), ("vectors.npy", _garble),
                                               ("entries.jsonl", _garble), ("memory.json", _cut)])
def test_a_damaged_kb_memory_is_refused_naming_the_file(tmp_path, name, damage):
    from sparqlab.methods.desq.kb_memory import KBMemory

    folder = tmp_path / "memory"
    entries = _memory(folder)
    damage(folder / name)
    with pytest.raises(Exception, match="is damaged") as refused:
        KBMemory.load(folder)
    assert str(folder) in str(refused.value) and f"rm -rf '{folder}'" in str(refused.value)
    if name != "memory.json":
        assert name in str(refused.value)
    rebuilt, said = _warnings_during(lambda: KBMemory.load_or_build(folder, lambda: entries, "hashing", False))
    assert f"the KB memory {folder} was damaged" in said and len(rebuilt) == len(entries)
    assert len(KBMemory.load(folder)) == len(entries)
