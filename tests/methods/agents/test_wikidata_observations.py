"""What the agents' tools show on Wikidata as its query service stores it (audit items N2 and N3): SAGA's P_τ(e)
removes a property from every part of a lookup, a large entity's properties are shown or named by the cap, and
property search keeps the hits the search matched by alias. Observations come from ``AgentMethod.observe``."""

from __future__ import annotations

import asyncio
import re

import pytest

from sparqlab.methods import make_method
from support.wikidata_fixtures import WIKIDATA_FIXTURES, open_wikidata


@pytest.fixture(scope="module")
def real_kg():
    kg = open_wikidata(WIKIDATA_FIXTURES["real"])
    yield kg
    kg.close()


@pytest.fixture(scope="module")
def schema_cache(tmp_path_factory):
    """Schema indexes built by these tests stay out of the project cache."""
    return tmp_path_factory.mktemp("cache")


def observe(kg, method: str, action: str, argument: str, monkeypatch, cache, **options) -> str:
    monkeypatch.setenv("SPARQLAB_CACHE", str(cache))
    return asyncio.run(make_method(method, **options).observe(kg, action, argument)).text


@pytest.mark.parametrize("cap", [50, 1])
def test_a_property_saga_removes_stays_removed_in_every_rendering(wikidata_ttl, cap, monkeypatch, schema_cache):
    kg = open_wikidata(wikidata_ttl)
    try:
        # the human "Jackson" carries a country edge (P17's declared domain excludes humans); White Fang a
        # place-of-birth edge (P19 is for humans, White Fang is a literary work)
        for entity, removed in (("wd:Q900001", "P17"), ("wd:Q1045540", "P19")):
            saga = observe(kg, "saga", "lookup", entity, monkeypatch, schema_cache, lookup_max_properties=cap)
            spinach = observe(kg, "spinach", "lookup", entity, monkeypatch, schema_cache, lookup_max_properties=cap)
            assert not re.search(rf"\b{removed}\b", saga), saga  # no wdt:, p:, ps: copy, nor in the not-shown line
            assert "properties removed: their declared types exclude" in saga
            assert re.search(rf"\b{removed}\b", spinach)  # SPINACH (no model: unpruned) shows it
            assert "p:" not in spinach.replace("wdt:", "")  # statement namespaces never appear as properties
    finally:
        kg.close()


def test_each_property_is_shown_once_with_its_qualifiers(real_kg, monkeypatch, schema_cache):
    text = observe(real_kg, "spinach", "lookup", "wd:Q45765", monkeypatch, schema_cache)
    assert text.count("(wdt:P26)") == 1 and text.count("(wdt:P19)") == 1
    spouses = text.split("- spouse (wdt:P26)")[1].splitlines()[1]
    assert ("Charmian London (wd:Q900006) [start time (pq:P580): 1905-11-19T00:00:00Z; end time (pq:P582): "
            "1916-11-22T00:00:00Z; end cause (pq:P1534): death (wd:Q4)]") in spouses
    assert "London (wd:Q84)" not in text.split("- place of birth (wdt:P19)")[1].splitlines()[1]  # deprecated


def test_the_needed_property_of_a_large_entity_is_shown_or_named_by_the_cap(real_kg, monkeypatch, schema_cache):
    full = observe(real_kg, "saga", "lookup", "Q42", monkeypatch, schema_cache)
    shown, _, rest = full.partition("more properties not shown: ")
    assert "- spouse (wdt:P26)" in shown and "Jane Belson (wd:Q14623681)" in shown
    assert "- languages spoken, written or signed (wdt:P1412)" in shown  # its 42 non-identifiers fit the cap
    assert "VIAF ID (wdt:P214)" in shown and "wdt:P8408" in rest  # identifiers come last, named when cut
    count = int(re.search(r"\((\d+) more properties not shown", full).group(1))
    assert count == 208 - 50  # Q42 has 209 truthy properties: the type (P31, shown as types), 50 shown, the rest named
    small = observe(real_kg, "saga", "lookup", "Q42", monkeypatch, schema_cache, lookup_max_properties=10)
    shown, _, rest = small.partition("more properties not shown: ")
    assert "wdt:P1412" not in shown and "languages spoken, written or signed (wdt:P1412)" in rest


@pytest.mark.parametrize(("text", "expected"), [("wife", "spouse (wdt:P26)"),
                                                ("seats", "maximum capacity (wdt:P1083)"),
                                                ("written by", "author (wdt:P50)")])
def test_property_search_keeps_what_the_search_matched_by_alias(real_kg, text, expected, monkeypatch, schema_cache):
    for method in ("spinach", "saga"):
        shown = observe(real_kg, method, "search", text, monkeypatch, schema_cache)
        line = next(line for line in shown.splitlines() if expected in line)
        assert f"[matched: {text}]" in line
