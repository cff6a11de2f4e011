"""Write ``data/wikidata_real/wikidata_real.ttl``: Wikidata as its query service stores it, for the tests.

The file is the shipped munged entity ``RdfRepositoryUpdaterIntegrationTest.Q42-munged.ttl`` (real Wikidata RDF,
copied byte for byte from ``../shared/data/wikidata_entities/``) followed by a hand-written part in the same munged shape: the items, classes
and properties that the bundled Wikidata-shaped questions (``data/wikidata_test/questions.jsonl``) need, written as
Wikibase writes them — statements ``p:P… → s:…`` with ranks (``wikibase:BestRank`` on the statements whose value
is truthy), ``ps:`` values, ``pq:`` qualifiers and ``prov:wasDerivedFrom`` references with ``pr:`` snaks; a
``wdt:`` edge for every best-rank statement and for no other; labels, ``skos:altLabel`` aliases and
``schema:description`` in several languages; property entities with ``wikibase:propertyType``,
``wikibase:directClaim`` and the other predicate links, and their type constraints as P2302 statements with P2308 /
P2309 qualifiers. It also names (label and type) the properties and some values of the shipped Q42, which the
munged file leaves without labels (see data/wikidata_real/PROVENANCE.md).

Run after changing the spec below; ``tests/kg/test_wikidata_real_fixture.py`` fails when the shipped file and this
script disagree::

    .venv/bin/python scripts/make_wikidata_real_fixture.py
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = next((folder / "shared" / "data" / "wikidata_entities" / "RdfRepositoryUpdaterIntegrationTest.Q42-munged.ttl"
               for folder in ROOT.parents if (folder / "shared" / "data" / "wikidata_entities").is_dir()),
              ROOT / "missing")
"""The raw copy in ``shared/data`` beside the checkout (or beside the folder of its worktree)."""
OUTPUT = ROOT / "data" / "wikidata_real" / "wikidata_real.ttl"
Q42_BYTES = 137272
Q42_SHA256 = "562b9623907f48c46551fd2c991a571c020058326982c9cdff5ad1d6825cda1d"
"""Size and digest of the shipped munged Q42 (PROVENANCE.md of the source folder): the fixture's first bytes."""

PREFIXES = """\
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix wikibase: <http://wikiba.se/ontology#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix schema: <http://schema.org/> .
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix wd: <http://www.wikidata.org/entity/> .
@prefix s: <http://www.wikidata.org/entity/statement/> .
@prefix ref: <http://www.wikidata.org/reference/> .
@prefix wdt: <http://www.wikidata.org/prop/direct/> .
@prefix p: <http://www.wikidata.org/prop/> .
@prefix ps: <http://www.wikidata.org/prop/statement/> .
@prefix psv: <http://www.wikidata.org/prop/statement/value/> .
@prefix pq: <http://www.wikidata.org/prop/qualifier/> .
@prefix pqv: <http://www.wikidata.org/prop/qualifier/value/> .
@prefix pr: <http://www.wikidata.org/prop/reference/> .
@prefix prv: <http://www.wikidata.org/prop/reference/value/> .
@prefix wdno: <http://www.wikidata.org/prop/novalue/> .
"""

RANKS = {"preferred": "wikibase:PreferredRank", "normal": "wikibase:NormalRank",
         "deprecated": "wikibase:DeprecatedRank"}
STATEMENT_IDS = uuid.UUID("6d1f3a52-0c7e-4f0e-9a59-3f1b8c2d7e41")
"""Namespace of the hand-written statements' GUIDs (uuid5 of entity, property, value and position)."""

Value = str | int | float | tuple[str, str]
"""``"Q5"`` an item, ``"1906-01-01"`` a date (day precision, as Wikibase writes a time), an int/float a quantity,
``("text", "en")`` a monolingual text, ``"<iri>"`` a URL, any other string a plain string."""


@dataclass
class Statement:
    property: str
    value: Value
    rank: str = "normal"
    qualifiers: list[tuple[str, Value]] = field(default_factory=list)
    references: list[list[tuple[str, Value]]] = field(default_factory=list)


@dataclass
class Entity:
    id: str
    labels: dict[str, str]
    description: str = ""
    aliases: list[str] = field(default_factory=list)
    statements: list[Statement] = field(default_factory=list)
    other_labels: list[tuple[str, str]] = field(default_factory=list)
    """Labels in languages beside English, as ``(text, language)``."""


