"""Wikidata on QLever: `--kg-url https://qlever.cs.uni-freiburg.de/api/wikidata` (or `--profile wikidata` for
`sparqlab query`) keeps the Wikidata profile, and its prefixes are sent with each query, since QLever predefines
none."""

from sparqlab.cli import main
from sparqlab.kg import open_kg
from sparqlab.kg.endpoint import EndpointKG

QLEVER_WIKIDATA = "https://qlever.cs.uni-freiburg.de/api/wikidata"


def test_qlever_url_keeps_the_wikidata_profile_and_sends_its_prefixes():
    kg = open_kg(QLEVER_WIKIDATA, profile="wikidata", cache=False)
    assert isinstance(kg, EndpointKG) and kg.url == QLEVER_WIKIDATA  # the URL is used as given, no /sparql added
    sent = kg.with_prefixes("SELECT ?x WHERE { ?x wdt:P31 wd:Q5 }")
    assert "PREFIX wdt: <http://www.wikidata.org/prop/direct/>" in sent
    assert "PREFIX wd: <http://www.wikidata.org/entity/>" in sent
    declared = "PREFIX wd: <http://www.wikidata.org/entity/>\nASK { wd:Q5 ?p ?o }"
    assert kg.with_prefixes(declared).count("PREFIX wd:") == 1  # a query's own declaration is not repeated


def test_wikidata_queries_without_prefix_lines_run_on_a_prefixless_endpoint(wikidata_shaped_endpoint, capsys):
    query = "SELECT ?city WHERE { ?city wdt:P31 wd:Q515 } ORDER BY ?city"
    assert main(["query", "--kg", wikidata_shaped_endpoint, "--profile", "wikidata", "--no-cache", query]) == 0
    assert "wd:Q28218 (Jackson)" in capsys.readouterr().out  # shortened by the Wikidata prefixes, with its label
    assert main(["query", "--kg", wikidata_shaped_endpoint, "--no-cache", query]) == 1
    assert "undeclared prefix" in capsys.readouterr().err  # without the profile: no predefined wd:
