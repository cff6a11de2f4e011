"""The profiles of the bundled movie KG, Wikidata and the TEXT2SPARQL challenge's CK25, registered on import in
this order (the order every process reads the KGs' prefixes in). Their other pieces are in modules of their own:
the movie store's builder (:mod:`.movies`), Wikidata's catalogue and search API (:mod:`.wikidata`), CK25's store
(:mod:`sparqlab.text2sparql.ck25_store`). DBpedia, ORKG and Freebase each have one module beside this one; each
module registers its profile on import (:mod:`sparqlab.core.plugins` lists them).
"""

from __future__ import annotations

from sparqlab.graphs import wikidata
from sparqlab.kg.profiles import (
    ConstraintScheme,
    IdForm,
    KGProfile,
    PromptConventions,
    StatementScheme,
    register_profile,
)
from sparqlab.kg.vocab import OWL, RDF, RDFS, SCHEMA, STANDARD_PREFIXES, WD

MOVIES_NS = "http://sparqlab.org/movies/"
"""Namespace of the bundled movie KG (:mod:`sparqlab.graphs.movies`)."""

CK25_VOCAB = "http://ld.company.org/prod-vocab/"
CK25_INSTANCES = "http://ld.company.org/prod-instances/"
"""Namespaces of the CK25 corporate KG (:mod:`sparqlab.text2sparql.ck25_store`): its vocabulary ``pv:`` (the
questions' default namespace) and its instances ``prodi:``."""

MOVIES = KGProfile(
    name="movies",
    type_predicate=RDF + "type",
    label_predicate=RDFS + "label",
    description_predicate=RDFS + "comment",
    prefixes={**STANDARD_PREFIXES, "movie": MOVIES_NS + "entity/", "mclass": MOVIES_NS + "class/",
              "mrel": MOVIES_NS + "relation/"},
    entity_id_pattern=r"^http://sparqlab\.org/movies/entity/[A-Za-z]+/[^/]+$",
    entity_id_example="<http://sparqlab.org/movies/entity/Person/Matthias%20Schoenaerts>",
    property_id_pattern=r"^http://sparqlab\.org/movies/relation/[a-z_]+$",
    constraints=ConstraintScheme("rdfs", domain_predicate=RDFS + "domain", range_predicate=RDFS + "range"),
    answer_key="label",
    namespace=MOVIES_NS,
    prompt_notes="""\
Every entity, class and relation is an IRI that carries an rdfs:label. Match entities and relations by their
exact label instead of guessing IRIs, e.g. `?film ?rel ?person . ?rel rdfs:label "directed_by" .
?person rdfs:label "Ridley Scott" .` One name can label entities of two classes (a film and a tag both called
"Rain"); add `?x rdf:type mclass:Film` when the question makes the class clear. Select the answer entity and its
label: `SELECT DISTINCT ?label ?uri WHERE { ... ?uri rdfs:label ?label . }`.""",
    schema_in_prompt=True,
    id_forms=(
        IdForm("entity", r"[A-Z][A-Za-z]*/(?P<name>.+)", MOVIES_NS + "entity/", "Person/Ridley Scott"),
        IdForm("property", r"[a-z][a-z_]*", MOVIES_NS + "relation/", "directed_by"),
        IdForm("class", r"[A-Z][A-Za-z]*", MOVIES_NS + "class/", "Film"),
    ),
    id_shapes=(
        IdForm("entity", r"entity/.+", MOVIES_NS, "entity/Person/Ridley%20Scott"),
        IdForm("property", r"relation/.+", MOVIES_NS, "relation/directed_by"),
        IdForm("class", r"class/.+", MOVIES_NS, "class/Film"),
    ),
    conventions=PromptConventions(topic="films", query_rules="""\
Everything is matched by its label. A name in square brackets, such as [Blade Runner], is a topic entity: match \
it with rdfs:label and the exact text inside the brackets. Relations are matched by label too: bind a variable \
with ?rel rdfs:label "relation_label" and use that variable as the predicate, for example
  ?film ?rel ?person . ?rel rdfs:label "directed_by" . ?person rdfs:label "Ridley Scott" .
Return the answer entities as ?uri together with their labels as ?label (SELECT DISTINCT ?label ?uri)."""),
    train_dataset="mcqa-movies",
)
"""The bundled MetaQA/WikiMovies KG (:mod:`sparqlab.graphs.movies`); gold answers are names, so ``answer_key`` is
``label`` and gold SPARQL is label-based (``?rel rdfs:label "starred_actors"``)."""

