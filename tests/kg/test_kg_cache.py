"""The query cache: keyed by KG identity and query, shared safely by threads and processes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import pytest

from sparqlab.core.cache import JsonCache
from sparqlab.kg import (
    EndpointKG,
    EndpointUnavailable,
    QueryOptions,
    QueryTimeout,
    SparqlSyntaxError,
    open_kg,
)
from sparqlab.kg.profiles import generic_profile
from sparqlab.kg.service import RetryPolicy

EX = "http://example.org/"
AGES = f"SELECT ?p ?age WHERE {{ ?p <{EX}age> ?age }} ORDER BY ?p"


def test_second_call_is_a_cache_hit(small_ttl, tmp_path):
    cache = JsonCache(tmp_path / "queries.sqlite")
    kg = open_kg(small_ttl, cache=cache)
    try:
        first, second = kg.query(AGES), kg.query(AGES)
        assert not first.cached and second.cached
        assert second.rows == first.rows and second.vars == first.vars
        assert cache.count(kg.identity) == 1
        assert not kg.query(AGES, use_cache=False).cached
        assert not kg.query(AGES, max_rows=1).cached  # the row cap is part of the key
        assert kg.query("ASK { ?s ?p ?o }").boolean is kg.query("ASK { ?s ?p ?o }").boolean is True
    finally:
        kg.close()


def test_results_survive_in_the_file(small_ttl, tmp_path):
    path = tmp_path / "queries.sqlite"
    kg = open_kg(small_ttl, cache=JsonCache(path))
    expected = kg.query(AGES).rows
    kg.close()
    reopened = open_kg(small_ttl, cache=JsonCache(path))
    try:
        again = reopened.query(AGES)
        assert again.cached and again.rows == expected
    finally:
        reopened.close()


def test_cache_false_turns_it_off(small_ttl):
    kg = open_kg(small_ttl, cache=False)
    try:
        assert kg.cache is None
        assert not kg.query(AGES).cached and not kg.query(AGES).cached
    finally:
        kg.close()


def test_default_cache_lives_in_the_cache_dir(small_ttl, tmp_path, monkeypatch):
    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path))
    kg = open_kg(small_ttl)
    try:
        kg.query(AGES)
        assert kg.query(AGES).cached
        assert JsonCache(tmp_path / "queries.sqlite").count(kg.identity) == 1
    finally:
        kg.close()


def test_errors_are_not_cached_by_default(refused_url, tmp_path):
    cache = JsonCache(tmp_path / "queries.sqlite")
    kg = EndpointKG(refused_url, generic_profile("down"), cache=cache,
                    options=QueryOptions(retry=RetryPolicy(max_connection_attempts=1)))
    for _ in range(2):
        with pytest.raises(EndpointUnavailable):
            kg.query("ASK {}")
    assert cache.count(kg.identity) == 0


def test_errors_can_be_cached_and_replayed_typed(movies_kg, tmp_path):
    from sparqlab.kg import EmbeddedKG

    cache = JsonCache(tmp_path / "queries.sqlite")
    kg = EmbeddedKG(movies_kg.store_path, movies_kg.profile, identity="errors-test", cache=cache,
                    options=QueryOptions(cache_errors=True), workers=1)
    runaway = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f }"
    execute = kg._execute
    try:
        with pytest.raises(QueryTimeout):
            kg.query(runaway, timeout_s=0.5)
        assert cache.count("errors-test") == 1
        kg._execute = lambda *args: pytest.fail("a cached error must be replayed without running the query")
        with pytest.raises(QueryTimeout, match="longer than 0.5 s"):  # replayed, typed
            kg.query(runaway, timeout_s=0.4)
        kg._execute = execute
        with pytest.raises(QueryTimeout, match="longer than 1 s"):  # a longer timeout runs the query again
            kg.query(runaway, timeout_s=1)
    finally:
        kg.close()


def test_syntax_errors_never_reach_the_cache(small_ttl, tmp_path):
    cache = JsonCache(tmp_path / "queries.sqlite")
    kg = open_kg(small_ttl, cache=cache)
    try:
        with pytest.raises(SparqlSyntaxError):
            kg.query("SELECT WHERE {")
        assert len(cache) == 0
    finally:
        kg.close()


def test_concurrent_threads(small_ttl, tmp_path):
    cache = JsonCache(tmp_path / "queries.sqlite")
    kg = open_kg(small_ttl, cache=cache, workers=2)
    queries = [f"SELECT ?x WHERE {{ BIND({i} AS ?x) ?s ?p ?o }} LIMIT 1" for i in range(40)]
    try:
        with ThreadPoolExecutor(8) as pool:
            values = list(pool.map(lambda q: kg.query(q).rows[0]["x"].value, queries * 2))
        assert values == [str(i) for i in range(40)] * 2
        assert cache.count(kg.identity) == 40
    finally:
        kg.close()


WRITER = textwrap.dedent("""
    import json, sys
    from sparqlab.core.cache import JsonCache
    from sparqlab.kg import open_kg
    kg = open_kg(sys.argv[1], cache=JsonCache(sys.argv[2]), workers=1)
    offset = int(sys.argv[3])
    values = [kg.query(f"SELECT ?x WHERE {{ BIND({i} AS ?x) }}").rows[0]["x"].value for i in range(offset, offset + 30)]
    print(json.dumps(values))
    kg.close()
""")


def test_concurrent_processes(small_ttl, tmp_path):
    """Four processes write overlapping entries into one cache file at the same time."""
    path = tmp_path / "queries.sqlite"
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(small_ttl), str(path), str(offset)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for offset in (0, 10, 20, 30)
    ]
    for offset, writer in zip((0, 10, 20, 30), writers, strict=True):
        out, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
        assert json.loads(out) == [str(i) for i in range(offset, offset + 30)]
    kg = open_kg(small_ttl, cache=JsonCache(path))
    try:
        assert JsonCache(path).count(kg.identity) == 60
        replay = kg.query("SELECT ?x WHERE { BIND(59 AS ?x) }")
        assert replay.cached and replay.rows[0]["x"].value == "59"
    finally:
        kg.close()
