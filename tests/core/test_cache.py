"""The shared JSON cache: persistence, namespaces, and concurrent writers from threads and processes."""

import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import pytest

from sparqlab.core.cache import JsonCache
from sparqlab.core.hashing import canonical_json, stable_hash


def test_round_trip_and_namespaces(tmp_path):
    cache = JsonCache(tmp_path / "c.sqlite")
    assert cache.get("a", "k") is None
    cache.put("a", "k", {"x": [1, 2]})
    cache.put("b", "k", "other")
    assert cache.get("a", "k") == {"x": [1, 2]}
    assert cache.get("b", "k") == "other"
    assert cache.count("a") == 1 and len(cache) == 2


def test_values_survive_reopening(tmp_path):
    JsonCache(tmp_path / "c.sqlite").put("ns", "key", [1, "two"])
    assert JsonCache(tmp_path / "c.sqlite").get("ns", "key") == [1, "two"]


def test_concurrent_thread_writers(tmp_path):
    cache = JsonCache(tmp_path / "c.sqlite")
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: cache.put("ns", str(i), i), range(400)))
    assert cache.count("ns") == 400
    assert sorted(cache.get("ns", str(i)) for i in range(400)) == list(range(400))


def _write_many(path, start):
    cache = JsonCache(path)
    for i in range(start, start + 100):
        cache.put("ns", str(i), {"i": i})


def test_concurrent_process_writers(tmp_path):
    path = tmp_path / "c.sqlite"
    JsonCache(path)
    processes = [multiprocessing.get_context("spawn").Process(target=_write_many, args=(path, s)) for s in (0, 100, 200)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
        assert process.exitcode == 0
    cache = JsonCache(path)
    assert cache.count("ns") == 300
    assert cache.get("ns", "250") == {"i": 250}


def test_stable_hash_ignores_key_order():
    assert stable_hash({"a": 1, "b": [1, 2]}) == stable_hash({"b": [1, 2], "a": 1})
    assert stable_hash({"a": 1}) != stable_hash({"a": 2})
    assert json.loads(canonical_json({"b": 1, "a": 2})) == {"a": 2, "b": 1}


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare (util-linux) for a read-only mount")
def test_a_read_only_cache_folder_is_a_storage_error_that_never_advises_deleting(tmp_path):
    """A cache on a folder mounted read-only (a tmpfs remounted ro in a private mount namespace: honest for root,
    whom chmod does not stop) is not a corrupt cache: deleting it would destroy model output."""
    folder = tmp_path / "cache"
    folder.mkdir()
    script = textwrap.dedent(f"""
        mount -t tmpfs -o size=4m tmpfs {folder}
        {sys.executable} -c "from sparqlab.core.cache import JsonCache; JsonCache('{folder}/r.sqlite').put('n', 'k', 1)"
        mount -o remount,ro {folder}
        {sys.executable} -c "
        from sparqlab.core.cache import JsonCache
        try:
            JsonCache('{folder}/r.sqlite')
        except Exception as error:
            print(type(error).__name__, error)
        "
    """)
    done = subprocess.run(["unshare", "-rm", "sh", "-ec", script], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    if "mount" in done.stderr and done.returncode:
        pytest.skip(f"no private read-only mount here: {done.stderr.strip()[:200]}")
    out = done.stdout.strip()
    assert out.startswith(f"StorageFull cannot write {folder}/r.sqlite: unable to open database file"), \
        out + done.stderr
    assert "make it writable" in out and "rm -f" not in out and "corrupt" not in out
