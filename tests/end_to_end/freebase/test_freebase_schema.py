"""SAGA's schema index on Freebase from fb_roles / fb_types / reverse properties, and the type filter."""

from __future__ import annotations

import json

from sparqlab.cli import main
from sparqlab.graphs.freebase import FB, declared_schema, fb_roles, fb_types, reverse_properties


def test_fb_roles_is_read_with_the_fused_lines_skipped():
    roles = fb_roles()
    assert len(roles) == 19_278  # 19,280 lines, two of which fuse two records upstream
    assert roles["location.country.languages_spoken"] == ("location.country", "language.human_language")
    assert all(len(value) == 2 for value in roles.values())


def test_types_and_reverse_properties():
    assert "people.person" in fb_types()["government.politician"]
    reverse = reverse_properties()
    assert reverse["location.country.languages_spoken"] == "language.human_language.countries_spoken_in"
    assert reverse["language.human_language.countries_spoken_in"] == "location.country.languages_spoken"


def test_declared_schema_has_formal_domain_range_and_names():
    schema = declared_schema()
    label, description, domain, range_ = schema.properties[FB + "people.person.nationality"]
    assert label == "Country of nationality" and "citizen" in description
    assert domain == (FB + "people.person",) and range_ == (FB + "location.country",)
    assert FB + "people.person" in schema.superclasses[FB + "government.politician"]


def _filter(url: str, properties: list[str], *extra: str, capsys) -> dict:
    code = main(["schema", "filter", "--kg", "freebase", "--kg-url", url, "--entity", "ns:m.072_m3",
                 "--properties", ",".join(properties), "--format", "json", *extra])
    assert code == 0
    return json.loads(capsys.readouterr().out)


def test_filter_removes_a_conflicting_relation_and_keeps_an_undeclared_one(freebase_url, capsys):
    conflicting = "ns:location.country.languages_spoken"  # fb_roles domain location.country
    declared = "ns:government.politician.government_positions_held"  # domain government.politician, her type
    undeclared = "ns:common.notable_for.object"  # not in fb_roles: unconstrained
    report = _filter(freebase_url, [conflicting, declared, undeclared], capsys=capsys)
    assert report["types"] == [FB + "common.topic", FB + "government.politician"]
    assert report["removed"] == [FB + "location.country.languages_spoken"]
    assert report["kept"] == [FB + "government.politician.government_positions_held", FB + "common.notable_for.object"]


def test_subclass_closure_comes_from_fb_types(freebase_url, capsys):
    # domain people.person, not among her declared types: kept only through fb_types' politician -> person
    properties = ["ns:people.person.nationality", "ns:film.performance.actor"]
    assert _filter(freebase_url, properties, capsys=capsys)["kept"] == []
    report = _filter(freebase_url, properties, "--subclass-closure", capsys=capsys)
    assert report["kept"] == [FB + "people.person.nationality"]
    assert report["removed"] == [FB + "film.performance.actor"]


def test_supertypes_come_from_fb_types_not_from_the_endpoint(freebase_kg, freebase_url):
    from sparqlab.kg import open_kg
    from sparqlab.methods.agents.schema import declared_superclasses, superclasses

    politician = FB + "government.politician"
    closed = declared_superclasses(freebase_kg, {politician})
    assert {politician, FB + "people.person", FB + "common.topic"} <= closed
    assert superclasses(freebase_kg, {politician}) == closed
    # the same endpoint without the Freebase profile has no curated schema: its own subclass triples are asked
    assert declared_superclasses(open_kg(freebase_url, cache=False), {politician}) is None
