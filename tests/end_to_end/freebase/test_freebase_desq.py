"""DeSQ on Freebase: the id scheme, gold decompositions of the three datasets' query shapes, the KB memory."""

from __future__ import annotations

from sparqlab.data.registry import load
from sparqlab.eval.structural import structural_em
from sparqlab.graphs.freebase import FB
from sparqlab.kg import get_profile
from sparqlab.methods.desq.fragments import assemble, decompose, scheme_for
from sparqlab.methods.desq.kb_memory import catalogue_entries

SCHEME = scheme_for("freebase")


def test_freebase_ids_split_into_entities_classes_and_relations():
    assert SCHEME.split(FB + "m.03_r3") == ("ns", "m.03_r3", "entity")
    assert SCHEME.split(FB + "g.11b6d2") == ("ns", "g.11b6d2", "entity")
    assert SCHEME.split(FB + "people.person") == ("ns", "people.person", "class")
    assert SCHEME.split(FB + "base.cyclocross.bicycle_wheel") == ("ns", "base.cyclocross.bicycle_wheel", "class")
    assert SCHEME.split(FB + "people.person.nationality")[2] == "property"
    assert SCHEME.split(FB + "base.cyclocross.bicycle_wheel.holes")[2] == "property"
    assert SCHEME.split(FB + "type.object.type") is None  # vocabulary stays literal, as rdf:type does
    assert SCHEME.join("ns", "m.03_r3") == FB + "m.03_r3"


def test_each_fixture_query_round_trips_with_freebase_slots():
    for question in load("freebase-fixture"):
        decomposition = decompose(question.gold_sparql, SCHEME)
        ids = {slot.id for slot in decomposition.slots}
        assert any(i.startswith("m.") for i in ids) and any(i.count(".") >= 2 for i in ids), question.id
        assembled = assemble(decomposition.fragments, decomposition.slots, SCHEME)
        assert structural_em(assembled, question.gold_sparql) == 1, question.id
    grail = decompose(load("freebase-fixture")[-1].gold_sparql, SCHEME)
    assert dict(zip([s.id for s in grail.slots], grail.kinds.values(), strict=True)) == {
        "language.human_language": "class", "m.0bzhby": "entity", "language.human_language.dialects": "property"}


def test_a_changed_relation_breaks_structural_em():
    question = load("freebase-fixture")[0]
    decomposition = decompose(question.gold_sparql, SCHEME)
    slots = [slot if slot.id != "location.country.languages_spoken" else
             type(slot)(slot.placeholder, "location.country.official_language") for slot in decomposition.slots]
    assert structural_em(assemble(decomposition.fragments, slots, SCHEME), question.gold_sparql) == 0


def test_kb_memory_holds_relations_with_descriptions_types_and_dataset_entities():
    entries = {(e.kind, e.id): e for e in catalogue_entries(get_profile("freebase"))}
    nationality = entries["property", "people.person.nationality"]
    assert nationality.label == "Country of nationality" and "citizen" in nationality.description
    assert entries["class", "location.country"].label == "country"
    assert entries["entity", "m.03_r3"].label == "Jamaica"
    kinds = [kind for kind, _ in entries]
    assert kinds.count("property") > 18_000 and kinds.count("entity") > 20_000
