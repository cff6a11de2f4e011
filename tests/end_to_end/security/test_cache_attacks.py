"""Damaged cache files: garbage in the middle of a file, a wholly overwritten file, a value that is not JSON.
A damaged cache must never change a result silently nor surface as a per-question method_error."""

from __future__ import annotations

import os
import sqlite3
import warnings
from pathlib import Path

import pytest

from sparqlab.core.cache import CacheCorrupt, JsonCache


def _filled(path: Path, entries: int = 400) -> JsonCache:
    cache = JsonCache(path)
    for i in range(entries):
        cache.put("ns", f"k{i}", {"i": i, "pad": "x" * 500})
    cache._connect().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return cache


def _garble_middle(path: Path, size: int = 40_000) -> None:
    length = path.stat().st_size
    with path.open("r+b") as handle:
        handle.seek(length // 2 - size // 2)
        handle.write(os.urandom(size))


def test_garbage_in_the_middle_stops_with_the_file_and_the_command(tmp_path):
    path = tmp_path / "responses.sqlite"
    _filled(path)
    _garble_middle(path)
    with pytest.raises(CacheCorrupt) as caught:
        JsonCache(path)
    message = str(caught.value)
    assert str(path) in message and f"rm -f '{path}'" in message


def test_garbage_in_the_middle_of_a_rebuildable_cache_is_moved_aside(tmp_path):
    path = tmp_path / "queries.sqlite"
    _filled(path)
    _garble_middle(path)
    with pytest.warns(UserWarning, match="was corrupt") as caught:
        cache = JsonCache(path, rebuild=True)
    assert str(path) in str(caught[0].message)
    assert cache.get("ns", "k1") is None and len(cache) == 0
    aside = sorted(tmp_path.glob("queries.sqlite.corrupt-*[0-9]"))
    assert aside and aside[0].stat().st_size > 100_000  # the damaged file is kept for inspection


def test_a_wholly_overwritten_file_names_the_file(tmp_path):
    path = tmp_path / "responses.sqlite"
    path.write_bytes(os.urandom(64 * 1024))
    with pytest.raises(CacheCorrupt, match=str(path)):
        JsonCache(path)


def test_a_value_that_is_not_json_is_corruption_not_a_miss(tmp_path):
    path = tmp_path / "c.sqlite"
    cache = _filled(path, entries=3)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE entries SET value = '{\"i\": 1, \"pad' WHERE key = 'k1'")
    with pytest.raises(CacheCorrupt, match=str(path)):
        cache.get("ns", "k1")
    assert cache.get("ns", "k2")["i"] == 2


def _run(experiment: str, cache_dir: Path, runs_dir: Path):
    from sparqlab.methods import get_method
    from sparqlab.runs import RunConfig, run

    config = RunConfig(experiment=experiment, kg="movies", dataset="metaqa-1hop", limit=20,
                       model="standin-keyword-rules", progress=False)
    return run(get_method("direct")(), config=config)


def test_a_run_over_a_damaged_query_cache_scores_as_a_clean_run(movie_cache, tmp_path):
    """40 KB of garbage in the query cache turned F1 0.35 into 0.0 (every question a method_error)."""
    clean = _run("clean", movie_cache, tmp_path)
    queries = movie_cache / "queries.sqlite"
    JsonCache(queries)._connect().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    _garble_middle(queries, size=min(40_000, queries.stat().st_size // 3))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        damaged = _run("damaged", movie_cache, tmp_path)
    assert any(str(queries) in str(w.message) for w in seen)
    assert clean.metrics["f1"] > 0 and damaged.metrics["f1"] == clean.metrics["f1"]
    assert "method_error" not in set(damaged.predictions()["error_category"].dropna())


def test_a_run_over_a_damaged_response_cache_stops_naming_the_file(movie_cache, tmp_path):
    _run("fill", movie_cache, tmp_path)
    responses = next(movie_cache.glob("responses*.sqlite"))
    JsonCache(responses)._connect().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    _garble_middle(responses, size=min(40_000, responses.stat().st_size // 3))
    with pytest.raises(CacheCorrupt, match=str(responses)):
        _run("after", movie_cache, tmp_path)
