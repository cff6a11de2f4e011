"""`sparqlab kg build`, `sparqlab kg search` and `sparqlab query` as a researcher runs them."""

from __future__ import annotations

import gzip
import json
from collections import Counter

from sparqlab.cli import main
from sparqlab.core.paths import data_dir
from sparqlab.kg import open_kg

GGC_DRAMA = ('PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> SELECT DISTINCT ?label ?uri WHERE { '
             '?uri ?rel1 ?e1 ; ?rel2 ?e2 ; rdfs:label ?label . ?rel1 rdfs:label "starred_actors" . '
             '?e1 rdfs:label "Matthias Schoenaerts" . ?rel2 rdfs:label "has_tags" . ?e2 rdfs:label "drama" . }')


def test_kg_build_prints_counts(movie_store, capsys):
    """The printed counts against the raw KB file and the store's own triples (not the build's build.json)."""
    assert main(["kg", "build", "movies"]) == 0
    out = capsys.readouterr().out
    with gzip.open(data_dir() / "metaqa" / "kb_derived_kb.txt.gz", "rt", encoding="utf-8") as raw:
        facts = [line.split("|") for line in raw.read().splitlines()]
    with open_kg("movies", cache=False) as kg:
        triples = int(kg.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }").rows[0]["n"].value)
    assert str(movie_store) in out
    assert f"triples {triples:,} from {len(facts):,} MetaQA facts" in out
    assert f"Film {len({s for s, _, _ in facts}):,}," in out
    people = {o for _, r, o in facts if r in ("starred_actors", "directed_by", "written_by")}
    assert f"Person {len(people):,}," in out
    for relation, count in Counter(r for _, r, _ in facts).items():
        assert f"{relation} {count:,}" in out
    assert "ready in" in out


def test_query_prints_a_table(movie_store, capsys):
    assert main(["query", "--kg", "movies", "--no-cache", GGC_DRAMA]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].split() == ["label", "uri"]
    assert any(line.startswith("Bullhead ") for line in lines[2:])
    assert "row(s)" in captured.err


def test_query_json_is_sparql_results(movie_store, capsys):
    assert main(["query", "--kg", "movies", "--no-cache", "--format", "json", "--limit", "2",
                 "SELECT ?s WHERE { ?s a mclass:Film }"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["head"]["vars"] == ["s"]
    assert len(data["results"]["bindings"]) == 2
    assert data["results"]["bindings"][0]["s"]["type"] == "uri"
    assert "truncated at --limit 2" in captured.err


def test_query_reads_stdin_and_files(movie_store, capsys, monkeypatch, tmp_path):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO('ASK { ?f rdfs:label "Wind" }'))
    assert main(["query", "--kg", "movies", "--no-cache", "-"]) == 0
    assert capsys.readouterr().out.strip() == "true"
    path = tmp_path / "q.rq"
    path.write_text('ASK { ?f rdfs:label "No Such Film Anywhere" }', encoding="utf-8")
    assert main(["query", "--kg", "movies", "--no-cache", f"@{path}"]) == 0
    assert capsys.readouterr().out.strip() == "false"


def test_errors_are_one_line(movie_store, capsys, refused_url):
    cases = [
        (["query", "--kg", "movies", "DROP ALL"], "UpdateRefused"),
        (["query", "--kg", "movies", "SELECT * WHERE { ?s"], "SparqlSyntaxError"),
        (["query", "--kg", "movies", "--timeout", "0.5", "--no-cache",
          "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f }"], "QueryTimeout"),
        (["query", "--kg", refused_url, "ASK {}"], "EndpointUnavailable: " + refused_url),
        (["query", "--kg", "no-such-kg", "ASK {}"], "unknown KG"),
        (["kg", "build", "wikidata"], "no bundled builder"),
    ]
    for argv, expected in cases:
        assert main(argv) == 1
        err = capsys.readouterr().err.strip()
        assert expected in err and "\n" not in err, err


def test_kg_search_command(movie_store, capsys):
    assert main(["kg", "search", "Mathias Schoenarts", "--kg", "movies", "--limit", "3"]) == 0
    out = capsys.readouterr().out
    assert "Matthias Schoenaerts  [Person]" in out
    assert "actor in" in out


def _children(pid: int) -> list[int]:
    from pathlib import Path

    return [int(child) for task in Path(f"/proc/{pid}/task").iterdir()
            for child in (task / "children").read_text().split()]


def _gone(pid: int, within_s: float = 20.0) -> bool:
    import os
    import time

    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_serve_fixture_stops_its_oxigraph_child_on_sigterm_and_sighup():
    """Every server the command starts stops with it, on Ctrl-C and on a plain ``kill`` (SIGTERM) or a closed
    terminal (SIGHUP) alike."""
    import os
    import signal
    import subprocess
    import sys
    import urllib.request
    from pathlib import Path

    command = Path(sys.executable).with_name("sparqlab")
    for number in (signal.SIGTERM, signal.SIGHUP):
        server = subprocess.Popen([str(command), "kg", "serve-fixture", "freebase"], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        try:
            url = server.stdout.readline().strip()
            assert urllib.request.urlopen(url + "?query=ASK%7B%7D", timeout=10).read()
            (oxigraph,) = _children(server.pid)
            os.kill(server.pid, number)
            server.wait(timeout=20)
            assert _gone(oxigraph), f"oxigraph {oxigraph} outlived sparqlab after {signal.Signals(number).name}"
        finally:
            if server.poll() is None:
                server.kill()