@dataclass
class Property:
    id: str
    label: str
    type: str
    description: str = ""
    aliases: list[str] = field(default_factory=list)
    subject_types: list[str] = field(default_factory=list)
    value_types: list[str] = field(default_factory=list)
    relation: str | None = None
    """The P2309 relation of the subject-type constraint (``Q21503252`` instance of, ``Q30208840`` either)."""
    deprecated_subject_types: list[str] = field(default_factory=list)
    """A constraint statement with deprecated rank (Wikibase's constraint checks ignore it)."""


WIKIPEDIA = [[("P143", "Q328")]]
"""The reference most imported statements carry: imported from Wikimedia project = English Wikipedia."""

# -- properties ---------------------------------------------------------------------------------------------------
# Labels, aliases and types follow Wikidata; the type constraints are the simplified ones of data/wikidata_test
# (so both fixtures declare the same domains and ranges).

PROPERTIES = [
    Property("P31", "instance of", "WikibaseItem", "that class of which this subject is a particular example and member",
             ["is a", "type"]),
    Property("P279", "subclass of", "WikibaseItem", "every instance of this class is an instance of that class",
             ["is a type of", "subtype of"]),
    Property("P17", "country", "WikibaseItem", "sovereign state that this item is in",
             ["sovereign state"], ["Q515", "Q486972", "Q2221906", "Q82794"], ["Q6256"]),
    Property("P27", "country of citizenship", "WikibaseItem",
             "the object is a country that recognizes the subject as its citizen", ["citizenship", "nationality"],
             ["Q5"], ["Q6256"]),
    Property("P19", "place of birth", "WikibaseItem", "most specific known birth location of a person",
             ["birthplace", "born in"], ["Q5"], ["Q2221906", "Q515"], relation="Q21503252"),
    Property("P50", "author", "WikibaseItem", "main creator of a written work", ["written by", "writer"],
             ["Q7725634"], ["Q5"]),
    Property("P57", "director", "WikibaseItem", "director of a film", ["directed by", "film director"],
             ["Q11424"], deprecated_subject_types=["Q5"]),
    Property("P840", "narrative location", "WikibaseItem", "the narrative of the work is set in this location",
             ["set in"], ["Q7725634", "Q11424"]),
    Property("P36", "capital", "WikibaseItem", "seat of government of a country or region", ["capital city"],
             ["Q6256", "Q82794"]),
    Property("P1082", "population", "Quantity", "number of people inhabiting the place", ["inhabitants"],
             ["Q486972", "Q6256"]),
    Property("P2579", "studied in", "WikibaseItem", "subject is studied in this science or domain", [],
             ["Q486972"], relation="Q30208840"),
    Property("P106", "occupation", "WikibaseItem", "occupation of a person", ["profession", "job"]),
    Property("P577", "publication date", "Time", "date a work was first published",
             ["date of publication", "published"]),
    Property("P26", "spouse", "WikibaseItem", "the subject has the object as their spouse (husband, wife, partner)",
             ["wife", "husband", "married to"], ["Q5"], ["Q5"]),
    Property("P1083", "maximum capacity", "Quantity", "number of people allowed for a venue or vehicle",
             ["capacity", "seating capacity", "seats"]),
    # qualifiers and references
    Property("P580", "start time", "Time", "time an item begins to exist or a statement starts being valid",
             ["from", "since"]),
    Property("P582", "end time", "Time", "time an item ceases to exist or a statement stops being valid",
             ["until", "to"]),
    Property("P585", "point in time", "Time", "time and date something took place, existed or a statement was true",
             ["date", "as of"]),
    Property("P1534", "end cause", "WikibaseItem", "qualifier to use together with the end date qualifier"),
    Property("P1545", "series ordinal", "String", "position of an item in its parent series", ["ordinal"]),
    Property("P2096", "media legend", "Monolingualtext", "qualifier to describe the media of the statement"),
    Property("P407", "language of work or name", "WikibaseItem", "language associated with this creative work or "
             "name"),
    Property("P512", "academic degree", "WikibaseItem", "academic degree that the person holds"),
    Property("P625", "coordinate location", "GlobeCoordinate", "geocoordinates of the subject"),
    Property("P812", "academic major", "WikibaseItem", "major someone studied at college or university"),
    Property("P973", "described at URL", "Url", "item is described at the following URL"),
    Property("P1039", "kinship to subject", "WikibaseItem", "qualifier of \"relative\" (P1038) to state the "
             "relationship"),
    Property("P1686", "for work", "WikibaseItem", "qualifier of award received to specify the work"),
    Property("P1810", "subject named as", "String", "name by which a subject is recorded in a database or "
             "mentioned as a contributor of a work"),
    Property("P2241", "reason for deprecated rank", "WikibaseItem", "qualifier to indicate why a particular "
             "statement should have deprecated rank"),
    Property("P2699", "URL", "Url", "location of a resource"),
    Property("P123", "publisher", "WikibaseItem", "organization or person responsible for publishing"),
    Property("P1433", "published in", "WikibaseItem", "larger work that a given work was published in"),
    Property("P1476", "title", "Monolingualtext", "published name of a work"),
    Property("P2093", "author name string", "String", "stores unspecified author or editor name"),
    Property("P4656", "Wikimedia import URL", "Url", "URL of the source of the data imported by a bot"),
    Property("P212", "ISBN-13", "ExternalId", "identifier for a book edition, 13 digits"),
    Property("P957", "ISBN-10", "ExternalId", "former identifier for a book edition, 10 digits"),
    Property("P143", "imported from Wikimedia project", "WikibaseItem",
             "source of this claim's value; used in references section by bots or humans importing data"),
    Property("P248", "stated in", "WikibaseItem", "to be used in the references field to refer to the information "
             "document or database in which a claim is made", ["source"]),
    Property("P813", "retrieved", "Time", "date or point in time that information was retrieved from a database "
             "or website"),
    Property("P854", "reference URL", "Url", "should be used for Internet URLs as references", ["URL"]),
    Property("P2302", "property constraint", "WikibaseItem", "constraint applicable to a Wikidata property"),
    Property("P2308", "class", "WikibaseItem", "qualifier to define a property constraint in combination with P2302"),
    Property("P2309", "relation", "WikibaseItem",
             "qualifier to define a property constraint in combination with P2302"),
    # the other properties of the shipped Q42 (its munged file holds no property entities)
    Property("P18", "image", "CommonsMedia", "image of relevant illustration of the subject"),
    Property("P20", "place of death", "WikibaseItem", "most specific known death location of a person",
             ["deathplace", "died in"], ["Q5"]),
    Property("P21", "sex or gender", "WikibaseItem", "sex or gender identity of human or animal", ["gender", "sex"]),
    Property("P22", "father", "WikibaseItem", "male parent of the subject", ["dad"]),
    Property("P25", "mother", "WikibaseItem", "female parent of the subject", ["mom", "mum"]),
    Property("P40", "child", "WikibaseItem", "subject has object as child", ["son", "daughter"]),
    Property("P69", "educated at", "WikibaseItem", "educational institution attended by subject",
             ["alma mater", "studied at"]),
    Property("P103", "native language", "WikibaseItem", "language or languages a person has learned from early "
             "childhood", ["mother tongue"]),
    Property("P108", "employer", "WikibaseItem", "person or organization for which the subject works or worked",
             ["worked for"]),
    Property("P109", "signature", "CommonsMedia", "image of a person's signature"),
    Property("P119", "place of burial", "WikibaseItem", "location of grave, resting place, place of ash-scattering, "
             "etc.", ["buried in"]),
    Property("P136", "genre", "WikibaseItem", "creative work's genre or an artist's field of work"),
    Property("P172", "ethnic group", "WikibaseItem", "subject's ethnicity"),
    Property("P373", "Commons category", "String", "name of the Wikimedia Commons category containing files "
             "related to this item"),
    Property("P463", "member of", "WikibaseItem", "organization, club or musical group to which the subject "
             "belongs"),
    Property("P485", "archives at", "WikibaseItem", "the institution holding the subject's archives"),
    Property("P509", "cause of death", "WikibaseItem", "underlying or immediate cause of death", ["died of"]),
    Property("P551", "residence", "WikibaseItem", "the place where the person is or has been, resident",
             ["lived in"]),
    Property("P569", "date of birth", "Time", "date on which the subject was born", ["born on", "birthday"]),
    Property("P570", "date of death", "Time", "date on which the subject died", ["died on"]),
    Property("P734", "family name", "WikibaseItem", "part of full name of person", ["surname", "last name"]),
    Property("P735", "given name", "WikibaseItem", "first name or another given name of this person",
             ["first name", "forename"]),
    Property("P800", "notable work", "WikibaseItem", "notable scientific, artistic or literary work",
             ["famous work"]),
    Property("P856", "official website", "Url", "URL of the official page of an item", ["website"]),
    Property("P910", "topic's main category", "WikibaseItem", "main Wikimedia category"),
    Property("P1196", "manner of death", "WikibaseItem", "general circumstances of a person's death"),
    Property("P1303", "instrument", "WikibaseItem", "musical instrument that a person plays or teaches"),
    Property("P1343", "described by source", "WikibaseItem", "work where this item is described"),
    Property("P1411", "nominated for", "WikibaseItem", "award nomination received by a person or work"),
    Property("P1412", "languages spoken, written or signed", "WikibaseItem",
             "language(s) that a person or a people speaks, writes or signs", ["languages spoken"]),
    Property("P1424", "topic's main template", "WikibaseItem", "the main template relating to a topic"),
    Property("P1442", "image of grave", "CommonsMedia", "picture of a person or animal's grave"),
    Property("P1477", "birth name", "Monolingualtext", "full name of a person at birth"),
    Property("P1559", "name in native language", "Monolingualtext", "name of a person in their native language"),
    Property("P2048", "height", "Quantity", "vertical length of an entity", ["tallness"]),
    Property("P2650", "interested in", "WikibaseItem", "item of special or vested interest to this person"),
    Property("P3373", "sibling", "WikibaseItem", "the subject and the object have the same parents",
             ["brother", "sister"]),
    Property("P6886", "writing language", "WikibaseItem", "language in which the writer has written their work"),
    # external identifiers of Q42 whose labels the fixture gives (the others are left unnamed)
    *(Property(pid, label, "ExternalId") for pid, label in [
        ("P213", "ISNI"), ("P214", "VIAF ID"), ("P227", "GND ID"), ("P244", "Library of Congress authority ID"),
        ("P268", "Bibliothèque nationale de France ID"), ("P269", "IdRef ID"), ("P345", "IMDb ID"),
        ("P349", "National Diet Library ID"), ("P434", "MusicBrainz artist ID"), ("P535", "Find a Grave memorial ID"),
        ("P646", "Freebase ID"), ("P648", "Open Library ID"), ("P906", "SELIBR ID"),
        ("P1233", "Internet Speculative Fiction Database author ID"), ("P1417", "Encyclopædia Britannica Online ID"),
        ("P4839", "Wolfram Language entity code")]),
]

