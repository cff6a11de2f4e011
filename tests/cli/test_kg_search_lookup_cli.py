"""`sparqlab kg search` and `sparqlab kg lookup` with the KG options of `sparqlab run`: what the agents' search and
lookup show, on a Wikidata mirror (an oxigraph server) and on the real-shaped fixture file."""

from __future__ import annotations

import re

import pytest

from sparqlab.cli import main
from support.wikidata_fixtures import WIKIDATA_FIXTURES

REAL = str(WIKIDATA_FIXTURES["real"])


@pytest.mark.filterwarnings("ignore::sparqlab.kg.embedded.LenientLoad")
def test_kg_search_takes_the_run_options_and_shows_alias_matches(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path))
    base = ["--kg", "wikidata", "--kg-url", REAL, "--kg-options", "search=local"]
    assert main(["kg", "search", "wife", "--kind", "property", *base]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert "spouse" in first and "wdt:P26" not in first and "wd:P26" in first and "(matched: wife)" in first
    assert main(["kg", "search", "Wolfsblut", *base]) == 0
    assert re.search(r"White Fang .*wd:Q1045540  \(matched: Wolfsblut\)", capsys.readouterr().out)


def test_kg_lookup_prints_each_agents_observation(wikidata_shaped_endpoint, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path))
    base = ["--kg", "wikidata", "--kg-url", wikidata_shaped_endpoint, "--kg-options", "search=local"]
    assert main(["kg", "lookup", "Q900001", *base]) == 0
    saga = capsys.readouterr().out
    assert saga.startswith("Jackson (wd:Q900001)") and "P17" not in saga and "properties removed" in saga
    assert main(["kg", "lookup", "Q900001", "--method", "spinach", *base]) == 0
    captured = capsys.readouterr()
    assert "- country (wdt:P17)" in captured.out and "shown unpruned" in captured.err
    assert main(["kg", "lookup", "Q900001", "-o", "lookup_max_properties=1", "--method", "spinach", *base]) == 0
    assert "(2 more properties not shown: place of birth (wdt:P19), occupation (wdt:P106))" in capsys.readouterr().out
