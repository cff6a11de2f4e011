"""RDF files as KGs (issue 40): loaded in a capped process with XML entities refused, the prefix map of any size
reaching the query workers, and a killed build's scratch folder removed by the next build."""

from __future__ import annotations

import os
import socket
import time

import pytest

from sparqlab.engines.oxigraph_store import BUILDING
from sparqlab.kg import open_kg
from sparqlab.kg.embedded import load_in_worker

LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE rdf:RDF [
 <!ENTITY a "hahahahahahahahahaha">
""" + "".join(f' <!ENTITY {chr(98 + i)} "{f"&{chr(97 + i)};" * 10}">\n' for i in range(9)) + """]>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/">
 <rdf:Description rdf:about="http://example.org/s"><ex:p>&j;</ex:p></rdf:Description>
</rdf:RDF>
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_billion_laughs_rdf_xml_file_is_refused_naming_it(tmp_path, cache):
    path = tmp_path / "laughs.rdf"
    path.write_text(LAUGHS, encoding="utf-8")
    assert path.stat().st_size < 1200
    start = time.monotonic()
    with pytest.raises(ValueError, match=f"cannot load {path} as RDF: .*declares XML entities"):
        open_kg(path, cache=False)
    assert time.monotonic() - start < 10
    assert not list((cache / "kg").glob(BUILDING + "*"))  # nothing left behind


def test_a_load_over_its_memory_cap_kills_only_its_process(tmp_path, small_ttl):
    with pytest.raises(ValueError, match=f"cannot load {small_ttl} as RDF: the loading process died"):
        load_in_worker(tmp_path / "store", small_ttl, 20 * 2**20)  # 20 MiB: not even enough to start


def test_thousands_of_prefixes_reach_the_query_workers(tmp_path, cache):
    path = tmp_path / "prefixes.ttl"
    declarations = "".join(f"@prefix p{i}: <http://example.org/namespace/number/{i}/> .\n" for i in range(5000))
    path.write_text(declarations + "p1:a p2:b p4999:c .\n", encoding="utf-8")
    with open_kg(path, cache=False) as kg:
        assert len(kg.profile.prefixes) >= 5000
        assert kg.query("SELECT ?o WHERE { p1:a p2:b ?o }").rows[0]["o"].value.endswith("/4999/c")


def test_the_next_build_removes_the_scratch_folders_of_killed_builds(tmp_path, cache, small_ttl):
    folder = cache / "kg"
    folder.mkdir(parents=True)
    host, dead = socket.gethostname(), 2**22 + 12345  # above any pid_max: no such process
    leftovers = [folder / f"{BUILDING}k1l2m3", folder / f"{BUILDING}{host}-{dead}-abc123"]
    running = [folder / f"{BUILDING}{host}-{os.getpid()}-def456", folder / f"{BUILDING}elsewhere-{dead}-ghi789"]
    for scratch in leftovers + running:
        (scratch / "store").mkdir(parents=True)
    with open_kg(small_ttl, cache=False) as kg:
        assert len(kg.query("SELECT * WHERE { ?s ?p ?o }")) > 0
    assert [scratch.exists() for scratch in leftovers + running] == [False, False, True, True]
