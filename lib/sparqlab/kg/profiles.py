"""Everything that differs between knowledge graphs, one :class:`KGProfile` per KG.

Code outside this module never spells a KG-specific IRI, prefix or endpoint: it asks the profile (type and label
predicates, how IDs look, how domain/range constraints are declared, which search backend to use, whether answers
are compared by IRI or by label).

Adding a KG means adding one profile (docs/adding-a-kg.md). A KG's own module registers its profile from there
(:func:`register_profile`), as :mod:`sparqlab.graphs.freebase` does, listed in :mod:`sparqlab.core.plugins` or
declared as a ``sparqlab.kgs`` entry point, so this module imports none of them (the named KGs:
:mod:`sparqlab.graphs`). An RDF file or an endpoint without a registered profile gets one derived from
its data (:data:`PROFILE_DERIVERS`: :mod:`sparqlab.graphs.derive`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal
from urllib.parse import quote, unquote

from sparqlab.core.hashing import stable_hash
from sparqlab.core.plugins import KG_GROUP
from sparqlab.core.registry import Registry
from sparqlab.kg.vocab import OWL, RDF, RDFS, SCHEMA, STANDARD_PREFIXES, WD, XSD

if TYPE_CHECKING:
    from sparqlab.kg.base import KnowledgeGraph

__all__ = ["DECLARED_SCHEMAS", "OWL", "PROFILES", "PROFILE_DERIVERS", "RDF", "RDFS", "SCHEMA",
           "STANDARD_PREFIXES", "STORE_BUILDERS", "XSD", "CatalogueEntry", "ConstraintScheme",
           "DeclaredSchema", "ElementCatalogue", "IdForm", "KGProfile", "PromptConventions", "StatementScheme",
           "derive_from_data", "generic_profile",
           "get_profile", "known_prefixes", "register_declared_schema", "register_profile", "register_store_builder"]

STORE_BUILDERS: Registry[Callable[..., Path]] = Registry("store builder", group=KG_GROUP)
"""Profile name → ``builder(force=False)`` returning the directory of a pyoxigraph store with a ``build.json``
beside it, for KGs bundled with the workbench or a plug-in. Builders register themselves
(:func:`register_store_builder`) from their own module (:mod:`sparqlab.graphs.movies`), so this module imports
none of them."""


def register_store_builder(profile_name: str, builder: Callable[..., Path]) -> None:
    """Make ``builder`` the store builder of the profile called ``profile_name``."""
    STORE_BUILDERS.register(profile_name, builder)


PROFILE_DERIVERS: Registry[Callable[..., KGProfile]] = Registry("profile deriver", group=KG_GROUP)
"""``"data"`` → ``derive(kg, name, prefixes, data)``: the profile of a KG no registered profile describes (an RDF
file, a store folder, an endpoint URL), read from its own data (``prefixes``: those its file declares) and refined
by the YAML file beside ``data``. The KGs' package registers it (:mod:`sparqlab.graphs.derive`), as it registers
store builders and searchers, so that opening a KG here imports nothing above this layer."""


def derive_from_data(kg: KnowledgeGraph, name: str, prefixes: dict[str, str], data: Path | None) -> KGProfile:
    """The profile derived from the data of ``kg`` (:data:`PROFILE_DERIVERS`)."""
    return PROFILE_DERIVERS.get("data")(kg, name, prefixes, data)


@dataclass(frozen=True)
class DeclaredSchema:
    """A KG's curated schema kept outside the KG (Freebase's ``fb_roles``): per predicate IRI its label,
    description and formal domain / range classes, and per class its superclasses. SAGA's schema index takes
    formal declarations from here instead of querying the KG for them (SAGA section 3, "for Freebase, they come
    from the curated fb_roles schema")."""

    properties: dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...]]]
    superclasses: dict[str, tuple[str, ...]]
    digest: str
    """Content hash of the source files: part of the schema index's cache key."""