# -- items --------------------------------------------------------------------------------------------------------
# The entities of data/wikidata_test (same ids, labels and truthy facts) in the munged shape, with a few more
# statements that are not truthy: a superseded population (normal rank beside a preferred one), a deprecated birth
# place, the spouses of Jack London with start/end qualifiers.


def item(qid: str, label: str, description: str = "", *statements: Statement, aliases: list[str] | None = None,
         other: list[tuple[str, str]] | None = None) -> Entity:
    return Entity(qid, {"en": label}, description, aliases or [], list(statements), other or [])


def st(prop: str, value: Value, rank: str = "normal", qualifiers=(), references=()) -> Statement:
    return Statement(prop, value, rank, list(qualifiers), list(references))


ITEMS = [
    # constraint and relation items
    item("Q21503250", "subject type constraint", "type of property constraint"),
    item("Q21510865", "value-type constraint", "type of property constraint"),
    item("Q21503252", "instance of", "relation item of a type constraint"),
    item("Q21514624", "subclass of", "relation item of a type constraint"),
    item("Q30208840", "instance or subclass of", "relation item of a type constraint"),
    item("Q328", "English Wikipedia", "English-language edition of Wikipedia", aliases=["enwiki"],
         other=[("Englischsprachige Wikipedia", "de")]),
    # classes
    item("Q5", "human", "common name of Homo sapiens", aliases=["person", "people"], other=[("Mensch", "de")]),
    item("Q2221906", "geographic location", "point or area on a planet", other=[("geographischer Ort", "de")]),
    item("Q486972", "human settlement", "community of people", st("P279", "Q2221906"), aliases=["settlement"],
         other=[("Siedlung", "de")]),
    item("Q515", "city", "large human settlement", st("P279", "Q486972"), st("P31", "Q24017414"),
         st("P2579", "Q900004"), aliases=["town"], other=[("Stadt", "de")]),
    item("Q6256", "country", "distinct territorial body", st("P279", "Q2221906"), aliases=["land"],
         other=[("Staat", "de")]),
    item("Q3624078", "sovereign state", "state with supreme authority", st("P279", "Q6256")),
    item("Q82794", "region", "geographic area", st("P279", "Q2221906")),
    item("Q7725634", "literary work", "creative work of literature", other=[("literarisches Werk", "de")]),
    item("Q11424", "film", "sequence of images that give the impression of movement", aliases=["movie"],
         other=[("Film", "de")]),
    item("Q28640", "profession", "occupation requiring training"),
    item("Q24017414", "second-order class", "class whose instances are classes"),
    item("Q11862829", "academic discipline", "field of study"),
    # places
    item("Q30", "United States of America", "country in North America",
         st("P31", "Q6256"), st("P31", "Q3624078"), st("P36", "Q61", references=WIKIPEDIA),
         st("P1082", 331449281, "preferred", [("P585", "2020-04-01")], [[("P248", "Q328")]]),
         aliases=["USA", "United States", "US", "America"], other=[("Vereinigte Staaten", "de")]),
    item("Q145", "United Kingdom", "country in north-west Europe", st("P31", "Q6256"), st("P31", "Q3624078"),
         st("P36", "Q84", references=WIKIPEDIA), aliases=["UK"], other=[("Vereinigtes Königreich", "de")]),
    item("Q16", "Canada", "country in North America", st("P31", "Q6256"), st("P31", "Q3624078"),
         st("P36", "Q1930", references=WIKIPEDIA), other=[("Kanada", "de")]),
    item("Q61", "Washington, D.C.", "capital city of the United States", st("P31", "Q515"), st("P17", "Q30"),
         st("P1082", 689545, qualifiers=[("P585", "2020-04-01")]), aliases=["Washington", "DC"]),
    item("Q84", "London", "capital city of the United Kingdom", st("P31", "Q515"), st("P17", "Q145"),
         st("P1082", 8799800, qualifiers=[("P585", "2021-03-21")], references=WIKIPEDIA),
         other=[("London", "de"), ("倫敦", "zh-classical")]),
    item("Q1930", "Ottawa", "capital city of Canada", st("P31", "Q515"), st("P17", "Q16"),
         st("P1082", 934243, qualifiers=[("P585", "2016-05-10")]),
         st("P1082", 1017449, "preferred", [("P585", "2021-05-11")], [[("P248", "Q328")]])),
    item("Q62", "San Francisco", "city in California, United States", st("P31", "Q515"), st("P17", "Q30"),
         st("P1082", 873965, qualifiers=[("P585", "2020-04-01")]), aliases=["SF", "San Francisco, California"]),
    item("Q28218", "Jackson", "capital city of Mississippi, United States", st("P31", "Q515"), st("P17", "Q30"),
         st("P1082", 153701, qualifiers=[("P585", "2020-04-01")]), aliases=["Jackson, Mississippi"]),
    item("Q2009", "Yukon", "territory of Canada", st("P31", "Q82794"), st("P17", "Q16"),
         aliases=["Yukon Territory"]),
    item("Q900004", "urban studies", "study of cities (invented test entity)", st("P31", "Q11862829")),
    # occupations
    item("Q36180", "writer", "person who uses written words", st("P31", "Q28640"), aliases=["author"],
         other=[("Schriftsteller", "de")]),
    item("Q12299841", "cricketer", "person who plays cricket", st("P31", "Q28640")),
    item("Q2526255", "film director", "person who directs films", st("P31", "Q28640")),
    # people
    item("Q45765", "Jack London", "American novelist (1876-1916)", st("P31", "Q5", references=WIKIPEDIA),
         st("P19", "Q62", references=WIKIPEDIA), st("P19", "Q84", "deprecated"), st("P27", "Q30"),
         st("P106", "Q36180", references=WIKIPEDIA),
         st("P26", "Q900005", qualifiers=[("P580", "1900-04-07"), ("P582", "1904-01-01")]),
         st("P26", "Q900006", qualifiers=[("P580", "1905-11-19"), ("P582", "1916-11-22"), ("P1534", "Q4")]),
         aliases=["John Griffith Chaney"], other=[("Jack London", "de")]),
    item("Q900005", "Bess Maddern", "first wife of Jack London (invented test entity)", st("P31", "Q5")),
    item("Q900006", "Charmian London", "second wife of Jack London (invented test entity)", st("P31", "Q5")),
    item("Q900001", "Jackson", "English cricketer (invented test entity)", st("P31", "Q5"), st("P19", "Q84"),
         st("P106", "Q12299841"), st("P17", "Q145")),
    item("Q900002", "Randal Kleiser", "American film director", st("P31", "Q5"), st("P27", "Q30"),
         st("P106", "Q2526255")),
    # works
    item("Q1045540", "White Fang", "1906 novel by Jack London", st("P31", "Q7725634"),
         st("P50", "Q45765", references=WIKIPEDIA), st("P840", "Q2009"),
         st("P577", "1906-01-01", references=WIKIPEDIA), st("P19", "Q62"), other=[("Wolfsblut", "de")]),
    item("Q208947", "The Call of the Wild", "1903 novel by Jack London", st("P31", "Q7725634"),
         st("P50", "Q45765", references=WIKIPEDIA), st("P840", "Q2009"), st("P577", "1903-01-01"),
         other=[("Ruf der Wildnis", "de")]),
    item("Q900003", "White Fang", "1991 film directed by Randal Kleiser", st("P31", "Q11424"),
         st("P57", "Q900002"), st("P840", "Q2009")),
    # values of the shipped Q42 (its munged file names none of them)
    item("Q4", "death", "permanent cessation of vital functions"),
    item("Q350", "Cambridge", "city in Cambridgeshire, England", st("P31", "Q515"), st("P17", "Q145")),
    item("Q159288", "Santa Barbara", "city in California, United States", st("P31", "Q515"), st("P17", "Q30")),
    item("Q6581097", "male", "to be used in \"sex or gender\" (P21) to indicate that the human subject is a male"),
    item("Q14623681", "Jane Belson", "wife of Douglas Adams", st("P31", "Q5")),
    item("Q7979", "British English", "dialect of the English language in the United Kingdom"),
    item("Q1860", "English", "West Germanic language", aliases=["English language"]),
    item("Q12152", "myocardial infarction", "interruption of blood supply to a part of the heart",
         aliases=["heart attack"]),
    item("Q533697", "Highgate Cemetery", "cemetery in north London"),
    item("Q25169", "The Hitchhiker's Guide to the Galaxy", "comedy science fiction franchise by Douglas Adams"),
]

