"""The ``standin-keyword-rules`` parser: the exact query it writes (parsed with rdflib's SPARQL algebra, so a
both-directions fallback cannot pass for a directed query) and the direction it picks from the movie KG's class
notes."""

import pytest
from rdflib import Literal, URIRef, Variable
from rdflib.plugins.sparql import prepareQuery

from sparqlab.kg import open_kg
from sparqlab.kg.describe import describe_schema
from sparqlab.methods.direct.keyword_rules import class_words, keyword_query

LABEL = URIRef("http://www.w3.org/2000/01/rdf-schema#label")
TOPIC, REL, URI = Variable("topic"), Variable("rel"), Variable("uri")


@pytest.fixture(scope="module")
def schema():
    """The class and relation lists exactly as the prompt shows them (``- class Film: a film (movie)``)."""
    with open_kg("movies") as kg:
        return describe_schema(kg)


def alternatives(node) -> list[frozenset]:
    """The query's graph pattern as alternatives (a UNION multiplies out), each the set of its triple patterns.

    Any algebra node other than BGP, Join, Union, Project, Distinct fails the test: the expected shape is exact.
    """
    name = node.name
    if name == "BGP":
        return [frozenset(node.triples)]
    if name == "Join":
        return [a | b for a in alternatives(node.p1) for b in alternatives(node.p2)]
    if name == "Union":
        return alternatives(node.p1) + alternatives(node.p2)
    if name in ("SelectQuery", "Project", "Distinct"):
        return alternatives(node.p)
    raise AssertionError(f"unexpected algebra node {name}")


def shape(sparql: str) -> tuple[list[str], list[set]]:
    """Projected variables and the pattern alternatives of ``sparql``."""
    algebra = prepareQuery(sparql).algebra
    assert algebra.p.name == "Distinct"
    return [str(v) for v in algebra.PV], sorted((set(a) for a in alternatives(algebra)), key=sorted)


def expected(topic: str, relation: str, *edges: tuple) -> tuple[list[str], list[set]]:
    common = {(TOPIC, LABEL, Literal(topic)), (REL, LABEL, Literal(relation)), (URI, LABEL, Variable("label"))}
    return ["label", "uri"], sorted(({*common, edge} for edge in edges), key=sorted)


ANSWERS_ARE_SUBJECTS = (URI, REL, TOPIC)
ANSWERS_ARE_OBJECTS = (TOPIC, REL, URI)


@pytest.mark.parametrize(
    ("question", "topic", "relation", "edges"),
    [
        # the answers' class is named first: "movies" is the Film note's "(movie)"
        ("which movies did [Ridley Scott] direct", "Ridley Scott", "directed_by", [ANSWERS_ARE_SUBJECTS]),
        ("can you name a film directed by [Charles Haid]", "Charles Haid", "directed_by", [ANSWERS_ARE_SUBJECTS]),
        # "actor" / "director" / "writer" come from the Person note only
        ("which actor starred in [Alien]", "Alien", "starred_actors", [ANSWERS_ARE_OBJECTS]),
        ("name the director that directed [Alien]", "Alien", "directed_by", [ANSWERS_ARE_OBJECTS]),
        ("which writer wrote [Alien]", "Alien", "written_by", [ANSWERS_ARE_OBJECTS]),
        ("which person directed [Alien]", "Alien", "directed_by", [ANSWERS_ARE_OBJECTS]),
        # a class named right before the entity is the entity's own class
        ("who starred in the movie [Seven Chances]", "Seven Chances", "starred_actors", [ANSWERS_ARE_OBJECTS]),
        # "films" in the Tag note ("a user tag attached to films") is not a Tag word
        ("what are the tags of the film [Alien]", "Alien", "has_tags", [ANSWERS_ARE_OBJECTS]),
        # no class named: both directions
        ("[Alien] was directed by who", "Alien", "directed_by", [ANSWERS_ARE_OBJECTS, ANSWERS_ARE_SUBJECTS]),
    ],
)
def test_query_shape_and_direction(schema, question, topic, relation, edges):
    assert shape(keyword_query(schema, question)) == expected(topic, relation, *edges)


def test_class_words_come_from_the_class_notes(schema):
    assert "- class Film: a film (movie)" in schema
    assert "- class Person: a person: actor, director or writer" in schema
    words = class_words(schema)
    assert words["Film"] == ["film", "movie"]
    assert words["Person"] == ["person", "actor", "director", "writer"]
    assert not any(w.startswith("film") for w in words["Tag"] + words["Genre"] + words["Language"])


def test_no_entity_or_relation_gives_no_query(schema):
    assert keyword_query(schema, "tell me something about [Alien]") is None
    assert keyword_query(schema, "who directed Alien") is None  # no bracketed entity


def test_direction_decides_the_answers_on_the_kg(schema):
    """"John Carter" names a film (directed by Andrew Stanton) and a person (who directed The Way of War): only
    the direction separates the two answers, the fallback returns both."""
    def labels(question):
        with open_kg("movies") as kg:
            return sorted(row["label"].value for row in kg.query(keyword_query(schema, question)).rows)

    assert labels("which movies did [John Carter] direct") == ["The Way of War"]
    assert labels("which person directed the film [John Carter]") == ["Andrew Stanton"]
    assert labels("[John Carter] was directed by who") == ["Andrew Stanton", "The Way of War"]