DECLARED_SCHEMAS: Registry[Callable[[], DeclaredSchema]] = Registry("declared schema", group=KG_GROUP)
"""Profile name → loader of its :class:`DeclaredSchema` (registered by the KG's own module)."""


def register_declared_schema(profile_name: str, loader: Callable[[], DeclaredSchema]) -> None:
    """Make ``loader`` the source of formal domain/range declarations of the profile called ``profile_name``."""
    DECLARED_SCHEMAS.register(profile_name, loader)


@dataclass(frozen=True)
class CatalogueEntry:
    """One element of a KG known without reading the KG: its IRI, label, description and kind."""

    iri: str
    label: str
    description: str
    kind: Literal["entity", "property", "class"]


@dataclass(frozen=True)
class ElementCatalogue:
    """A KG's elements listed without reading the KG (:attr:`KGProfile.catalogue`; DeSQ's KB memory of a KG far
    too large to read), under a declared ``name``: a profile's digest, and so every run id over it, hashes the
    name, not where ``load`` lives, so the loader's code can move without making existing runs new ones."""

    name: str
    load: Callable[[], list[CatalogueEntry]]


@dataclass(frozen=True)
class ConstraintScheme:
    """How a KG declares which subjects and objects a property expects.

    ``kind="rdfs"``: a triple ``property domain_predicate Class`` (and ``range_predicate``) — RDFS, and Freebase
    with its own predicates. ``kind="wikidata"``: property-constraint statements (P2302) whose value is the
    subject-type or value-type constraint item, with the allowed classes in a qualifier (P2308) and the relation
    the subject (or value) must have to them in another (P2309: ``instance_relation_item`` "instance of",
    ``subclass_relation_item`` "subclass of", ``either_relation_item`` "instance or subclass of"; a statement
    without it means "instance of"). A constraint statement whose rank (``rank_predicate``) is
    ``deprecated_rank`` is switched off and not read (Wikibase's constraint checks ignore it too).
    """

    kind: Literal["rdfs", "wikidata"]
    domain_predicate: str | None = None
    range_predicate: str | None = None
    statement_predicate: str | None = None
    statement_value: str | None = None
    subject_type_item: str | None = None
    value_type_item: str | None = None
    class_qualifier: str | None = None
    relation_qualifier: str | None = None
    instance_relation_item: str | None = None
    subclass_relation_item: str | None = None
    either_relation_item: str | None = None
    rank_predicate: str | None = None
    deprecated_rank: str | None = None

    def active_statement(self, var: str) -> str:
        """A graph-pattern filter dropping deprecated constraint statements ``var`` (empty when the KG ranks
        none)."""
        if not self.rank_predicate or not self.deprecated_rank:
            return ""
        return f"FILTER NOT EXISTS {{ {var} <{self.rank_predicate}> <{self.deprecated_rank}> }} "

    @property
    def subclass_semantics(self) -> bool:
        """Whether a declared class applies to the instances of its subclasses: RDFS's own ``rdfs:domain`` /
        ``rdfs:range`` (entailment rules rdfs2/rdfs3 with rdfs9: a Professor ⊑ Person is in the domain of a
        property declared on Person). Wikidata's P2302 constraints say per statement how the subject relates to
        the class (P2309), and Freebase's type.property.schema names a property's own type: neither is closed."""
        return self.kind == "rdfs" and (self.domain_predicate, self.range_predicate) == (RDFS + "domain",
                                                                                        RDFS + "range")

    def domain_range_query(self, property_iri: str) -> str:
        """A SELECT with ``?kind`` (``"domain"``/``"range"``) and ``?class`` for one property."""
        if self.kind == "rdfs":
            return (
                "SELECT ?kind ?class WHERE { "
                f'{{ <{property_iri}> <{self.domain_predicate}> ?class BIND("domain" AS ?kind) }} UNION '
                f'{{ <{property_iri}> <{self.range_predicate}> ?class BIND("range" AS ?kind) }} }}'
            )
        return (
            "SELECT ?kind ?class WHERE { "
            f"<{property_iri}> <{self.statement_predicate}> ?st . "
            f"?st <{self.statement_value}> ?constraint ; <{self.class_qualifier}> ?class . "
            f"{self.active_statement('?st')}"
            f'VALUES (?constraint ?kind) {{ (<{self.subject_type_item}> "domain") '
            f'(<{self.value_type_item}> "range") }} }}'
        )