WIKIBASE = "http://wikiba.se/ontology#"
SKOS = "http://www.w3.org/2004/02/skos/core#"

WIKIDATA = KGProfile(
    name="wikidata",
    type_predicate=WD + "prop/direct/P31",
    label_predicate=RDFS + "label",
    description_predicate=SCHEMA + "description",
    prefixes={
        **STANDARD_PREFIXES,
        "wd": WD + "entity/", "wdt": WD + "prop/direct/", "p": WD + "prop/", "ps": WD + "prop/statement/",
        "pq": WD + "prop/qualifier/", "wds": WD + "entity/statement/", "wdv": WD + "value/",
        "wikibase": WIKIBASE, "schema": SCHEMA, "skos": SKOS,
        "bd": "http://www.bigdata.com/rdf#", "psv": WD + "prop/statement/value/",
        "pqv": WD + "prop/qualifier/value/", "pr": WD + "prop/reference/", "prov": "http://www.w3.org/ns/prov#",
    },
    entity_id_pattern=r"^http://www\.wikidata\.org/entity/Q[1-9][0-9]*$",
    entity_id_example="wd:Q42",
    property_id_pattern=r"^http://www\.wikidata\.org/(entity|prop/direct)/P[1-9][0-9]*$",
    constraints=ConstraintScheme(
        "wikidata", statement_predicate=WD + "prop/P2302", statement_value=WD + "prop/statement/P2302",
        subject_type_item=WD + "entity/Q21503250", value_type_item=WD + "entity/Q21510865",
        class_qualifier=WD + "prop/qualifier/P2308", relation_qualifier=WD + "prop/qualifier/P2309",
        instance_relation_item=WD + "entity/Q21503252", subclass_relation_item=WD + "entity/Q21514624",
        either_relation_item=WD + "entity/Q30208840", rank_predicate=WIKIBASE + "rank",
        deprecated_rank=WIKIBASE + "DeprecatedRank",
    ),
    answer_key="iri",
    endpoint="https://query.wikidata.org/sparql",
    search="wikidata_api",
    search_api_url="https://www.wikidata.org/w/api.php",
    label_languages=("en",),
    property_types=(WIKIBASE + "Property",),
    subclass_predicate=WD + "prop/direct/P279",
    property_entity_prefix=WD + "entity/",
    direct_property_prefix=WD + "prop/direct/",
    id_forms=(
        IdForm("entity", r"Q[1-9][0-9]*", WD + "entity/", "Q42"),
        # A property's own item: where a predicate is meant, predicate_iri maps it to wdt:P...
        IdForm("property", r"P[1-9][0-9]*", WD + "entity/", "P57"),
    ),
    statements=StatementScheme(
        truthy_prefix=WD + "prop/direct/", claim_prefix=WD + "prop/", value_prefix=WD + "prop/statement/",
        qualifier_prefix=WD + "prop/qualifier/", entity_prefix=WD + "entity/", best_rank=WIKIBASE + "BestRank",
        property_type=WIKIBASE + "propertyType", identifier_type=WIKIBASE + "ExternalId",
    ),
    alias_predicates=(SKOS + "altLabel",),
    max_in_flight=5,
    id_shapes=(
        IdForm("entity", r"Q[1-9][0-9]*", WD + "entity/", "Q42", "wd"),
        IdForm("property", r"P[1-9][0-9]*", WD + "entity/", "P31", "wd"),
        *(IdForm("property", r"P[1-9][0-9]*", WD + path, "P31", name) for name, path in (
            ("wdt", "prop/direct/"), ("p", "prop/"), ("ps", "prop/statement/"), ("pq", "prop/qualifier/"),
            ("psv", "prop/statement/value/"), ("pqv", "prop/qualifier/value/"),
            ("psn", "prop/statement/value-normalized/"), ("pr", "prop/reference/"), ("wdno", "prop/novalue/"))),
    ),
    conventions=PromptConventions(
        relation_word="properties",
        prompt_prefixes=("wd", "wdt", "rdfs"),
        query_rules="""\
A name in square brackets, such as [Douglas Adams], is a topic entity. Use the prefixes wd: \
<http://www.wikidata.org/entity/> and rdfs: <http://www.w3.org/2000/01/rdf-schema#> when you need them, match \
entities you are unsure of by their English rdfs:label, and use only identifiers you are certain of.""",
        answer_types=(
            ("person / human", "wd:Q5"), ("country", "wd:Q6256"), ("city", "wd:Q515"), ("film / movie", "wd:Q11424"),
            ("organization", "wd:Q43229"), ("award", "wd:Q618779"), ("language", "wd:Q34770"),
            ("university", "wd:Q3918"), ("sports team", "wd:Q12973014"), ("literary work", "wd:Q7725634"),
        ),
    ),
    catalogue=wikidata.CATALOGUE,
    prompt_notes="""\
Entities are Wikidata items `wd:Q...`; direct claims use `wdt:P...`, statements with qualifiers `p:`/`ps:`/`pq:`.
The prefixes wd, wdt, p, ps, pq, rdfs, schema and wikibase are predefined. Entity types are given by
`wdt:P31` (instance of) and `wdt:P279` (subclass of). Labels are `rdfs:label` literals with language tags; select
entity IRIs rather than labels for entity answers.""",
)
"""Wikidata through its public query service (or any mirror: pass its URL with ``profile=WIKIDATA``)."""

