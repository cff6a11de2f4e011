"""`sparqlab schema filter` takes ids as Wikidata users type them (Q1006, P57) and echoes the IRIs they
resolved to, on the Wikidata-shaped test KG behind a real oxigraph server."""

from __future__ import annotations

import json

from sparqlab.cli import main

WD, WDT = "http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/direct/"


def test_schema_filter_takes_bare_wikidata_ids_and_echoes_the_iris(wikidata_shaped_endpoint, tmp_path, monkeypatch,
                                                                    capsys):
    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    base = ["schema", "filter", "--kg", "wikidata", "--kg-url", wikidata_shaped_endpoint, "--entity", "Q900001"]
    assert main(base + ["--properties", "P19,P50"]) == 0
    out = capsys.readouterr().out
    assert f"Q900001 = <{WD}Q900001>: types human" in out
    assert f"kept    P19 = <{WDT}P19>" in out and f"REMOVED P50 = <{WDT}P50>" in out
    assert main(base + ["--properties", "P19,wdt:P50", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["resolved"] == {"Q900001": WD + "Q900001", "P19": WDT + "P19", "wdt:P50": WDT + "P50"}
    assert (report["kept"], report["removed"]) == ([WDT + "P19"], [WDT + "P50"])
    assert main(["schema", "filter", "--kg", "wikidata", "--kg-url", wikidata_shaped_endpoint, "--entity", "P19",
                 "--properties", "P19"]) == 1
    assert "'P19' is not an entity id on wikidata" in capsys.readouterr().err