@dataclass(frozen=True)
class StatementScheme:
    """How a KG keeps statements beside its truthy edges (Wikidata's RDF model, which its query service stores).

    Every truthy edge ``e truthy:Pn v`` (``wdt:``) has a twin statement ``e claim:Pn s`` (``p:``) whose node carries
    the value (``value:Pn``, ``ps:``), its rank, qualifiers (``qualifier:Pm``, ``pq:``) and references;
    statements whose value is truthy are typed ``best_rank`` (``wikibase:BestRank``). A lookup shows the truthy
    edges and the qualifiers of their best-rank statements, never the statement namespaces as properties of their
    own. ``entity_prefix`` + ``Pn`` is the property's own entity; its ``property_type`` gives the datatype, and
    ``identifier_type`` is the datatype of external identifiers, which a lookup lists after the other properties.
    """

    truthy_prefix: str
    claim_prefix: str
    value_prefix: str
    qualifier_prefix: str
    entity_prefix: str
    best_rank: str
    property_type: str
    identifier_type: str

    def local_id(self, iri: str) -> str | None:
        """``Pn`` of a truthy, claim, value or qualifier predicate (``wdt:P19``, ``pq:P580`` ...); ``None`` for any
        other IRI (``psv:``, ``pqv:`` and the normalised forms have a further path segment and are not matched)."""
        for prefix in (self.truthy_prefix, self.qualifier_prefix, self.value_prefix, self.claim_prefix):
            local = iri[len(prefix):]
            if iri.startswith(prefix) and local and "/" not in local:
                return local
        return None

    def in_namespace(self, var: str, prefix: str) -> str:
        """A SPARQL condition: ``var`` is ``prefix`` followed by a local name without a further ``/`` (``p:`` is
        the start of every other ``prop/`` namespace, so a plain STRSTARTS would match ``wdt:`` too)."""
        return f'(STRSTARTS(STR({var}), "{prefix}") && !CONTAINS(STRAFTER(STR({var}), "{prefix}"), "/"))'


IdKind = Literal["entity", "property", "class"]


@dataclass(frozen=True)
class IdForm:
    """Ids of one kind on a KG: the IRIs ``namespace`` + a text matching ``pattern``.

    As a short form people type (:attr:`KGProfile.id_forms`, beside ``<iri>`` and ``prefix:local``) the part
    matched by a group named ``name`` (if any) is percent-encoded (the movie KG's names with spaces; an already
    encoded name stays as it is): Wikidata's ``Q42`` -> ``wd:Q42``, Freebase's mids ``m.0abc`` -> ``ns:m.0abc``,
    the movie KG's ``Person/Ridley Scott``. As an id shape (:attr:`KGProfile.id_shapes`: which IRIs in a query are
    the KG's own entities, properties and classes, e.g. DeSQ's grounded slots) ``prefix`` is the prefix queries
    write it under (``wdt``), ``None`` when the id is written as the text after ``namespace`` (the movie KG's
    ``entity/Person/Ridley%20Scott``). ``example`` shows the form in prompts, help and error messages."""

    kind: IdKind
    pattern: str
    namespace: str
    example: str
    prefix: str | None = None

    def split(self, iri: str) -> str | None:
        """The text after :attr:`namespace` when ``iri`` has this shape, else ``None``."""
        if not iri.startswith(self.namespace):
            return None
        local = iri[len(self.namespace):]
        return local if re.fullmatch(self.pattern, local) else None

    def resolve(self, text: str) -> str | None:
        """The IRI ``text`` stands for in this form, or ``None`` when it is not written this way."""
        match = re.fullmatch(self.pattern, text)
        if match is None:
            return None
        if "name" in match.groupdict():
            start, end = match.span("name")
            text = text[:start] + quote(unquote(text[start:end]), safe="") + text[end:]
        return self.namespace + text


