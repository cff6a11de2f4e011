"""Ids as people type them: each profile's short id forms resolve to the KG's IRIs, on the Python API
(profile, lookup, property_examples, entity_types); the CLI side is tests/cli/test_cli_id_forms.py."""

from __future__ import annotations

import pytest

from sparqlab.graphs.movies import entity_iri, relation_iri
from sparqlab.graphs.profiles import MOVIES, WIKIDATA
from sparqlab.kg.neighbourhood import lookup, property_examples
from sparqlab.kg.profiles import IdForm, KGProfile, generic_profile
from sparqlab.methods.agents.schema import entity_types

WD, WDT = "http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/direct/"


def test_wikidata_takes_bare_q_and_p_ids():
    assert WIKIDATA.resolve_id("Q1006") == WD + "Q1006"
    assert WIKIDATA.resolve_id(" P57 ", "property") == WD + "P57"
    assert WIKIDATA.predicate_iri(WIKIDATA.resolve_id("P57", "property")) == WDT + "P57"
    # the long forms keep working, and each kind only takes its own short form
    assert WIKIDATA.resolve_id("wd:Q1006") == WIKIDATA.resolve_id(f"<{WD}Q1006>") == WD + "Q1006"
    with pytest.raises(ValueError, match=r"'P57' is not an entity id on wikidata.*such as Q42"):
        WIKIDATA.resolve_id("P57", "entity")
    for typo in ("Q0", "q42", "Q42x", "Douglas Adams"):
        with pytest.raises(ValueError, match="is not an id on wikidata"):
            WIKIDATA.resolve_id(typo)


def test_movie_kg_takes_local_names_as_written():
    # the same IRIs the builder mints, names with spaces and slashes encoded as it does
    assert MOVIES.resolve_id("Person/Ridley Scott", "entity") == entity_iri("Person", "Ridley Scott")
    assert MOVIES.resolve_id("Person/Ridley%20Scott") == entity_iri("Person", "Ridley Scott")
    assert MOVIES.resolve_id("Tag/AC/DC") == entity_iri("Tag", "AC/DC")
    assert MOVIES.resolve_id("directed_by", "property") == relation_iri("directed_by")
    assert MOVIES.resolve_id("Film", "class") == MOVIES.namespace + "class/Film"
    with pytest.raises(ValueError, match="entity id such as Person/Ridley Scott"):
        MOVIES.resolve_id("Ridley Scott", "entity")


def test_a_profile_fills_the_id_form_table():
    """The hook a new KG (Freebase's mids) fills: one IdForm per short form, nothing else to change."""
    fb = "http://rdf.freebase.com/ns/"
    freebase = KGProfile(**{**generic_profile("fb").__dict__, "prefixes": {"ns": fb}, "id_forms": (
        IdForm("entity", r"[mg]\.[0-9a-z_]+", fb, "m.0d3k14"),
        IdForm("property", r"[a-z_0-9]+\.[a-z_0-9]+\.[a-z_0-9]+", fb, "film.film.directed_by"))})
    assert freebase.resolve_id("m.0abc") == fb + "m.0abc" == freebase.resolve_id("ns:m.0abc")
    assert freebase.resolve_id("film.film.directed_by", "property") == fb + "film.film.directed_by"
    with pytest.raises(ValueError, match="such as m.0d3k14"):
        freebase.resolve_id("film.film.directed_by", "entity")
    assert generic_profile("x").id_forms == ()


def test_python_api_takes_short_ids_on_the_movie_kg(movies_kg):
    hood = lookup(movies_kg, "Person/Ridley Scott", incoming=False, values_per_property=5)
    assert hood.id == entity_iri("Person", "Ridley Scott") and hood.label == "Ridley Scott"
    rows = property_examples(movies_kg, "directed_by", limit=2)
    assert len(rows) == 2 and all(r["subject"].startswith(MOVIES.namespace + "entity/Film/") for r in rows)
    assert entity_types(movies_kg, "Film/Alien") == [MOVIES.namespace + "class/Film"]