SITELINKS = {"Q1045540": ("White_Fang", "White Fang"), "Q45765": ("Jack_London", "Jack London")}
"""English Wikipedia articles of some items (sitelinks, as the munged form keeps them)."""


# -- writing ------------------------------------------------------------------------------------------------------

def literal(text: str, language: str | None = None) -> str:
    return json.dumps(text, ensure_ascii=False) + (f"@{language}" if language else "")


def term(value: Value) -> str:
    """A value as Wikibase's RDF writes it (quantities signed, times at day precision in UTC)."""
    if isinstance(value, tuple):
        return literal(*value)
    if isinstance(value, bool):
        raise TypeError("no boolean values in Wikibase")
    if isinstance(value, int | float):
        return f'"{value:+}"^^xsd:decimal'
    if value.startswith("<"):
        return value
    if value[:1] in "QP" and value[1:].isdigit():
        return f"wd:{value}"
    if len(value) == 10 and value[4] == "-" and value[7] == "-":
        return f'"{value}T00:00:00Z"^^xsd:dateTime'
    return literal(value)


def statement_id(entity: str, statement: Statement, position: int) -> str:
    key = f"{entity}|{statement.property}|{statement.value}|{position}"
    return f"s:{entity}-{str(uuid.uuid5(STATEMENT_IDS, key)).upper()}"