@dataclass(frozen=True)
class PromptConventions:
    """How prompts talk about a KG, beside its notes (:attr:`KGProfile.prompt_notes`).

    - ``topic``: what its questions are about, for a task line ("questions about films"); ``""``: unnamed.
    - ``relation_word``: what it calls its predicates in a prompt (``relations``, Wikidata's ``properties``).
    - ``query_rules``: how a query over it names topic entities, relations and answers (GGC's paragraph of
      conventions in the generator and corrector prompts).
    - ``answer_types``: ``(label, id)`` of common answer classes, for KGs whose class list is too long for a
      prompt (SAGA's answer-type prompt); empty: the prompt lists the KG's own classes.
    - ``prune_example``: a worked example of SPINACH's neighbourhood-pruning prompt in the KG's id style
      (``None``: the prompt's Wikidata example).
    - ``prompt_prefixes``: the prefix names GGC's paper-style KG paragraph lists (appendix B: ``wd`` and
      ``rdfs`` on Wikidata); empty: the profile's own predefined prefixes and ``rdfs``.
    """

    topic: str = ""
    relation_word: str = "relations"
    query_rules: str = ""
    answer_types: tuple[tuple[str, str], ...] = ()
    prune_example: str | None = None
    prompt_prefixes: tuple[str, ...] = ()


