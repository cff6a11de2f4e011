"""DBpedia: the KG profile, its search and the DBpedia-shaped fixture (TEXT2SPARQL's DB25 and DB26).

DBpedia is not bundled; a researcher points the workbench at an endpoint holding the DBpedia release the
questions were written for (``--kg dbpedia --kg-url URL``: the organisers used their own Virtuoso; there is no
default, since another release gives other answers), and the tests at a small hand-written DBpedia-shaped Turtle
file (``data/text2sparql/dbpedia_fixture/``) served by ``oxigraph serve-read-only``. Registered on import:

- the profile: ``dbo:`` ontology (classes and properties with ``rdfs:domain`` / ``rdfs:range``: the formal source
  of SAGA's schema index, as the DBpedia ontology declares them), ``dbr:`` resources, ``dbp:`` raw infobox
  properties (untyped values, no declarations), ``dbc:`` categories; names are ``rdfs:label`` literals tagged
  with a language (``"Jacques Chirac"@en``, ``@es``), descriptions ``rdfs:comment``; answers compared by IRI (the
  official true result sets hold IRIs and lexical forms); id shapes for DeSQ's slots (``dbr:`` entities, ``dbo:``
  classes and properties, ``dbp:`` properties) and the prompt conventions (GGC's rules for queries, SAGA's
  answer types, SPINACH's pruning example in DBpedia's ids), so no method spells a DBpedia IRI;
- search (``search="dbpedia"``, :class:`DbpediaSearch`): entities by exact ``rdfs:label`` in each label language
  read from the endpoint, and by the resource IRI a title makes (``dbr:Gustave_Eiffel``); the ontology's classes
  and properties (a few thousand) from a local label index built from the endpoint once.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from sparqlab.core.paths import data_dir
from sparqlab.kg.profiles import (
    STANDARD_PREFIXES,
    ConstraintScheme,
    IdForm,
    KGProfile,
    PromptConventions,
    register_profile,
)
from sparqlab.kg.vocab import OWL, RDF, RDFS

if TYPE_CHECKING:
    from sparqlab.kg.base import KnowledgeGraph
    from sparqlab.kg.results import SearchHit

DBO = "http://dbpedia.org/ontology/"
DBR = "http://dbpedia.org/resource/"
DBP = "http://dbpedia.org/property/"

ENTITY_IDS = IdForm("entity", r"[^\s<>]+", DBR, "Gustave_Eiffel")
ONTOLOGY_PROPERTY_IDS = IdForm("property", r"[a-z][A-Za-z0-9]*", DBO, "birthPlace", "dbo")
CLASS_IDS = IdForm("class", r"[A-Z][A-Za-z0-9]*", DBO, "Person", "dbo")
INFOBOX_PROPERTY_IDS = IdForm("property", r"[a-z][A-Za-z0-9_]*", DBP, "author", "dbp")
"""DBpedia ids: ``dbr:`` resources (Wikipedia titles), ``dbo:`` ontology properties (lower case) and classes
(upper case), ``dbp:`` raw infobox properties."""

DBPEDIA_TYPE_CATALOGUE = (
    ("person", "dbo:Person"), ("country", "dbo:Country"), ("city", "dbo:City"), ("settlement", "dbo:Settlement"),
    ("place", "dbo:Place"), ("film", "dbo:Film"), ("book / written work", "dbo:WrittenWork"),
    ("organisation", "dbo:Organisation"), ("company", "dbo:Company"), ("species", "dbo:Species"),
    ("musical artist", "dbo:MusicalArtist"), ("sports team", "dbo:SportsTeam"), ("award", "dbo:Award"),
)
"""Common classes of the DBpedia ontology for SAGA's answer-type prompt (it has several hundred)."""