def reference_id(snaks: list[tuple[str, Value]]) -> str:
    """Wikibase names a reference by a hash of its snaks: equal references share one node."""
    return "ref:" + hashlib.sha1(repr(sorted((p, str(v)) for p, v in snaks)).encode()).hexdigest()


def best_rank(statements: list[Statement]) -> set[int]:
    """Positions of the statements whose value is truthy: per property the preferred ones if any, else the
    normal ones; deprecated ones never."""
    best: set[int] = set()
    for prop in dict.fromkeys(s.property for s in statements):
        mine = [(i, s) for i, s in enumerate(statements) if s.property == prop]
        preferred = [i for i, s in mine if s.rank == "preferred"]
        best |= set(preferred or [i for i, s in mine if s.rank == "normal"])
    return best


def write_statements(entity: str, statements: list[Statement], refs: dict[str, list[tuple[str, Value]]]) -> list[str]:
    blocks = []
    best = best_rank(statements)
    for position, statement in enumerate(statements):
        sid = statement_id(entity, statement, position)
        lines = [f"wd:{entity} p:{statement.property} {sid} .", ""]
        body = (["a wikibase:BestRank"] if position in best else []) + [f"wikibase:rank {RANKS[statement.rank]}",
                                                                        f"ps:{statement.property} {term(statement.value)}"]
        body += [f"pq:{q} {term(v)}" for q, v in statement.qualifiers]
        if statement.references:
            ids = [reference_id(snaks) for snaks in statement.references]
            refs.update(zip(ids, statement.references, strict=True))
            body.append("prov:wasDerivedFrom " + " , ".join(ids))
        lines.append(f"{sid} " + " ;\n\t".join(body) + " .")
        blocks.append("\n".join(lines))
    return blocks


