"""The real-shaped Wikidata fixture (data/wikidata_real): what it is made of, how it loads, and what a lookup and
the local search read from it — truthy edges only, each property once, qualifiers with their statement, aliases
and other-language labels as search matches."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import warnings

import pytest

from sparqlab.core.paths import PROJECT_ROOT
from sparqlab.kg.embedded import LenientLoad, load_rdf_file
from sparqlab.kg.neighbourhood import lookup
from support.wikidata_fixtures import WIKIDATA_FIXTURES, open_wikidata

REAL = WIKIDATA_FIXTURES["real"]
WD, WDT, PQ = "http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/direct/", "http://www.wikidata.org/prop/qualifier/"


@pytest.fixture(scope="module")
def real_kg():
    kg = open_wikidata(REAL)
    yield kg
    kg.close()


def _script():
    spec = importlib.util.spec_from_file_location("make_fixture", PROJECT_ROOT / "scripts" / "make_wikidata_real_fixture.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module


def test_the_file_is_the_shipped_q42_followed_by_what_the_script_writes():
    script = _script()
    data = REAL.read_bytes()
    assert hashlib.sha256(data[:script.Q42_BYTES]).hexdigest() == script.Q42_SHA256
    assert data == script.fixture_text(), "data/wikidata_real is stale: run scripts/make_wikidata_real_fixture.py"


def test_strict_parsing_refuses_it_and_the_lenient_load_reports_the_tag():
    import pyoxigraph

    with pytest.raises(SyntaxError, match="eight characters"):
        list(pyoxigraph.parse(path=str(REAL)))
    with pytest.warns(LenientLoad, match=r"@zh-classical \(1 literal\)"):
        kg = load_rdf_file(REAL)
    try:
        assert kg.load_report["nonstandard_language_tags"] == {"zh-classical": 1}
        assert kg.describe()["load_report"] == kg.load_report
    finally:
        kg.close()


def test_truthy_edges_are_exactly_the_best_rank_statements(real_kg):
    """The rule the whole shape rests on (WDQS's munged form): a wdt: edge for each best-rank statement's value,
    and none for a statement of lower rank or a deprecated one."""
    rows = real_kg.query("""SELECT (COUNT(*) AS ?n) WHERE {
        ?e ?claim ?st . ?st a wikibase:BestRank ; ?ps ?v .
        FILTER(STRSTARTS(STR(?claim), STR(p:)) && !CONTAINS(STRAFTER(STR(?claim), STR(p:)), "/"))
        FILTER(?ps = IRI(CONCAT(STR(ps:), STRAFTER(STR(?claim), STR(p:)))))
        FILTER NOT EXISTS { ?e ?wdt ?v FILTER(?wdt = IRI(CONCAT(STR(wdt:), STRAFTER(STR(?claim), STR(p:))))) } }""").rows
    assert rows[0]["n"].value == "0"
    ranks = real_kg.query("SELECT ?v WHERE { wd:Q1930 p:P1082 ?st . ?st ps:P1082 ?v FILTER NOT EXISTS { ?st a "
                          "wikibase:BestRank } }").rows
    assert [r["v"].value for r in ranks] == ["934243"]  # the superseded census stays a (non-truthy) statement


def test_a_lookup_shows_truthy_edges_only_each_property_once(real_kg):
    hood = lookup(real_kg, "Q42")
    props = hood.grouped("out")
    distinct = real_kg.query("SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE { wd:Q42 ?p ?v FILTER(STRSTARTS(STR(?p), "
                             "STR(wdt:))) }").rows[0]["n"].value
    assert len(props) == int(distinct) - 1  # every truthy property but the type (P31, shown as types)
    assert all(p.startswith(WDT) for p in props)  # no p:, schema:, wikibase: or skos: edge as a property
    given = [e.value for e in props[WDT + "P735"]]
    assert given == [WD + "Q463035"]  # the preferred given name; the normal-rank "Noël" statement is not truthy
    spouse = props[WDT + "P26"][0]
    assert spouse.value_label == "Jane Belson"
    assert {(q.property, q.value) for q in spouse.qualifiers} >= {(PQ + "P580", "1991-11-25T00:00:00Z"),
                                                                  (PQ + "P1534", WD + "Q4")}
    assert hood.count("out", WDT + "P106") == 7 and WDT + "P214" in hood.identifiers
    order = list(props)
    assert order.index(WDT + "P1412") < order.index(WDT + "P214")  # identifiers after every other property
    assert order.index(WDT + "P19") < order.index(WDT + "P106") < order.index(WDT + "P1412")


def test_lower_ranks_and_deprecated_statements_stay_out_of_the_lookup(real_kg):
    london = lookup(real_kg, "wd:Q45765").grouped("out")
    assert [e.value for e in london[WDT + "P19"]] == [WD + "Q62"]  # the deprecated "London" is not shown
    ottawa = lookup(real_kg, "wd:Q1930").grouped("out")
    (population,) = ottawa[WDT + "P1082"]
    assert population.value == "1017449" and [q.value for q in population.qualifiers] == ["2021-05-11T00:00:00Z"]


@pytest.mark.parametrize(("text", "kind", "found", "matched"), [
    ("wife", "property", "P26", "wife"), ("seats", "property", "P1083", "seats"),
    ("written by", "property", "P50", "written by"), ("Wolfsblut", "entity", "Q1045540", "Wolfsblut"),
    ("John Griffith Chaney", "entity", "Q45765", "John Griffith Chaney"),
])
def test_the_local_index_matches_aliases_and_other_languages(real_kg, text, kind, found, matched):
    hits = real_kg.search(text, kind=kind, limit=5)
    assert hits[0].id == WD + found and hits[0].matched == matched and hits[0].score == 100.0
    assert hits[0].label != matched  # shown under its English label


def test_the_hand_written_fixture_still_loads_strictly():
    with warnings.catch_warnings():
        warnings.simplefilter("error", LenientLoad)
        kg = load_rdf_file(WIKIDATA_FIXTURES["handwritten"])
    assert kg.load_report["nonstandard_language_tags"] == {}
    kg.close()