QUERY_RULES = """\
A name in square brackets, such as [Gustave Eiffel], is a topic entity. DBpedia resources are dbr: IRIs made from \
the Wikipedia title (dbr:Gustave_Eiffel), ontology properties and classes are dbo: (dbo:birthPlace, dbo:Person) \
and raw infobox properties dbp:, with the prefixes dbr: <http://dbpedia.org/resource/>, dbo: \
<http://dbpedia.org/ontology/> and dbp: <http://dbpedia.org/property/>. Match entities you are unsure of by their \
rdfs:label with a language tag, and return resource IRIs, not their names."""
"""GGC's rules for writing queries over DBpedia (generator and corrector prompts)."""

PRUNE_EXAMPLE = """\
Entity: Eiffel Tower (dbr:Eiffel_Tower): a wrought-iron lattice tower in Paris
{"architect (dbo:architect)": ["Stephen Sauvestre (dbr:Stephen_Sauvestre)"],
 "location (dbo:location)": ["Paris (dbr:Paris)"], "height (dbo:height)": ["330.0"],
 "wikiPageWikiLink (dbo:wikiPageWikiLink)": ["Gustave Eiffel (dbr:Gustave_Eiffel)", "Paris (dbr:Paris)"]}
Question: In which city is the Eiffel Tower?
Output:
{"location (dbo:location)": ["Paris (dbr:Paris)"]}"""
"""SPINACH's pruning example in DBpedia's id style (dbr: resources, dbo: properties)."""

DBPEDIA = KGProfile(
    name="dbpedia",
    type_predicate=RDF + "type",
    label_predicate=RDFS + "label",
    description_predicate=RDFS + "comment",
    prefixes={**STANDARD_PREFIXES, "dbo": DBO, "dbr": DBR, "dbp": DBP, "dbc": DBR + "Category:",
              "foaf": "http://xmlns.com/foaf/0.1/", "dct": "http://purl.org/dc/terms/",
              "skos": "http://www.w3.org/2004/02/skos/core#"},
    entity_id_pattern=r"^http://([a-z]{2}\.)?dbpedia\.org/resource/\S+$",
    entity_id_example="dbr:Gustave_Eiffel",
    property_id_pattern=r"^http://dbpedia\.org/(ontology|property)/[A-Za-z0-9_]+$",
    constraints=ConstraintScheme("rdfs", domain_predicate=RDFS + "domain", range_predicate=RDFS + "range"),
    answer_key="iri",
    search="dbpedia",
    label_languages=("en", "es", "de"),
    property_types=(RDF + "Property", OWL + "ObjectProperty", OWL + "DatatypeProperty"),
    class_types=(OWL + "Class",),
    namespace=DBO,
    id_forms=(IdForm("entity", r"[A-Z0-9][^\s:<>]*", DBR, "Gustave_Eiffel"),
              IdForm("property", r"[a-z][A-Za-z0-9]*", DBO, "birthPlace"),
              IdForm("class", r"[A-Z][A-Za-z0-9]*", DBO, "Person")),
    id_shapes=(ENTITY_IDS, CLASS_IDS, ONTOLOGY_PROPERTY_IDS, INFOBOX_PROPERTY_IDS),
    conventions=PromptConventions(relation_word="properties", query_rules=QUERY_RULES,
                                  answer_types=DBPEDIA_TYPE_CATALOGUE, prune_example=PRUNE_EXAMPLE),
    prompt_notes="""\
DBpedia: resources `dbr:` (<http://dbpedia.org/resource/>, the Wikipedia title with underscores, e.g.
dbr:Gustave_Eiffel), ontology classes and properties `dbo:` (dbo:Person, dbo:birthPlace), raw infobox properties
`dbp:` (dbp:author); types by rdf:type. Names are rdfs:label literals with a language tag
(`?x rdfs:label "Eiffel Tower"@en`). The same fact may be stated with dbo: and with dbp:. Select resource IRIs for
entity answers, numbers for counts, ASK for yes/no questions.""",
)
"""DBpedia behind a user's SPARQL endpoint (no default endpoint: pass ``--kg-url``)."""

register_profile(DBPEDIA)