def write_entity(entity: Entity, refs: dict[str, list[tuple[str, Value]]], revision: int) -> str:
    head = [f"rdfs:label {literal(entity.labels['en'], 'en')}" + "".join(
        f" , {literal(text, lang)}" for text, lang in entity.other_labels)]
    if entity.aliases:
        head.append("skos:altLabel " + " , ".join(literal(a, "en") for a in entity.aliases))
    if entity.description:
        head.append(f"schema:description {literal(entity.description, 'en')}")
    best = best_rank(entity.statements)
    for prop in dict.fromkeys(s.property for s in entity.statements):
        values = [term(s.value) for i, s in enumerate(entity.statements) if s.property == prop and i in best]
        head.append(f"wdt:{prop} " + " , ".join(values))
    head += [f"schema:version \"{revision}\"^^xsd:integer", "schema:dateModified \"2026-12-01T00:00:00Z\"^^xsd:dateTime",
             f"wikibase:statements \"{len(entity.statements)}\"^^xsd:integer",
             f"wikibase:sitelinks \"{1 if entity.id in SITELINKS else 0}\"^^xsd:integer",
             "wikibase:identifiers \"0\"^^xsd:integer"]
    blocks = [f"wd:{entity.id} " + " ;\n\t".join(head) + " ."]
    if entity.id in SITELINKS:
        page, title = SITELINKS[entity.id]
        blocks.append(f"<https://en.wikipedia.org/wiki/{page}> a schema:Article ;\n\tschema:about wd:{entity.id} ;\n"
                      f"\tschema:inLanguage \"en\" ;\n\tschema:isPartOf <https://en.wikipedia.org/> ;\n"
                      f"\tschema:name {literal(title, 'en')} .")
    return "\n\n".join(blocks + write_statements(entity.id, entity.statements, refs))


