"""The movie KG is the MetaQA KB, shaped for label-based SPARQL; checked against the raw KB file."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict

import pytest

from sparqlab.graphs import movies
from sparqlab.graphs.profiles import MOVIES

RANGES = {
    "starred_actors": "Person", "directed_by": "Person", "written_by": "Person", "has_genre": "Genre",
    "has_tags": "Tag", "in_language": "Language", "release_year": "Year", "has_imdb_rating": "Rating",
    "has_imdb_votes": "Votes",
}


@pytest.fixture(scope="module")
def raw_kb():
    with gzip.open(movies.kb_path(), "rt", encoding="utf-8") as handle:
        return [tuple(line.rstrip("\n").split("|")) for line in handle if line.strip()]


@pytest.fixture(scope="module")
def stats(movie_store):
    return json.loads((movie_store.parent / "build.json").read_text(encoding="utf-8"))


def _count(kg, pattern: str) -> int:
    return int(kg.query(f"SELECT (COUNT(*) AS ?n) WHERE {{ {pattern} }}").rows[0]["n"].value)


def test_every_kb_fact_is_a_triple(movies_kg, raw_kb, stats):
    assert len(raw_kb) == 133_582 == stats["kb_facts"]
    for relation in RANGES:
        expected = sum(1 for _, r, _ in raw_kb if r == relation)
        assert _count(movies_kg, f'?s ?rel ?o . ?rel rdfs:label "{relation}"') == expected
    assert _count(movies_kg, "?s ?p ?o") == stats["triples"]


def test_classes_come_from_relation_positions(movies_kg, raw_kb, stats):
    expected = defaultdict(set)
    for subject, relation, obj in raw_kb:
        expected["Film"].add(subject)
        expected[RANGES[relation]].add(obj)
    counts = {cls: len(names) for cls, names in expected.items()}
    assert stats["entities_per_class"] == dict(sorted(counts.items()))
    for cls, count in counts.items():
        assert _count(movies_kg, f"?e a mclass:{cls}") == count


def test_every_entity_has_one_label_type_and_description(movies_kg, stats):
    assert _count(movies_kg, "?e a ?c . ?c a rdfs:Class FILTER(STRSTARTS(STR(?e), STR(movie:)))") == stats["entities"]
    for predicate in ("rdfs:label", "rdfs:comment", "rdf:type"):
        missing = f"?e a ?c . ?c a rdfs:Class FILTER(STRSTARTS(STR(?e), STR(movie:))) " \
                  f"FILTER NOT EXISTS {{ ?e {predicate} ?x }}"
        assert _count(movies_kg, missing) == 0


def test_a_name_in_two_roles_is_two_entities(movies_kg, stats):
    result = movies_kg.query("SELECT ?e ?c WHERE { ?e rdfs:label \"Rain\" ; a ?c }")
    assert {row["c"].value.rsplit("/", 1)[1] for row in result.rows} == {"Film", "Person"}
    assert len({row["e"].value for row in result.rows}) == 2
    shared = movies_kg.query(
        "SELECT (COUNT(DISTINCT ?l) AS ?n) WHERE { ?a rdfs:label ?l ; a ?c1 . ?b rdfs:label ?l ; a ?c2 . "
        "?c1 a rdfs:Class . ?c2 a rdfs:Class FILTER(?c1 != ?c2) }")
    assert int(shared.rows[0]["n"].value) == stats["labels_with_several_classes"] > 0


def test_domain_and_range_are_declared_and_hold(movies_kg):
    declared = movies_kg.query("SELECT ?l ?d ?r WHERE { ?rel rdfs:label ?l ; rdfs:domain ?d ; rdfs:range ?r }")
    assert {row["l"].value: row["r"].value.rsplit("/", 1)[1] for row in declared.rows} == RANGES
    assert {row["d"].value for row in declared.rows} == {MOVIES.namespace + "class/Film"}
    violations = ("?s ?rel ?o . ?rel rdfs:domain ?d ; rdfs:range ?r "
                  "FILTER (NOT EXISTS { ?s a ?d } || NOT EXISTS { ?o a ?r })")
    assert _count(movies_kg, violations) == 0


def test_ggc_label_query_matches_the_raw_kb(movies_kg, raw_kb):
    query = """PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
    SELECT DISTINCT ?label ?uri WHERE { ?uri ?rel1 ?e1 ; ?rel2 ?e2 ; rdfs:label ?label .
      ?rel1 rdfs:label "starred_actors" . ?e1 rdfs:label "Matthias Schoenaerts" .
      ?rel2 rdfs:label "has_tags" . ?e2 rdfs:label "drama" . }"""
    starred = {s for s, r, o in raw_kb if r == "starred_actors" and o == "Matthias Schoenaerts"}
    drama = {s for s, r, o in raw_kb if r == "has_tags" and o == "drama"}
    labels = {term.value for term in movies_kg.query(query).column("label")}
    assert labels == starred & drama and labels


def test_descriptions_are_built_from_facts(movies_kg, raw_kb):
    wind = movies_kg.query('SELECT ?d WHERE { ?f rdfs:label "Wind" ; a mclass:Film ; rdfs:comment ?d }')
    description = wind.rows[0]["d"].value
    assert description.startswith("film (1992) directed by Carroll Ballard")
    assert "Matthew Modine" in description
    person = movies_kg.query('SELECT ?d WHERE { ?p rdfs:label "Carroll Ballard" ; a mclass:Person ; rdfs:comment ?d }')
    directed = sum(1 for _, r, o in raw_kb if r == "directed_by" and o == "Carroll Ballard")
    assert f"director of {directed} films (" in person.rows[0]["d"].value


def test_iri_scheme(movies_kg):
    iri = movies.entity_iri("Film", "Rust and Bone")
    assert iri == "http://sparqlab.org/movies/entity/Film/Rust%20and%20Bone"
    assert movies_kg.query(f"ASK {{ <{iri}> rdfs:label 'Rust and Bone' ; a <{movies.class_iri('Film')}> }}").boolean
    assert movies.entity_iri("Tag", "9/11").endswith("/Tag/9%2F11")


def test_store_is_reused_and_keyed_by_build_hash(movie_store):
    assert movies.ensure_store() == movie_store
    assert movie_store.parent.name == f"movies-{movies.build_hash()}"


def test_ntriples_escape_quotes_and_backslashes():
    text, stats = movies.to_ntriples([('A "quoted" \\ film', "has_tags", "tag")])
    import pyoxigraph

    labels = {t.object.value for t in pyoxigraph.parse(text, format=pyoxigraph.RdfFormat.N_TRIPLES)
              if t.predicate.value.endswith("#label")}
    assert 'A "quoted" \\ film' in labels
    assert stats["entities_per_class"] == {"Film": 1, "Tag": 1}