def resource_iri(title: str) -> str:
    """The ``dbr:`` IRI a title makes: spaces to underscores, percent-encoding as DBpedia writes its IRIs."""
    return DBR + quote(" ".join(title.split()).replace(" ", "_"), safe="_()',.-!$&*+;=@~:")


class DbpediaSearch:
    """Search over DBpedia: entities by exact label (each label language) and by the title's resource IRI, read
    from the endpoint; classes and properties from a label index of the ontology (built once, cached)."""

    def __init__(self, kg: KnowledgeGraph):
        from sparqlab.core.paths import cache_dir
        from sparqlab.kg.search import LabelIndex

        self.kg = kg
        key = hashlib.sha256((kg.identity + Path(__file__).read_text(encoding="utf-8")).encode()).hexdigest()[:20]
        self.index = LabelIndex(kg, cache_dir() / "search" / f"dbpedia-schema-{key}.sqlite",
                                rows=lambda: schema_rows(kg))

    def search(self, text: str, *, kind: str = "entity", limit: int = 10,
               types: list[str] | None = None) -> list[SearchHit]:
        from sparqlab.kg.results import SearchHit
        from sparqlab.kg.search import add_types, rank

        text = text.strip()
        if not text:
            return []
        if kind != "entity":
            return self.index.search(text, kind=kind, limit=limit, types=types)
        literals = " ".join(f"{json.dumps(text)}@{lang}" for lang in DBPEDIA.label_languages)
        rows = self.kg.query(
            f"SELECT DISTINCT ?e ?label WHERE {{ {{ VALUES ?label {{ {literals} }} ?e <{RDFS}label> ?label }} "
            f"UNION {{ BIND(<{resource_iri(text)}> AS ?e) ?e <{RDFS}label> ?label "
            f"FILTER(LANG(?label) = \"{DBPEDIA.label_languages[0]}\") }} }} LIMIT 50").rows
        hits = [(SearchHit(row["e"].value, row["label"].value, kind="entity"), 1) for row in rows]
        add_types(self.kg, [hit for hit, _ in hits], DBPEDIA.label_languages[0])
        return rank(text, [(h, p) for h, p in hits if not types or set(types) & set(h.type_ids + h.types)], limit)


def schema_rows(kg: KnowledgeGraph) -> list[tuple]:
    """Label-index rows of the ontology's classes and properties (typed owl:Class / rdf:Property /
    owl:ObjectProperty / owl:DatatypeProperty), their first label in the profile's languages."""
    from sparqlab.kg.search import index_row

    kinds = {OWL + "Class": "class", RDF + "Property": "property", OWL + "ObjectProperty": "property",
             OWL + "DatatypeProperty": "property"}
    values = " ".join(f"<{t}>" for t in kinds)
    languages = ", ".join(json.dumps(lang) for lang in DBPEDIA.label_languages)
    rows = kg.bulk_values(f"SELECT ?e ?t ?label WHERE {{ VALUES ?t {{ {values} }} ?e a ?t ; <{RDFS}label> ?label "
                          f"FILTER(LANG(?label) IN ({languages})) }}")
    return [index_row(row["e"], row["label"], "", kinds[row["t"]]) for row in rows]


def _register_search() -> None:
    from sparqlab.kg.base import register_searcher

    register_searcher("dbpedia", DbpediaSearch)


_register_search()


def fixture_ttl() -> Path:
    """The hand-written DBpedia-shaped Turtle file (``data/text2sparql/dbpedia_fixture/dbpedia_fixture.ttl``)."""
    return data_dir() / "text2sparql" / "dbpedia_fixture" / "dbpedia_fixture.ttl"


def fixture_store() -> Path:
    """A pyoxigraph store of the fixture (``cache_dir()/kg/dbpedia-fixture-<hash>/store``, built on first use),
    to serve with ``oxigraph serve-read-only`` (:func:`sparqlab.engines.oxigraph_server.serve_store`) as a DBpedia
    endpoint."""
    from sparqlab.engines.oxigraph_store import turtle_store

    return turtle_store("dbpedia-fixture", fixture_ttl())