def constraint_statements(prop: Property) -> list[Statement]:
    """P2302 statements of a property's type constraints (P2308 classes, P2309 relation)."""
    out = []
    if prop.subject_types:
        qualifiers = [("P2308", c) for c in prop.subject_types] + ([("P2309", prop.relation)] if prop.relation else [])
        out.append(st("P2302", "Q21503250", qualifiers=qualifiers))
    if prop.value_types:
        out.append(st("P2302", "Q21510865", qualifiers=[("P2308", c) for c in prop.value_types]))
    if prop.deprecated_subject_types:
        out.append(st("P2302", "Q21503250", "deprecated", [("P2308", c) for c in prop.deprecated_subject_types]))
    return out


def write_property(prop: Property, refs: dict[str, list[tuple[str, Value]]]) -> str:
    pid = prop.id
    head = ["a wikibase:Property"] + ([f"rdfs:label {literal(prop.label, 'en')}"] if prop.label else [])
    if prop.aliases:
        head.append("skos:altLabel " + " , ".join(literal(a, "en") for a in prop.aliases))
    if prop.description:
        head.append(f"schema:description {literal(prop.description, 'en')}")
    head += [f"wikibase:propertyType wikibase:{prop.type}", f"wikibase:directClaim wdt:{pid}",
             f"wikibase:claim p:{pid}", f"wikibase:statementProperty ps:{pid}", f"wikibase:statementValue psv:{pid}",
             f"wikibase:qualifier pq:{pid}", f"wikibase:qualifierValue pqv:{pid}", f"wikibase:reference pr:{pid}",
             f"wikibase:referenceValue prv:{pid}", f"wikibase:novalue wdno:{pid}"]
    statements = constraint_statements(prop)
    best = best_rank(statements)
    truthy = [term(s.value) for i, s in enumerate(statements) if i in best]
    if truthy:
        head.append("wdt:P2302 " + " , ".join(dict.fromkeys(truthy)))
    return "\n\n".join([f"wd:{pid} " + " ;\n\t".join(head) + " ."] + write_statements(pid, statements, refs))


