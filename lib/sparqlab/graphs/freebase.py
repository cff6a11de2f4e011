"""Freebase: the KG profile, MIDs as ids, the curated schema files and the datasets' entity names.

Freebase is not bundled (its dump is ~2 billion triples); a researcher points the workbench at a Virtuoso or QLever
server holding it (``--kg freebase --kg-url URL``), and the tests at a small hand-written Freebase-shaped Turtle
file (``data/freebase/fixture/``) served by ``oxigraph serve-read-only``. Everything KG-specific lives here and
registers itself with :mod:`sparqlab.kg.profiles` and :mod:`sparqlab.kg.base` (its search) on import:

- the profile: ``ns:`` = ``http://rdf.freebase.com/ns/``, names from ``type.object.name`` (English), types from
  ``type.object.type``, descriptions from ``common.topic.description``, answers compared by IRI (gold answers are
  MIDs); CVT (mediator) nodes have no name, so lookups show their outgoing edges one level deep
  (``expand_unnamed``), as Freebase agents do;
- MIDs as ids: ``m.03_r3`` <-> ``http://rdf.freebase.com/ns/m.03_r3`` (:func:`mid_to_iri`, :func:`iri_to_mid`);
- the declared schema of SAGA's index (section 3: "for Freebase, they come from the curated fb_roles schema"):
  ``fb_roles`` (domain / range per relation), ``fb_types`` (supertypes), ``reverse_properties``, and property names
  and descriptions from Pangu's ``fb_schema_properties`` (:func:`declared_schema`);
- entity search (``search="freebase_labels"``): a local label index of the entities the datasets name (WebQSP topic
  entities and answers, CWQ and GrailQA topic entities and GrailQA answers) plus the schema's relations and types,
  with exact-name matches read from the endpoint itself (``type.object.name`` is indexed by Virtuoso and QLever).

Files: ``data/freebase/`` (see its PROVENANCE.md; the question files have no stated licence and stay in ``data/``).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from sparqlab.core.paths import data_dir
from sparqlab.kg.profiles import (
    STANDARD_PREFIXES,
    CatalogueEntry,
    ConstraintScheme,
    DeclaredSchema,
    ElementCatalogue,
    IdForm,
    KGProfile,
    PromptConventions,
    register_declared_schema,
    register_profile,
)

if TYPE_CHECKING:
    from sparqlab.kg.base import KnowledgeGraph
    from sparqlab.kg.results import SearchHit

FB = "http://rdf.freebase.com/ns/"
"""The Freebase namespace (``ns:`` in WebQSP / CWQ queries, the empty prefix ``:`` in GrailQA's)."""

MID_PATTERN = r"[mg]\.[0-9a-z_]+"
"""A machine id: ``m.`` (topics, CVTs) or ``g.`` (newer ids) and base-32 characters."""

TYPE_PATTERN = r"(?:base\.[a-z0-9_]+|user\.[a-z0-9_]+\.[a-z0-9_]+|[a-z0-9_]+)\.[a-z0-9_]+"
"""A type id ``domain.type``; types in ``base.*`` have three segments and in ``user.*`` four."""

ENTITY_IDS = IdForm("entity", MID_PATTERN, FB, "m.03_r3", "ns")
PROPERTY_IDS = IdForm("property", TYPE_PATTERN + r"\.[a-z0-9_]+", FB, "location.country.languages_spoken", "ns")
CLASS_IDS = IdForm("class", TYPE_PATTERN, FB, "people.person", "ns")
"""Freebase ids after ``ns:``: MIDs are entities, ``domain.type`` ids classes, ``domain.type.property`` ids
relations (a type's segments and one more)."""

FREEBASE_TYPE_CATALOGUE = (
    ("person", "ns:people.person"), ("country", "ns:location.country"), ("city / town", "ns:location.citytown"),
    ("location", "ns:location.location"), ("film", "ns:film.film"), ("film actor", "ns:film.actor"),
    ("organization", "ns:organization.organization"), ("award", "ns:award.award"),
    ("human language", "ns:language.human_language"), ("sports team", "ns:sports.sports_team"),
    ("book", "ns:book.book"), ("musical artist", "ns:music.artist"),
)
"""Common Freebase answer types for SAGA's Freebase answer-type prompt (appendix F.1: "answer_type_qid holds a
Freebase type string (e.g. people.person)"); fb_roles has about 6,800 types, far too many to list."""

PRUNE_EXAMPLE = """\
Entity: Kingdom of the Netherlands (ns:m.059j2): a country in north-western Europe
{"Official Language (ns:location.country.official_language)": ["Dutch Language (ns:m.02bv9)"],
 "Currency used (ns:location.country.currency_used)": ["Euro (ns:m.02l6h)"],
 "Government Positions Held (ns:government.governmental_jurisdiction.governing_officials)": ["ns:m.0nfl7xs
 {Office Holder (ns:government.government_position_held.office_holder) -> Mark Rutte (ns:m.04z31x)}"]}
Question: Who is the prime minister of the Netherlands?
Output:
{"Government Positions Held (ns:government.governmental_jurisdiction.governing_officials)": ["ns:m.0nfl7xs
 {Office Holder (ns:government.government_position_held.office_holder) -> Mark Rutte (ns:m.04z31x)}"]}"""
"""SAGA's Freebase variant of SPINACH's pruning example (appendix F): MIDs, dotted relations and a CVT value."""

QUERY_RULES = """\
A name in square brackets, such as [Jamaica], is a topic entity. Freebase entities are MIDs such as ns:m.03_r3 and \
relations are dotted ids such as ns:location.country.languages_spoken, with the prefix ns: \
<http://rdf.freebase.com/ns/>. Many facts pass through an unnamed mediator (CVT) node, reached by one relation and \
left by another. Match entities you are unsure of by their English ns:type.object.name, and return the answer \
entities (MIDs), not their names."""

FREEBASE = KGProfile(
    name="freebase",
    type_predicate=FB + "type.object.type",
    label_predicate=FB + "type.object.name",
    description_predicate=FB + "common.topic.description",
    prefixes={**STANDARD_PREFIXES, "ns": FB},
    entity_id_pattern=r"^http://rdf\.freebase\.com/ns/" + MID_PATTERN + "$",
    entity_id_example="ns:m.03_r3",
    property_id_pattern=r"^http://rdf\.freebase\.com/ns/[a-z0-9_]+(\.[a-z0-9_]+){2,}$",
    constraints=ConstraintScheme("rdfs", domain_predicate=FB + "type.property.schema",
                                 range_predicate=FB + "type.property.expected_type"),
    answer_key="iri",
    search="freebase_labels",
    label_languages=("en",),
    property_types=(FB + "type.property",),
    class_types=(FB + "type.type",),
    namespace=FB,
    subclass_predicate=FB + "freebase.type_hints.included_types",
    expand_unnamed=True,
    id_forms=(ENTITY_IDS, PROPERTY_IDS, CLASS_IDS),
    id_shapes=(ENTITY_IDS, CLASS_IDS, PROPERTY_IDS),
    vocabulary=(FB + "type.object.type", FB + "type.object.name"),
    conventions=PromptConventions(query_rules=QUERY_RULES, answer_types=FREEBASE_TYPE_CATALOGUE,
                                  prune_example=PRUNE_EXAMPLE),
    catalogue=ElementCatalogue("sparqlab.kg.freebase.<lambda>", lambda: catalogue()),
    prompt_notes="""\
Entities are Freebase MIDs `ns:m.0xxxx` (prefix `ns:` = <http://rdf.freebase.com/ns/> is predefined); relations
are dotted `ns:domain.type.property` (e.g. `ns:location.country.languages_spoken`), types `ns:domain.type`
(`ns:people.person`) given by `ns:type.object.type`. Names are `ns:type.object.name` literals with language tags.
Many facts go through an unnamed mediator (CVT) node: `ns:m.0abc ns:government.politician.government_positions_held
?cvt . ?cvt ns:government.government_position_held.office_position_or_title ?x .` Select entity IRIs (MIDs), not
names, and exclude the topic entity itself: `FILTER (?x != ns:m.0abc)`.""",
)
"""Freebase behind a user's SPARQL endpoint (no default endpoint: pass ``--kg-url``). Its catalogue keeps the name
its loader had when run ids began to hash it (a lambda in ``sparqlab.kg.freebase``), so Freebase runs keep their
ids."""

register_profile(FREEBASE)


def mid_to_iri(mid: str) -> str:
    """``m.03_r3`` (or ``ns:m.03_r3``, ``/m/03_r3``) -> ``http://rdf.freebase.com/ns/m.03_r3``."""
    mid = mid.strip().removeprefix("ns:").removeprefix(FB)
    if mid.startswith(("/m/", "/g/")):
        mid = mid[1] + "." + mid[3:]
    return FB + mid


def iri_to_mid(iri: str) -> str:
    """``http://rdf.freebase.com/ns/m.03_r3`` -> ``m.03_r3``; ``ValueError`` for an IRI outside ``ns:``."""
    if not iri.startswith(FB):
        raise ValueError(f"{iri!r} is not a Freebase IRI (expected {FB}...)")
    return iri[len(FB):]


# ------------------------------------------------------------------------------------------------ files

def freebase_dir() -> Path:
    """``data/freebase`` (schema files, dataset copies, the fixture)."""
    return data_dir() / "freebase"


def read_text_gz(path: Path) -> str:
    """A gzip-compressed UTF-8 text file (a clear error names a missing file)."""
    if not path.is_file():
        raise FileNotFoundError(f"no such data file: {path} (see data/freebase/PROVENANCE.md)")
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return handle.read()


def read_json_gz(path: Path):
    """A gzip-compressed JSON file."""
    return json.loads(read_text_gz(path))


def _records(name: str, width: int) -> Iterator[list[str]]:
    """Whitespace-separated records of an ontology file with exactly ``width`` fields (after dropping an N-Triples
    style trailing ``.``); the two upstream lines that fuse two records have more fields and are skipped."""
    for line in read_text_gz(freebase_dir() / "ontology" / name).splitlines():
        fields = line.split()
        if fields and fields[-1] == ".":
            fields = fields[:-1]
        if len(fields) == width:
            yield fields


def fb_roles() -> dict[str, tuple[str, str]]:
    """GrailQA's ``fb_roles``: relation -> (domain type, range type), 19,278 relations."""
    return {relation: (domain, range_) for domain, relation, range_ in _records("fb_roles.gz", 3)}


def fb_types() -> dict[str, tuple[str, ...]]:
    """GrailQA's ``fb_types``: type -> its supertypes (``meta.subclassOf``), sorted."""
    supers: dict[str, set[str]] = {}
    for sub, _, sup in _records("fb_types.gz", 3):
        supers.setdefault(sub, set()).add(sup)
    return {sub: tuple(sorted(sups)) for sub, sups in supers.items()}


def reverse_properties() -> dict[str, str]:
    """GrailQA's ``reverse_properties``, both directions: relation -> its reverse relation."""
    pairs = dict(_records("reverse_properties.gz", 2))
    return {**{b: a for a, b in pairs.items()}, **pairs}


def cvt_types() -> frozenset[str]:
    """Pangu's list of CVT (mediator) types."""
    return frozenset(r[0] for r in _records("cvt_types.txt.gz", 1))


def property_texts() -> dict[str, tuple[str, str]]:
    """relation -> (English name, description or "") from Pangu's ``fb_schema_properties`` (7 TAB-separated
    columns: id, MID, name, two flags, reverse, description; ``null`` for none)."""
    texts = {}
    for line in read_text_gz(freebase_dir() / "ontology" / "fb_schema_properties.gz").splitlines():
        fields = line.split("\t")
        if len(fields) < 7 or fields[0] == "null":
            continue
        name, description = (value if value != "null" else "" for value in (fields[2], fields[6]))
        texts[fields[0]] = (name, description)
    return texts


def type_label(type_id: str) -> str:
    """A readable name of a type id without a curated one: ``language.human_language`` -> ``human language``."""
    return type_id.rsplit(".", 1)[-1].replace("_", " ")


def _files_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted((freebase_dir() / "ontology").glob("*.gz")):
        digest.update(path.name.encode() + path.read_bytes())
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()[:20]


@functools.cache
def declared_schema() -> DeclaredSchema:
    """The formal schema of SAGA's index over Freebase: every ``fb_roles`` relation (as predicate IRI) with its
    name and description (``fb_schema_properties``; else the last id segment), domain and range; supertypes from
    ``fb_types``. Reverse relations missing from ``fb_roles`` get the swapped domain / range of their pair."""
    roles = fb_roles()
    for relation, reverse in reverse_properties().items():
        if relation not in roles and reverse in roles:
            domain, range_ = roles[reverse]
            roles[relation] = (range_, domain)
    texts = property_texts()
    properties = {}
    for relation, (domain, range_) in roles.items():
        label, description = texts.get(relation, ("", ""))
        properties[FB + relation] = (label or type_label(relation), description, (FB + domain,), (FB + range_,))
    supers = {FB + sub: tuple(FB + s for s in sups) for sub, sups in fb_types().items()}
    return DeclaredSchema(properties, supers, _files_digest())


register_declared_schema(FREEBASE.name, declared_schema)


def catalogue() -> list[CatalogueEntry]:
    """Freebase's elements without reading the KG (the paper's Freebase memory holds the relations and the entities
    the benchmarks use): every ``fb_roles`` relation with its name and description (Pangu's
    ``fb_schema_properties``), every type those relations mention, and the entities the WebQSP / CWQ / GrailQA
    files name (:func:`dataset_entity_names`; they carry a name only)."""
    schema = declared_schema()
    entries = [CatalogueEntry(prop, label, description, "property")
               for prop, (label, description, _, _) in sorted(schema.properties.items())]
    types = sorted({c for _, _, domain, range_ in schema.properties.values() for c in (*domain, *range_)})
    entries += [CatalogueEntry(t, type_label(t), f"Freebase type {t[len(FB):]}", "class") for t in types]
    entries += [CatalogueEntry(mid_to_iri(mid), name, "", "entity") for mid, name in sorted(dataset_entity_names().items())]
    return entries


# ------------------------------------------------------------------------------------------------ fixture

def fixture_ttl() -> Path:
    """The hand-written Freebase-shaped Turtle file (``data/freebase/fixture/freebase_fixture.ttl``)."""
    return freebase_dir() / "fixture" / "freebase_fixture.ttl"


def fixture_store() -> Path:
    """A pyoxigraph store of the fixture (``cache_dir()/kg/freebase-fixture-<hash>/store``, built on first use),
    to serve with ``oxigraph serve-read-only`` (:func:`sparqlab.engines.oxigraph_server.serve_store`) as a stand-in endpoint."""
    from sparqlab.engines.oxigraph_store import turtle_store

    return turtle_store("freebase-fixture", fixture_ttl())


# ------------------------------------------------------------------------------------------------ search

DATASET_FILES = {
    "webqsp": ("webqsp/WebQSP.test.json.gz", "webqsp/WebQSP.train.json.gz"),
    "cwq": ("cwq/cwq_test.tog.json.gz",),
    "grailqa": ("grailqa/grailqa_dev_1000.tog.json.gz",),
}
"""The dataset copies whose entity names feed the label index (paths below ``data/freebase``)."""


def dataset_entity_names() -> dict[str, str]:
    """MID -> English name of every entity the datasets name: WebQSP topic entities and answers, CWQ (ToG copy)
    topic entities, GrailQA topic entities, graph-query entity nodes and answers. Files that are absent are
    skipped (a user may hold only some)."""
    names: dict[str, str] = {}

    def add(mid: str | None, name: str | None) -> None:
        if mid and name and mid[:2] in ("m.", "g."):
            names.setdefault(mid, name)

    base = freebase_dir()
    for relative in DATASET_FILES["webqsp"]:
        if (base / relative).is_file():
            for question in read_json_gz(base / relative)["Questions"]:
                for parse in question["Parses"]:
                    add(parse.get("TopicEntityMid"), parse.get("TopicEntityName"))
                    for answer in parse.get("Answers") or ():
                        add(answer.get("AnswerArgument"), answer.get("EntityName"))
    for relative in (*DATASET_FILES["cwq"], *DATASET_FILES["grailqa"]):
        if (base / relative).is_file():
            for question in read_json_gz(base / relative):
                for mid, name in (question.get("topic_entity") or {}).items():
                    add(mid, name)
                for node in (question.get("graph_query") or {}).get("nodes", ()):
                    if node.get("node_type") == "entity":
                        add(node.get("id"), node.get("friendly_name"))
                for answer in question.get("answer") or ():
                    if isinstance(answer, dict):
                        add(answer.get("answer_argument"), answer.get("entity_name"))
    return names


def label_rows() -> list[tuple]:
    """Rows of the Freebase label index (:func:`sparqlab.kg.search.index_row`): dataset entities, then the
    schema's relations and types."""
    from sparqlab.kg.search import index_row

    rows = [index_row(mid_to_iri(mid), name, "", "entity") for mid, name in sorted(dataset_entity_names().items())]
    schema = declared_schema()
    rows += [index_row(prop, label, description, "property", popularity=1)
             for prop, (label, description, _, _) in sorted(schema.properties.items())]
    types = sorted({c for _, _, domain, range_ in schema.properties.values() for c in (*domain, *range_)})
    rows += [index_row(t, type_label(t), t[len(FB):], "class") for t in types]
    return rows


class FreebaseSearch:
    """Entity search over Freebase: exact ``type.object.name`` matches read from the endpoint, then fuzzy matches
    from the local label index (:func:`label_rows`); types of entity hits are read from the endpoint."""

    def __init__(self, kg: KnowledgeGraph):
        from sparqlab.core.paths import cache_dir
        from sparqlab.kg.search import LabelIndex

        self.kg = kg
        key = hashlib.sha256((_files_digest() + str(sorted(DATASET_FILES.items()))).encode()).hexdigest()[:20]
        self.index = LabelIndex(kg, cache_dir() / "search" / f"freebase-{key}.sqlite", rows=label_rows)

    def search(self, text: str, *, kind: str = "entity", limit: int = 10,
               types: list[str] | None = None) -> list[SearchHit]:
        from sparqlab.kg.results import SearchHit
        from sparqlab.kg.search import add_types, rank

        hits: list[tuple[SearchHit, int]] = []
        if kind == "entity" and text.strip():
            rows = self.kg.query(
                f"SELECT DISTINCT ?e WHERE {{ ?e <{FREEBASE.label_predicate}> {json.dumps(text.strip())}@en }} LIMIT 20")
            hits = [(SearchHit(row["e"].value, text.strip(), kind="entity"), 1) for row in rows.rows]
        indexed = self.index.search(text, kind=kind, limit=max(limit, 20))
        hits += [(hit, 0) for hit in indexed]
        if kind == "entity":
            add_types(self.kg, [hit for hit, _ in hits], FREEBASE.label_languages[0])
        return rank(text, [(h, p) for h, p in hits if not types or set(types) & set(h.type_ids + h.types)], limit)


def _register_search() -> None:
    from sparqlab.kg.base import register_searcher

    register_searcher("freebase_labels", FreebaseSearch)


_register_search()
