"""Label search: exact and misspelt names, types and descriptions, kinds, type filters, languages."""

from __future__ import annotations

import pytest

from sparqlab.kg import open_kg
from sparqlab.kg.search import LabelIndex, similarity

PERSON = "http://sparqlab.org/movies/class/Person"


def test_exact_name(movies_kg):
    top = movies_kg.search("Matthias Schoenaerts")[0]
    assert top.label == "Matthias Schoenaerts" and top.score == 100
    assert top.types == ["Person"] and top.type_ids == [PERSON]
    assert "The Drop" in top.description
    assert top.kind == "entity"


def test_misspelt_name_is_found(movies_kg):
    hits = movies_kg.search("Mathias Schoenarts", limit=5)
    person = [h for h in hits if h.types == ["Person"]]
    assert person[0].label == "Matthias Schoenaerts"
    assert hits.index(person[0]) < 2  # its same-named tag may tie with it
    assert 85 < person[0].score < 100


def test_fragment_of_a_name(movies_kg):
    assert movies_kg.search("Schoenaerts", limit=3)[0].label.casefold() == "matthias schoenaerts"


def test_ambiguous_label_returns_each_entity_with_its_type(movies_kg):
    hits = [h for h in movies_kg.search("Rain", limit=10) if h.label == "Rain"]
    assert {tuple(h.types) for h in hits} == {("Film",), ("Person",)}
    assert len({h.id for h in hits}) == 2


def test_type_filter(movies_kg):
    hits = movies_kg.search("Rain", types=["Person"], limit=5)
    assert hits and all(h.types == ["Person"] for h in hits)
    assert movies_kg.search("Rain", types=[PERSON], limit=5)[0].id == hits[0].id


def test_property_and_class_search(movies_kg):
    prop = movies_kg.search("starred actors", kind="property", limit=3)[0]
    assert prop.id == "http://sparqlab.org/movies/relation/starred_actors"
    assert prop.description
    assert movies_kg.search("film", kind="class", limit=1)[0].id == "http://sparqlab.org/movies/class/Film"
    assert all(h.kind == "entity" for h in movies_kg.search("starred actors", limit=5))


def test_short_and_empty_queries(movies_kg):
    assert movies_kg.search("   ") == []
    hits = movies_kg.search("Up", limit=5)
    assert hits and all(h.label.casefold().startswith("up") for h in hits)


def test_similarity_prefers_whole_names_over_short_labels():
    assert similarity("Mathias Schoenarts", "Matthias Schoenaerts") > similarity("Mathias Schoenarts", "math")
    assert similarity("hanks tom", "Tom Hanks") == 100
    assert similarity("Tom Hanks", "tom  hanks") == 100


def test_generic_kg_index_filters_languages(small_ttl, tmp_path):
    kg = open_kg(small_ttl, cache=False)
    try:
        index = LabelIndex(kg, tmp_path / "index.sqlite")
        alice = index.search("alice")[0]
        assert alice.id == "http://example.org/alice" and alice.types == ["Person"]
        assert alice.description == "a test person who likes to delete things"
        assert all(h.label != "Alicia" for h in index.search("Alicia"))  # only "" and "en" labels
        assert index.search("knows", kind="property")[0].id == "http://example.org/knows"
        assert index.search("age", kind="property")[0].id == "http://example.org/age"  # used as a predicate
        assert index.search("Person", kind="class")[0].id == "http://example.org/Person"
        assert len(index) == 6
    finally:
        kg.close()


GERMAN_TTL = """\
@prefix ex: <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:castle a ex:Building ; rdfs:label "Schloss Neuschwanstein"@de ; rdfs:comment "Burg in Bayern"@de .
ex:alps rdfs:label "Alpen"@de , "Alps"@en ; rdfs:comment "a mountain range"@en .
ex:Building rdfs:label "building"@en .
"""


def test_labels_in_other_languages_are_found_and_english_is_shown(tmp_path, capsys):
    from sparqlab.cli import main

    ttl = tmp_path / "german.ttl"
    ttl.write_text(GERMAN_TTL, encoding="utf-8")
    kg = open_kg(ttl, cache=False)
    try:
        index = LabelIndex(kg, tmp_path / "index.sqlite")
        castle = index.search("Neuschwanstein")[0]
        assert (castle.id, castle.label, castle.types) == ("http://example.org/castle", "Schloss Neuschwanstein",
                                                           ["building"])
        alps = index.search("Alpen")[0]
        assert (alps.id, alps.label, alps.matched, alps.description) == (
            "http://example.org/alps", "Alps", "Alpen", "a mountain range")
    finally:
        kg.close()
    assert main(["kg", "search", "Schloss Neuschwanstein", "--kg", str(ttl)]) == 0
    assert "Schloss Neuschwanstein  [building]" in capsys.readouterr().out



def test_failed_index_build_leaves_nothing_behind(small_ttl, tmp_path, monkeypatch):
    from sparqlab.kg import search

    def interrupted(path, rows):
        raise KeyboardInterrupt

    monkeypatch.setattr(search, "_write_index", interrupted)
    with open_kg(small_ttl, cache=False) as kg, pytest.raises(KeyboardInterrupt):
        search.build_index(kg, tmp_path / "index.sqlite")
    assert list(tmp_path.iterdir()) == []
