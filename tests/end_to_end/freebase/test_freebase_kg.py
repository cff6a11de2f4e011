"""The Freebase profile over the fixture endpoint: MIDs, names, CVT lookups, search, dotted names."""

from __future__ import annotations

import pytest

from sparqlab.graphs.freebase import FB, FREEBASE, iri_to_mid, mid_to_iri
from sparqlab.kg import open_kg
from sparqlab.kg.neighbourhood import lookup
from sparqlab.sparql.screen import portable_query


def test_mids_and_iris_round_trip():
    assert mid_to_iri("m.03_r3") == FB + "m.03_r3"
    assert mid_to_iri("ns:m.03_r3") == mid_to_iri("/m/03_r3") == FB + "m.03_r3"
    assert iri_to_mid(FB + "m.03_r3") == "m.03_r3"
    with pytest.raises(ValueError, match="not a Freebase IRI"):
        iri_to_mid("http://www.wikidata.org/entity/Q42")
    assert FREEBASE.shorten(FB + "location.country.languages_spoken") == "ns:location.country.languages_spoken"


def test_freebase_without_an_endpoint_says_how_to_give_one():
    with pytest.raises(ValueError, match="--kg-url"):
        open_kg("freebase")


def test_dotted_names_are_expanded_outside_strings_and_comments():
    query = ('PREFIX : <http://rdf.freebase.com/ns/>\nSELECT ?x WHERE { ?x :type.object.type :people.person . '
             '?x ns:a.b.c "ns:x.y.z" . # ns:q.r.s\n ns:m.0_1 ns:location.country.languages_spoken ?x.}')
    expanded = portable_query(query, {"ns": FB})
    assert f"<{FB}type.object.type> :people.person" in expanded
    assert f"<{FB}a.b.c> \"ns:x.y.z\" . # ns:q.r.s" in expanded
    assert f"ns:m.0_1 <{FB}location.country.languages_spoken> ?x.}}" in expanded
    assert portable_query("SELECT * WHERE { ?s ?p ?o }") == "SELECT * WHERE { ?s ?p ?o }"


def test_webqsp_gold_query_runs_on_the_fixture(freebase_kg):
    from sparqlab.data.registry import load
    from sparqlab.eval.normalise import answers_from_result

    for question in load("freebase-fixture"):
        result = freebase_kg.query(question.gold_sparql)
        assert sorted(answers_from_result(result)) == question.gold_answers, question.id


def test_lookup_names_types_and_expands_the_cvt_one_level(freebase_kg):
    hood = lookup(freebase_kg, "ns:m.072_m3")
    assert hood.label == "Anna Bligh"
    assert {t for t, _ in hood.types} == {FB + "common.topic", FB + "government.politician"}
    held = [e for e in hood.outgoing if e.property == FB + "government.politician.government_positions_held"]
    assert len(held) == 1 and held[0].value_label == ""
    inner = {e.property: e for e in held[0].nested}
    district = inner[FB + "government.government_position_held.district_represented"]
    assert district.value_label == "Electoral district of South Brisbane"
    assert FB + "government.government_position_held.office_holder" not in inner  # the edge back is left out
    text = hood.to_observation()
    assert "(unnamed node:)" in text and "      District represented" in text
    nationality = [e for e in hood.outgoing if e.property == FB + "people.person.nationality"][0]
    assert nationality.value_label == "Australia" and nationality.nested == ()


def test_search_finds_entities_by_name_and_relations_by_label(freebase_kg):
    hits = freebase_kg.search("ana bligh")
    assert hits[0].id == FB + "m.072_m3"
    assert FB + "government.politician" in hits[0].type_ids  # types read from the endpoint
    exact = freebase_kg.search("Jamaican English")
    assert exact[0].id == FB + "m.01428y" and exact[0].score == 100.0
    relations = freebase_kg.search("languages spoken", kind="property")
    assert FB + "location.country.languages_spoken" in [h.id for h in relations[:3]]


def test_virtuoso_boolean_words_become_operators():
    query = "SELECT ?x WHERE { ?x ?p ?o FILTER (!isLiteral(?x) OR lang(?x) = 'OR' and ?o) } # AND"
    assert portable_query(query) == "SELECT ?x WHERE { ?x ?p ?o FILTER (!isLiteral(?x) || lang(?x) = 'OR' && ?o) } # AND"


def test_the_agents_show_a_cvt_with_each_of_its_properties_once(freebase_kg, tmp_path, monkeypatch):
    import asyncio

    from sparqlab.methods import make_method

    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path))
    text = asyncio.run(make_method("spinach").observe(freebase_kg, "lookup", "ns:m.072_m3")).text
    cvt = text.split("-> ns:m.0fx_cvt1 {", 1)[1].split("}", 1)[0]
    parts = cvt.split("; ")
    assert [p.split(" -> ")[0].rsplit("(", 1)[-1].rstrip(")") for p in parts] == [
        "ns:government.government_position_held.district_represented", "ns:government.government_position_held.from"]
    assert "Electoral district of South Brisbane (ns:m.026q11g)" in parts[0] and "office_holder" not in cvt