@dataclass(frozen=True)
class KGProfile:
    """What a KG looks like to the rest of the workbench.

    ``prefixes`` are predefined: a query may use them without declaring them, on every backend (the embedded
    store passes them to the parser, endpoints get the missing declarations prepended). ``answer_key`` says how
    answers are compared: ``"iri"`` (entity IRIs / literal values) or ``"label"`` (the ``label_predicate``
    values, for KGs whose gold answers are names). :attr:`store_builder` (``builder(force=False)`` returning the
    directory of a pyoxigraph store, built if missing or if ``force``, with a ``build.json`` of counts beside it)
    is registered in :data:`STORE_BUILDERS` for KGs bundled with the workbench; ``endpoint`` is the default SPARQL
    service
    otherwise. ``search`` picks the entity search backend: ``"local"`` (SQLite FTS5 label index built from the
    KG), ``"wikidata_api"`` (``search_api_url``, a MediaWiki ``wbsearchentities`` API) or the name of a backend a
    KG module registered (:func:`sparqlab.kg.base.register_searcher`; Freebase's ``"freebase_labels"``).
    ``expand_unnamed`` shows the outgoing edges of unnamed IRI values one level deep in lookups (Freebase's CVT
    mediator nodes, which carry no name). ``statements`` (:class:`StatementScheme`) describes reified statements
    beside truthy edges (Wikidata); ``alias_predicates`` hold an entity's other names (``skos:altLabel``), which
    the local search index matches like labels. ``max_in_flight`` is the concurrency limit of the KG's service
    per client (Wikidata's query service answers HTTP 429 beyond 5 queries in flight): an endpoint client of
    this profile never has more queries running at once (``open_kg(max_in_flight=...)`` overrides it for a
    mirror); ``None``: no limit.
    ``prompt_notes`` tell a model how queries over this KG are written (identifiers, labels, answer shape);
    ``schema_in_prompt`` adds the declared classes and relations (:func:`sparqlab.kg.describe.describe_schema`),
    for KGs whose schema is small enough to list in full. ``subclass_predicate`` links a class to its superclasses
    (schema subclass closure); ``property_entity_prefix`` / ``direct_property_prefix`` map a property's own item
    (where its label and constraints live, ``wd:P19``) to the predicate triples use (``wdt:P19``), for KGs where
    the two differ. ``id_forms`` are the KG's short ids (:class:`IdForm`), accepted by :meth:`resolve_id`
    wherever an entity or property is asked for; ``id_shapes`` say which IRIs of a query are the KG's own ids and
    of which kind (:class:`IdForm`), and ``vocabulary`` the IRIs that have such a shape but are schema
    vocabulary written literally (Freebase's ``type.object.type``). ``conventions`` are the prompt pieces of
    :class:`PromptConventions`. ``catalogue`` (:class:`ElementCatalogue`) lists the KG's elements without reading
    the KG, for KGs too large to read (Wikidata's properties, Freebase's schema and the entities its datasets name). ``train_dataset`` names a
    dataset over this KG whose ``train`` split methods learn from when the scored dataset has no training split of
    its own (:func:`sparqlab.data.training_source`).
    """

    name: str
    type_predicate: str
    label_predicate: str
    description_predicate: str
    prefixes: dict[str, str]
    entity_id_pattern: str
    entity_id_example: str
    property_id_pattern: str
    constraints: ConstraintScheme
    answer_key: Literal["iri", "label"] = "iri"
    endpoint: str | None = None
    search: str = "local"
    search_api_url: str | None = None
    label_languages: tuple[str, ...] = ("", "en")
    property_types: tuple[str, ...] = (RDF + "Property",)
    class_types: tuple[str, ...] = (RDFS + "Class", OWL + "Class")
    namespace: str | None = None
    prompt_notes: str = ""
    schema_in_prompt: bool = False
    subclass_predicate: str = RDFS + "subClassOf"
    property_entity_prefix: str | None = None
    direct_property_prefix: str | None = None
    id_forms: tuple[IdForm, ...] = ()
    expand_unnamed: bool = False
    statements: StatementScheme | None = None
    alias_predicates: tuple[str, ...] = ()
    max_in_flight: int | None = None
    id_shapes: tuple[IdForm, ...] = ()
    vocabulary: tuple[str, ...] = ()
    conventions: PromptConventions = PromptConventions()
    catalogue: ElementCatalogue | None = None
    train_dataset: str | None = None

    def resolve_id(self, text: str, kind: IdKind | None = None) -> str:
        """The IRI of an id as people type it: ``<iri>``, ``prefix:local`` (the predefined prefixes), a bare
        ``http(s)://``/``urn:`` IRI, or one of the profile's short :attr:`id_forms` (of ``kind`` only, when
        given). ``ValueError`` naming the accepted forms otherwise."""
        text = text.strip()
        if text.startswith("<") and text.endswith(">"):
            return text[1:-1]
        prefix, sep, local = text.partition(":")
        if sep and prefix in self.prefixes and not local.startswith("//"):
            return self.prefixes[prefix] + local
        if "://" in text or text.startswith("urn:"):
            return text
        forms = [form for form in self.id_forms if kind is None or form.kind == kind]
        for form in forms:
            iri = form.resolve(text)
            if iri is not None:
                return iri
        short = "".join(f", {form.kind} id such as {form.example}" for form in forms)
        raise ValueError(f"{text!r} is not {'an' if kind is None else 'an ' + kind} id on {self.name}: give "
                         f"<http://...>, a prefixed name such as {self.entity_id_example}{short}")

    def predicate_iri(self, property_iri: str) -> str:
        """The IRI a property has as a triple's predicate (Wikidata: ``wd:P19`` -> ``wdt:P19``; else itself)."""
        return _swap_prefix(property_iri, self.property_entity_prefix, self.direct_property_prefix)

    def property_entity_iri(self, predicate_iri: str) -> str:
        """Inverse of :meth:`predicate_iri`: where a property's own statements (label, constraints) live."""
        return _swap_prefix(predicate_iri, self.direct_property_prefix, self.property_entity_prefix)

    def digest(self, length: int = 16) -> str:
        """A content digest of what this profile tells the methods (prefixes, predicates, id forms and shapes,
        notes, prompt conventions ...; a catalogue by its declared name, its entries ship with the code): a run id
        hashes it, so a profile refined by another ``<name>.kg.yaml`` is a new run."""
        fields = asdict(replace(self, catalogue=None))
        if self.catalogue is not None:
            fields["catalogue"] = self.catalogue.name
        return stable_hash(fields, length)

    @property
    def store_builder(self) -> Callable[..., Path] | None:
        """The registered store builder of this KG (``None``: not bundled; reached through ``endpoint``)."""
        return STORE_BUILDERS.find(self.name)

    def shorten(self, iri: str) -> str:
        """``prefix:local`` when a predefined prefix covers ``iri`` and the rest is a plain name (dots inside, as in
        Freebase's ``ns:people.person``, included), else ``<iri>``."""
        for prefix, base in self.prefixes.items():
            local = iri[len(base):]
            if (iri.startswith(base) and local and local[0] != "." and local[-1] != "."
                    and all(c.isalnum() or c in "_-." for c in local)):
                return f"{prefix}:{local}"
        return f"<{iri}>"