def unnamed_identifiers(q42: bytes) -> list[Property]:
    """Property entities (datatype only) for the external identifiers of the shipped Q42 that :data:`PROPERTIES`
    does not name: its truthy properties with plain-string values. Every property on Wikidata has a datatype, so
    a lookup can list identifiers last; their labels are not known here."""
    import pyoxigraph

    named = {prop.id for prop in PROPERTIES}
    store = pyoxigraph.Store()
    store.load(q42, pyoxigraph.RdfFormat.TURTLE)
    rows = store.query('SELECT DISTINCT ?p WHERE { <http://www.wikidata.org/entity/Q42> ?p ?v FILTER(isLiteral(?v) '
                       '&& DATATYPE(?v) = xsd:string && STRSTARTS(STR(?p), "http://www.wikidata.org/prop/direct/")) }',
                       prefixes={"xsd": "http://www.w3.org/2001/XMLSchema#"})
    found = sorted({row["p"].value.rsplit("/", 1)[1] for row in rows} - named, key=lambda pid: int(pid[1:]))
    return [Property(pid, "", "ExternalId") for pid in found]


def hand_written_part(q42: bytes) -> str:
    refs: dict[str, list[tuple[str, Value]]] = {}
    blocks = [write_property(prop, refs) for prop in PROPERTIES + unnamed_identifiers(q42)]
    blocks += [write_entity(entity, refs, 2_000_000_000 + n) for n, entity in enumerate(ITEMS)]
    blocks += [f"{rid} " + " ;\n\t".join(f"pr:{p} {term(v)}" for p, v in snaks) + " ."
               for rid, snaks in sorted(refs.items())]
    header = ("\n# ---- hand-written part (scripts/make_wikidata_real_fixture.py; see PROVENANCE.md): the entities the\n"
              "# ---- bundled Wikidata-shaped questions need, in the munged shape of the shipped file above.\n")
    return header + PREFIXES + "\n" + "\n\n".join(blocks) + "\n"


def shipped_q42() -> bytes:
    """The munged Q42 as shipped: from the source folder, else the fixture's own first bytes; checked against
    its recorded digest either way."""
    data = SOURCE.read_bytes() if SOURCE.exists() else OUTPUT.read_bytes()[:Q42_BYTES]
    if hashlib.sha256(data).hexdigest() != Q42_SHA256:
        raise ValueError(f"the munged Q42 read from {SOURCE if SOURCE.exists() else OUTPUT} is not the shipped file")
    return data


def fixture_text() -> bytes:
    """The whole fixture: the shipped munged Q42, byte for byte, then the hand-written part."""
    q42 = shipped_q42()
    return q42 + hand_written_part(q42).encode("utf-8")


def main() -> None:
    text = fixture_text()
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_bytes(text)
    print(f"wrote {OUTPUT} ({OUTPUT.stat().st_size:,} bytes; {len(PROPERTIES)} properties, {len(ITEMS)} items)")


if __name__ == "__main__":
    main()