CK25 = KGProfile(
    name="ck25",
    type_predicate=RDF + "type",
    label_predicate=RDFS + "label",
    description_predicate=RDFS + "comment",
    prefixes={**STANDARD_PREFIXES, "pv": CK25_VOCAB, "prodi": CK25_INSTANCES,
              "foaf": "http://xmlns.com/foaf/0.1/", "skos": "http://www.w3.org/2004/02/skos/core#"},
    entity_id_pattern=r"^http://ld\.company\.org/prod-instances/\S+$",
    entity_id_example="prodi:dept-73191",
    property_id_pattern=r"^http://ld\.company\.org/prod-vocab/[A-Za-z_]+$",
    constraints=ConstraintScheme("rdfs", domain_predicate=RDFS + "domain", range_predicate=RDFS + "range"),
    answer_key="iri",
    property_types=(RDF + "Property", OWL + "ObjectProperty", OWL + "DatatypeProperty"),
    namespace=CK25_VOCAB,
    prompt_notes="""\
A company's product and staff data. Classes and properties are in the vocabulary `pv:`
(<http://ld.company.org/prod-vocab/>, e.g. pv:Employee, pv:Department, pv:Hardware, pv:memberOf, pv:hasManager,
pv:price); instances in `prodi:` (<http://ld.company.org/prod-instances/>). Every instance, class and property
has an rdfs:label (employees also pv:name); find an instance by its label (`?e rdfs:label "Karen Brant"`) or
look its IRI up. Select the answer resources' IRIs (or the literal values the question asks for).""",
    schema_in_prompt=True,
)
"""The CK25 corporate KG of the TEXT2SPARQL'25 challenge (:mod:`sparqlab.text2sparql.ck25_store`, ``data/ck25``):
answers are IRIs and literal values, as the challenge's official metric compares them; ``pv:`` is the questions' default
namespace and its ``rdfs:domain``/``rdfs:range`` declarations are the schema index's formal constraints."""


for _profile in (MOVIES, WIKIDATA, CK25):
    register_profile(_profile)