def _swap_prefix(iri: str, old: str | None, new: str | None) -> str:
    """``iri`` with its prefix ``old`` replaced by ``new``; unchanged when either is unset or ``old`` is not its
    prefix."""
    return new + iri[len(old):] if old and new and iri.startswith(old) else iri


PROFILES: Registry[KGProfile] = Registry("KG profile", group=KG_GROUP)
"""KG profiles by name, each registered by its own module (sparqlab's in :mod:`sparqlab.graphs`, a plug-in's as a
``sparqlab.kgs`` entry point; a lazily derived profile, such as a plug-in's RDF file, as a loader)."""

def register_profile(profile: KGProfile | Callable[[], KGProfile], name: str | None = None) -> None:
    """Add a profile defined in its own module (:mod:`sparqlab.graphs.freebase`) to :data:`PROFILES`; a callable
    (with its ``name``) is a loader run on the first lookup (a profile derived from a file)."""
    if isinstance(profile, KGProfile):
        PROFILES.register(profile.name, profile)
    elif name is None:
        raise ValueError("a profile loader needs the profile's name")
    else:
        PROFILES.register_loader(name, profile)


def generic_profile(name: str) -> KGProfile:
    """A profile for an unknown KG (an endpoint URL or an RDF file): RDF/RDFS vocabulary, answers by IRI."""
    return KGProfile(
        name=name,
        type_predicate=RDF + "type",
        label_predicate=RDFS + "label",
        description_predicate=RDFS + "comment",
        prefixes=dict(STANDARD_PREFIXES),
        entity_id_pattern=r"^\S+$",
        entity_id_example="<http://example.org/entity>",
        property_id_pattern=r"^\S+$",
        constraints=ConstraintScheme("rdfs", domain_predicate=RDFS + "domain", range_predicate=RDFS + "range"),
    )


WDQS_PREFIXES = {
    "psn": WD + "prop/statement/value-normalized/", "pqn": WD + "prop/qualifier/value-normalized/",
    "pr": WD + "prop/reference/", "prv": WD + "prop/reference/value/", "wdno": WD + "prop/novalue/",
    "wdref": WD + "reference/", "hint": "http://www.bigdata.com/queryHints#",
}
"""Prefixes the Wikidata Query Service predefines beyond the wikidata profile's (benchmark queries rely on them)."""


@cache
def known_prefixes() -> Mapping[str, str]:
    """Prefixes a query may use without declaring them when it is read for its structure (structural EM, error
    categories, complexity, DeSQ fragments): every profile's predefined ones and the WDQS ones. Read once, when
    :mod:`sparqlab.kg` has loaded the bundled KG modules and the plug-ins (a file KG registered later adds
    nothing), so a query reads the same in every process."""
    return MappingProxyType({**WDQS_PREFIXES, **{p: ns for profile in PROFILES.loaded().values()
                                                  for p, ns in profile.prefixes.items()}})


def get_profile(name: str) -> KGProfile:
    """The registered profile called ``name``; the error lists the known ones."""
    return PROFILES.get(name)
