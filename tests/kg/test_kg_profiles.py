"""Profiles hold every KG-specific name; their generated queries run on the KG they describe."""

from __future__ import annotations

import re

import pytest

from sparqlab.graphs.profiles import MOVIES, WIKIDATA
from sparqlab.kg import get_profile, open_kg
from sparqlab.kg.profiles import PROFILES, generic_profile


def test_registry_and_unknown_names():
    assert set(PROFILES) >= {"movies", "wikidata"}
    assert get_profile("movies") is MOVIES
    with pytest.raises(ValueError, match="known: ck25, dbpedia, freebase, movies, orkg, wikidata"):
        get_profile("no-such-kg")


def test_answer_keys_and_backends():
    assert MOVIES.answer_key == "label" and WIKIDATA.answer_key == "iri"
    assert MOVIES.store_builder is not None and MOVIES.endpoint is None
    assert WIKIDATA.endpoint == "https://query.wikidata.org/sparql" and WIKIDATA.search == "wikidata_api"
    assert WIKIDATA.type_predicate.endswith("/prop/direct/P31")


def test_id_patterns_describe_the_ids(movies_kg):
    film = movies_kg.query('SELECT ?f WHERE { ?f rdfs:label "Wind" ; a mclass:Film }').rows[0]["f"].value
    assert re.match(MOVIES.entity_id_pattern, film)
    relation = movies_kg.query('SELECT ?r WHERE { ?r rdfs:label "directed_by" }').rows[0]["r"].value
    assert re.match(MOVIES.property_id_pattern, relation)
    assert re.match(WIKIDATA.entity_id_pattern, WIKIDATA.prefixes["wd"] + "Q42")
    assert not re.match(WIKIDATA.entity_id_pattern, WIKIDATA.prefixes["wd"] + "P31")


def test_rdfs_domain_range_query_runs_on_the_movie_kg(movies_kg):
    query = MOVIES.constraints.domain_range_query(MOVIES.namespace + "relation/has_genre")
    rows = movies_kg.query(query).rows
    assert {(r["kind"].value, r["class"].value.rsplit("/", 1)[1]) for r in rows} == {("domain", "Film"),
                                                                                     ("range", "Genre")}


def test_wikidata_constraint_query_runs_on_wikidata_shaped_data(tmp_path):
    """P2302 statements shaped as Wikidata publishes them (classes made up for the test)."""
    ttl = tmp_path / "constraints.ttl"
    ttl.write_text("""
        @prefix wd: <http://www.wikidata.org/entity/> . @prefix p: <http://www.wikidata.org/prop/> .
        @prefix ps: <http://www.wikidata.org/prop/statement/> . @prefix pq: <http://www.wikidata.org/prop/qualifier/> .
        wd:P50 p:P2302 [ ps:P2302 wd:Q21503250 ; pq:P2308 wd:Q571 ] , [ ps:P2302 wd:Q21510865 ; pq:P2308 wd:Q5 ] ,
                       [ ps:P2302 wd:Q19474404 ] .
        """, encoding="utf-8")
    kg = open_kg(ttl, profile=WIKIDATA, cache=False)
    try:
        rows = kg.query(WIKIDATA.constraints.domain_range_query(WIKIDATA.prefixes["wd"] + "P50")).rows
        assert {(r["kind"].value, r["class"].value.rsplit("/", 1)[1]) for r in rows} == {("domain", "Q571"),
                                                                                         ("range", "Q5")}
    finally:
        kg.close()


def test_shorten():
    assert WIKIDATA.shorten("http://www.wikidata.org/entity/Q42") == "wd:Q42"
    assert MOVIES.shorten("http://sparqlab.org/movies/relation/starred_actors") == "mrel:starred_actors"
    assert MOVIES.shorten("http://sparqlab.org/movies/entity/Film/Rust%20and%20Bone").startswith("<")
    assert generic_profile("x").shorten("http://example.org/a") == "<http://example.org/a>"


def test_open_kg_by_name_picks_the_profile_backend(movie_store):
    from sparqlab.kg import EmbeddedKG, EndpointKG

    with open_kg("wikidata", cache=False) as wikidata:  # no request is made
        assert isinstance(wikidata, EndpointKG) and wikidata.url == WIKIDATA.endpoint
        assert wikidata.profile is WIKIDATA
    with open_kg("movies", cache=False, timeout_s=5, max_rows=7) as movies:
        assert isinstance(movies, EmbeddedKG) and movies.profile is MOVIES
        assert movies.identity == f"movies@{movie_store.parent.name}"
        assert (movies.options.timeout_s, movies.options.max_rows) == (5, 7)
        assert len(movies.query("SELECT * WHERE { ?s ?p ?o }").rows) == 7


def test_schema_description_is_read_from_the_kg(movies_kg, small_ttl):
    from dataclasses import replace

    from sparqlab.graphs.movies import CLASS_COMMENTS, RELATION_RANGES
    from sparqlab.kg.describe import describe_schema

    lines = describe_schema(movies_kg).splitlines()
    middle = lines.index("Relations (subject class -> object class):")
    classes, relations = lines[1:middle], lines[middle + 1:]
    assert lines[0] == "Classes:" and classes == sorted(classes) and relations == sorted(relations)
    assert {line.split(":")[0] for line in classes} == {f"- class {cls}" for cls in CLASS_COMMENTS}
    declared = {f"- {relation}: Film -> {cls}" for relation, cls in RELATION_RANGES.items()}
    assert {line.split(" (")[0] for line in relations} == declared
    with open_kg(small_ttl, cache=False) as small:
        assert describe_schema(small) == ""  # a derived profile keeps its schema in its notes
        small.profile = replace(small.profile, schema_in_prompt=True)
        assert describe_schema(small).splitlines() == [  # answers are IRIs: so are the listed names
            "Classes:", "- class Person (ex:Person)", "Relations (subject class -> object class):",
            "- knows (ex:knows): Person -> Person"]  # shortened by the prefix the file declares
