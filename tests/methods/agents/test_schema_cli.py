"""`sparqlab schema show|filter` against the Wikidata-shaped KG behind an oxigraph server."""

import json

from sparqlab.cli import main

WD, WDT = "http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/direct/"


def test_schema_filter_prints_types_kept_and_removed(wd_server, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    assert main(["schema", "filter", "--kg", "wikidata", "--kg-url", wd_server, "--entity", "wd:Q900001",
                 "--properties", "wdt:P17,wdt:P19,wd:P106,wdt:P50", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == {"entity": WD + "Q900001", "types": [WD + "Q5"], "kept": [WDT + "P19", WDT + "P106"],
                      "removed": [WDT + "P17", WDT + "P50"],
                      "resolved": {"wd:Q900001": WD + "Q900001", "wdt:P17": WDT + "P17", "wdt:P19": WDT + "P19",
                                   "wd:P106": WDT + "P106", "wdt:P50": WDT + "P50"}}
    assert main(["schema", "filter", "--kg", "wikidata", "--kg-url", wd_server, "--entity", "wd:Q28218",
                 "--properties", "wdt:P1082", "--subclass-closure", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["kept"] == [WDT + "P1082"]


def test_schema_show_reports_sources_and_masking(wd_server, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    args = ["schema", "show", "--kg", "wikidata", "--kg-url", wd_server, "--format", "json"]
    assert main(args) == 0
    full = {row["property"]: row for row in json.loads(capsys.readouterr().out)["properties"]}
    assert full[WDT + "P17"]["source"] == "formal" and full[WDT + "P106"]["source"] == "empirical"
    assert full[WDT + "P27"]["domain_labels"] == ["human"] and not any(r["masked"] for r in full.values())
    assert all(row["sampled"] for row in full.values())  # a small KG is sampled when the index is built
    assert main(args + ["--schema-coverage", "0.5", "--coverage-seed", "2"]) == 0
    half = json.loads(capsys.readouterr().out)["properties"]
    declared = sum(1 for row in full.values() if row["domain_source"] == "formal")
    assert sum(row["masked"] for row in half) == declared - round(0.5 * declared)


def test_sparqlab_run_on_a_wikidata_mirror_with_local_search(wd_server, tmp_path, monkeypatch, capsys):
    from sparqlab.core.paths import PROJECT_ROOT

    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    questions = PROJECT_ROOT / "data" / "wikidata_test" / "questions.jsonl"
    assert main(["run", "saga", "-d", str(questions), "--kg", "wikidata", "--kg-url", wd_server, "--kg-options", "search=local",
                 "-m", "standin-agent", "-o", "features.subclass_closure=true", "-e", "cli"]) == 0
    out = capsys.readouterr().out
    assert "[standin]" in out and "F1 100.0%" in out
    config = json.loads(next((tmp_path / "runs" / "cli").glob("*/config.json")).read_text())
    assert config["run"]["graph"]["kg_options"] == {"search": "local"} and config["method"]["config"]["features"]["subclass_closure"]
