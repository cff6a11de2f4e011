"""The schema index of SAGA (method section, "Schema index"): per property, a domain δ(p) and a range ρ(p).

Sources, in order: formal declarations (Wikidata property constraints P2302 with the subject-type / value-type
constraint item, P2308 class qualifiers and the P2309 relation qualifier — whether the subject must be an
instance of, a subclass of, or either, of those classes; ``rdfs:domain`` / ``rdfs:range`` elsewhere, always
"instance of" — whichever the KG's profile declares), then empirical evidence (the most frequent types among a sample of the property's subjects
and objects), else nothing: a property with no known domain is *unconstrained* and is never removed by the type
filter. The index is read from the KG once (:func:`build_schema_index`) and stored as JSON with an integrity
record beside it, checked when it is loaded (a damaged index is rebuilt or refused, naming the file).

Formal declarations are *known* constraints; empirical evidence is *soft* (the paper's "soft domain and range
evidence"): it is shown to the controller as a hint and never removes a property, unless the non-default
``empirical_filter`` view asks for the older behaviour (:meth:`SchemaIndex.filter_classes`).

Coverage masking (Table 6) keeps a fraction of the formal *domain* declarations, chosen reproducibly by a seed
(:meth:`SchemaIndex.with_coverage`); a masked property falls back to its empirical evidence (a hint) when the
empirical fallback is on, exactly as a property that never had a formal declaration — so at 0 % coverage the
filter removes nothing (Table 6's left end).
"""

from __future__ import annotations

import json
import random
import warnings
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from sparqlab.core.files import atomic_write
from sparqlab.core.hashing import stable_hash
from sparqlab.core.integrity import (
    REBUILT_ON_USE,
    DamagedOutput,
    RebuiltOutputWarning,
    sidecar_problem,
    write_sidecar,
)
from sparqlab.core.paths import cache_dir
from sparqlab.kg.base import KnowledgeGraph
from sparqlab.kg.profiles import DECLARED_SCHEMAS, KGProfile
from sparqlab.kg.results import QueryResult

Source = Literal["formal", "empirical", "none"]
Relation = Literal["instance", "subclass", "either"]
"""How an entity must relate to the classes of a declared domain or range (Wikidata P2309): be an instance of one,
a subclass of one, or either. RDFS domains, empirical evidence and statements without P2309 are ``instance``."""

SCHEMA_INDEX_VERSION = 3
"""Bumped when what the index stores changes, so stored indexes are rebuilt (3: an integrity record beside
``schema.json``)."""

EMPIRICAL_SAMPLE = 50
"""Subjects (and objects) sampled per property for empirical domain/range evidence."""
EMPIRICAL_MIN_SHARE = 0.1
"""A sampled type counts as evidence when at least this share of the sampled subjects/objects has it."""
EMPIRICAL_MAX_TYPES = 3
"""At most this many (most frequent) types are kept as a property's empirical domain or range."""


@dataclass(frozen=True)
class PropertySchema:
    """What the index knows about one property, keyed by the IRI triples use as predicate (``wdt:P19``)."""

    id: str
    label: str = ""
    description: str = ""
    formal_domain: tuple[str, ...] = ()
    formal_range: tuple[str, ...] = ()
    empirical_domain: tuple[str, ...] | None = ()
    empirical_range: tuple[str, ...] | None = ()
    """``None``: not sampled yet (a large KG's index samples a property the first time an agent meets it)."""
    domain_relation: Relation = "instance"
    range_relation: Relation = "instance"
    """The P2309 relation of the formal domain / range declaration."""


@dataclass(frozen=True)
class SchemaIndex:
    """δ(p) and ρ(p) for every property of one KG, plus the labels of the classes they mention.

    ``masked`` holds the properties whose formal domain coverage masking removed; ``empirical_fallback`` says
    whether empirical evidence is shown where no (unmasked) formal declaration exists; ``empirical_filter``
    (not the paper's reading, off by default) lets that evidence remove properties like a declaration.
    """

    kg_identity: str
    properties: dict[str, PropertySchema]
    class_labels: dict[str, str] = field(default_factory=dict)
    masked: frozenset[str] = frozenset()
    empirical_fallback: bool = True
    empirical_filter: bool = False

    # -- δ and ρ --------------------------------------------------------------------------------------------

    def get(self, prop: str) -> PropertySchema | None:
        return self.properties.get(prop)

    def formal_domain(self, prop: str) -> frozenset[str]:
        """The formal domain that survives masking (what [BLOCKED] relies on: a *known* declaration)."""
        entry = self.properties.get(prop)
        if entry is None or prop in self.masked:
            return frozenset()
        return frozenset(entry.formal_domain)

    def formal_range(self, prop: str) -> frozenset[str]:
        """The formal range (coverage masking applies to domains only)."""
        entry = self.properties.get(prop)
        return frozenset(entry.formal_range) if entry is not None else frozenset()

    def filter_classes(self, prop: str, side: Literal["domain", "range"] = "domain") -> frozenset[str]:
        """The classes the type filter enforces for ``prop``: only a *known* (formal, unmasked) declaration —
        empirical evidence is soft and never removes a property (method section, "Schema index") — unless this
        view has ``empirical_filter`` on, when δ(p) / ρ(p) with their empirical fallback are enforced."""
        if self.empirical_filter:
            return self.domain(prop) if side == "domain" else self.range(prop)
        return self.formal_domain(prop) if side == "domain" else self.formal_range(prop)

    def relation(self, prop: str, side: Literal["domain", "range"] = "domain") -> Relation:
        """The relation (P2309) an entity must have to the classes :meth:`filter_classes` enforces: the formal
        declaration's, ``instance`` for empirical evidence."""
        entry = self.properties.get(prop)
        if entry is None or self._side(prop, side)[1] != "formal":
            return "instance"
        return entry.domain_relation if side == "domain" else entry.range_relation

    def knows_class(self, iri: str) -> bool:
        """Whether ``iri`` is a class the index has met: labelled, or in some property's domain or range."""
        return iri in self.class_labels or any(
            iri in self.domain(prop) or iri in self.range(prop) for prop in self.properties)

    def domain(self, prop: str) -> frozenset[str]:
        """δ(p): formal (unmasked) domain, else empirical evidence if the fallback is on, else ∅ (unknown)."""
        return frozenset(self._side(prop, "domain")[0])

    def range(self, prop: str) -> frozenset[str]:
        """ρ(p): formal range, else empirical evidence if the fallback is on, else ∅ (unknown)."""
        return frozenset(self._side(prop, "range")[0])

    def domain_source(self, prop: str) -> Source:
        return self._side(prop, "domain")[1]

    def range_source(self, prop: str) -> Source:
        return self._side(prop, "range")[1]

    def _side(self, prop: str, side: str) -> tuple[tuple[str, ...], Source]:
        entry = self.properties.get(prop)
        if entry is None:
            return (), "none"
        formal = getattr(entry, f"formal_{side}")
        if formal and not (side == "domain" and prop in self.masked):
            return formal, "formal"
        empirical = getattr(entry, f"empirical_{side}") or ()
        if empirical and self.empirical_fallback:
            return empirical, "empirical"
        return (), "none"

    def label(self, iri: str) -> str:
        """A class's or property's label, else the IRI's last segment."""
        if iri in self.properties and self.properties[iri].label:
            return self.properties[iri].label
        return self.class_labels.get(iri) or iri.rstrip("/#").rsplit("/", 1)[-1].rsplit("#", 1)[-1]

    # -- coverage masking (Table 6) -------------------------------------------------------------------------

    def with_coverage(self, coverage: float, seed: int = 0) -> SchemaIndex:
        """This index keeping ``round(coverage * n)`` of its ``n`` formal domain declarations.

        The kept ones are a uniform sample drawn with ``random.Random(seed)`` from the sorted property list, so
        one seed always keeps the same set and different seeds keep different sets. Masking is not cumulative:
        it always starts from the full formal schema.
        """
        if not 0.0 <= coverage <= 1.0:
            raise ValueError(f"schema coverage must be in [0, 1], got {coverage}")
        declared = sorted(p for p, entry in self.properties.items() if entry.formal_domain)
        keep = set(random.Random(seed).sample(declared, round(coverage * len(declared))))
        return replace(self, masked=frozenset(p for p in declared if p not in keep))

    def with_empirical_fallback(self, enabled: bool) -> SchemaIndex:
        return replace(self, empirical_fallback=enabled)

    def with_empirical_filter(self, enabled: bool) -> SchemaIndex:
        return replace(self, empirical_filter=enabled)

    # -- lazy sampling (large KGs) ----------------------------------------------------------------------------

    def needs_sample(self, prop: str) -> bool:
        """Whether δ(p) would come from empirical evidence that has not been sampled yet."""
        entry = self.properties.get(prop)
        return (entry is not None and self.empirical_fallback and entry.empirical_domain is None
                and not self.formal_domain(prop))

    def add_sample(self, prop: str, domain: tuple[str, ...], range_: tuple[str, ...],
                   class_labels: dict[str, str] | None = None) -> None:
        """Record a property's sampled types (shared by every view of this index: masking copies share it)."""
        self.properties[prop] = replace(self.properties[prop], empirical_domain=domain, empirical_range=range_)
        self.class_labels.update(class_labels or {})

    # -- reporting and storage ------------------------------------------------------------------------------

    def describe(self, prop: str) -> dict[str, Any]:
        """One property as ``sparqlab schema show`` prints it."""
        entry = self.properties.get(prop) or PropertySchema(prop)
        domain_source, range_source = self.domain_source(prop), self.range_source(prop)
        source = "formal" if "formal" in (domain_source, range_source) else (
            "empirical" if "empirical" in (domain_source, range_source) else "none")
        return {
            "property": prop, "label": entry.label,
            "domain": sorted(self.domain(prop)), "domain_labels": [self.label(c) for c in sorted(self.domain(prop))],
            "range": sorted(self.range(prop)), "range_labels": [self.label(c) for c in sorted(self.range(prop))],
            "source": source, "domain_source": domain_source, "range_source": range_source,
            "domain_relation": self.relation(prop, "domain"), "range_relation": self.relation(prop, "range"),
            "masked": prop in self.masked, "sampled": entry.empirical_domain is not None,
        }

    def to_json(self) -> dict[str, Any]:
        """The unmasked index (masking and the fallback switch are views, applied after loading)."""
        return {"kg_identity": self.kg_identity, "class_labels": self.class_labels,
                "properties": [asdict(entry) for _, entry in sorted(self.properties.items())]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SchemaIndex:
        entries = {}
        for item in data["properties"]:
            values = {k: tuple(v) if isinstance(v, list) else v for k, v in item.items()}
            entries[item["id"]] = PropertySchema(**values)
        return cls(data["kg_identity"], entries, dict(data.get("class_labels", {})))

    def save(self, path: Path) -> None:
        """Write the index atomically, with its integrity record beside it (:mod:`sparqlab.core.integrity`)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(self.to_json(), indent=1, sort_keys=True))
        write_sidecar(path)

    @classmethod
    def load(cls, path: Path) -> SchemaIndex:
        """The index stored at ``path``, checked against its integrity record first: a damaged file (cut,
        overwritten, edited) raises :class:`~sparqlab.core.integrity.DamagedOutput` naming it."""
        path = Path(path)
        problem = sidecar_problem(path)
        if problem is None:
            try:
                return cls.from_json(json.loads(path.read_text(encoding="utf-8")))
            except (UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
                problem = f"it cannot be read ({type(error).__name__}: {error})"
        raise DamagedOutput("schema index", path, problem, f"rm '{path}'", REBUILT_ON_USE)


# -- building from a KG -------------------------------------------------------------------------------------

def _lang(var: str, profile: KGProfile) -> str:
    return f"FILTER(LANG({var}) IN ({', '.join(json.dumps(lang) for lang in profile.label_languages)}))"


def _values(iris: Iterable[str]) -> str:
    return " ".join(f"<{iri}>" for iri in iris)


def _infrastructure(profile: KGProfile) -> set[str]:
    """Predicates that describe the graph rather than relate entities; never indexed as properties."""
    c = profile.constraints
    return {profile.type_predicate, profile.label_predicate, profile.description_predicate,
            profile.subclass_predicate, "http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
            *(iri for iri in (c.domain_predicate, c.range_predicate, c.statement_predicate) if iri)}


def _property_items(kg: KnowledgeGraph) -> dict[str, str]:
    """predicate IRI -> the IRI of the property's own description (label, constraints)."""
    profile = kg.profile
    if profile.property_entity_prefix:  # Wikidata-shaped: properties are items typed wikibase:Property
        rows = kg.bulk_values(f"SELECT DISTINCT ?prop WHERE {{ VALUES ?t {{ {_values(profile.property_types)} }} "
                              f"?prop a ?t }}")
        items = {profile.predicate_iri(row["prop"]): row["prop"] for row in rows}
    else:
        rows = kg.bulk_values("SELECT DISTINCT ?p WHERE { ?s ?p ?o }")
        items = {row["p"]: row["p"] for row in rows}
    skip = _infrastructure(profile)
    return {p: item for p, item in items.items() if p not in skip}


def _formal(kg: KnowledgeGraph) -> dict[str, dict[str, set[str]]]:
    """property item IRI -> {"domain": classes, "range": classes} from the profile's constraint scheme."""
    c = kg.profile.constraints
    if c.kind == "rdfs":
        query = ("SELECT ?prop ?kind ?class WHERE { "
                 f'{{ ?prop <{c.domain_predicate}> ?class BIND("domain" AS ?kind) }} UNION '
                 f'{{ ?prop <{c.range_predicate}> ?class BIND("range" AS ?kind) }} }}')
    else:
        relation = (f"OPTIONAL {{ ?st <{c.relation_qualifier}> ?relation }} " if c.relation_qualifier else "")
        query = ("SELECT ?prop ?kind ?class ?relation WHERE { "
                 f"?prop <{c.statement_predicate}> ?st . ?st <{c.statement_value}> ?constraint ; "
                 f"<{c.class_qualifier}> ?class . {relation}{c.active_statement('?st')}"
                 f'VALUES (?constraint ?kind) {{ (<{c.subject_type_item}> "domain") '
                 f'(<{c.value_type_item}> "range") }} }}')
    relations = {c.subclass_relation_item: "subclass", c.either_relation_item: "either"}
    out: dict[str, dict[str, set[str]]] = {}
    for row in kg.bulk_values(query):
        entry = out.setdefault(row["prop"], {"domain": set(), "range": set(), "domain_relation": set(),
                                             "range_relation": set()})
        entry[row["kind"]].add(row["class"])
        entry[row["kind"] + "_relation"].add(relations.get(row.get("relation"), "instance"))
    return out


def _relation(found: set[str]) -> Relation:
    """One relation for a declaration: its statements' relation, ``either`` when they differ."""
    return next(iter(found)) if len(found) == 1 else ("either" if found else "instance")


def _texts(kg: KnowledgeGraph, iris: list[str]) -> dict[str, tuple[str, str]]:
    """iri -> (label, description) in the profile's label languages."""
    profile = kg.profile
    out: dict[str, tuple[str, str]] = {}
    for start in range(0, len(iris), 500):
        chunk = iris[start:start + 500]
        rows = kg.bulk_values(
            f"SELECT ?x ?label ?desc WHERE {{ VALUES ?x {{ {_values(chunk)} }} "
            f"OPTIONAL {{ ?x <{profile.label_predicate}> ?label {_lang('?label', profile)} }} "
            f"OPTIONAL {{ ?x <{profile.description_predicate}> ?desc {_lang('?desc', profile)} }} }}")
        for row in rows:
            label, desc = out.get(row["x"], ("", ""))
            out[row["x"]] = (label or row.get("label", ""), desc or row.get("desc", ""))
    return out


def sample_queries(profile: KGProfile, prop: str, side: Literal["subject", "object"],
                   sample: int = EMPIRICAL_SAMPLE) -> tuple[str, str]:
    """The two queries of :func:`sample_types`: type counts among up to ``sample`` distinct subjects (or IRI
    objects) of ``prop``, and how many were sampled."""
    inner = f"?x <{prop}> ?o" if side == "subject" else f"?s <{prop}> ?x FILTER(isIRI(?x))"
    sampled = f"{{ SELECT DISTINCT ?x WHERE {{ {inner} }} LIMIT {sample} }}"
    return (f"SELECT ?t (COUNT(DISTINCT ?x) AS ?n) WHERE {{ {sampled} ?x <{profile.type_predicate}> ?t }} GROUP BY ?t",
            f"SELECT (COUNT(*) AS ?n) WHERE {{ {sampled} }}")


def frequent_types(type_counts: QueryResult, sampled: QueryResult) -> tuple[str, ...]:
    """Types held by at least :data:`EMPIRICAL_MIN_SHARE` of the sample, at most :data:`EMPIRICAL_MAX_TYPES`,
    most frequent first (ties by IRI, so the result is stable)."""
    total = int(sampled.rows[0]["n"].value) if sampled.rows else 0
    counts = sorted(((int(r["n"].value), r["t"].value) for r in type_counts.rows), key=lambda pair: (-pair[0], pair[1]))
    return tuple(t for n, t in counts if total and n / total >= EMPIRICAL_MIN_SHARE)[:EMPIRICAL_MAX_TYPES]


def sample_types(kg: KnowledgeGraph, prop: str, side: Literal["subject", "object"],
                 sample: int = EMPIRICAL_SAMPLE) -> tuple[str, ...]:
    """The most frequent types among a sample of ``prop``'s subjects (or objects): its empirical domain (range)."""
    counts, sampled = sample_queries(kg.profile, prop, side, sample)
    return frequent_types(kg.query(counts), kg.query(sampled))


EAGER_SAMPLING_LIMIT = 2000
"""KGs with more properties than this (Wikidata: ~12,000) are sampled lazily, property by property, when an agent
first meets one; smaller KGs are sampled completely when the index is built."""


def build_schema_index(kg: KnowledgeGraph, *, empirical: bool = True, sample: int = EMPIRICAL_SAMPLE,
                       progress: bool = True) -> SchemaIndex:
    """Read the schema index from ``kg``: its properties with labels, formal domain/range, and (``empirical``)
    the sampled subject/object types of every property (needed also for properties whose formal domain a
    coverage mask removes): one sampling query pair per property, at build time for KGs with at most
    :data:`EAGER_SAMPLING_LIMIT` properties (a tqdm bar shows progress), later and only for the properties an agent
    meets otherwise (``None`` until then)."""
    from tqdm.auto import tqdm

    curated = DECLARED_SCHEMAS.find(kg.profile.name)
    if curated is not None:  # a curated schema kept outside the KG (Freebase's fb_roles): no KG scan
        schema = curated()
        items = {p: p for p in schema.properties}
        formal = {p: {"domain": set(d), "range": set(r)} for p, (_, _, d, r) in schema.properties.items()}
        texts = {p: (label, description) for p, (label, description, _, _) in schema.properties.items()}
    else:
        items = _property_items(kg)
        formal = _formal(kg)
        texts = _texts(kg, sorted(set(items.values())))
    eager = empirical and len(items) <= EAGER_SAMPLING_LIMIT
    unsampled = None if empirical else ()
    entries: dict[str, PropertySchema] = {}
    for prop, item in tqdm(sorted(items.items()), desc="schema index", unit="property",
                           disable=not (progress and eager)):
        declared = formal.get(item, {})
        label, description = texts.get(item, ("", ""))
        entries[prop] = PropertySchema(
            prop, label, description, tuple(sorted(declared.get("domain", ()))),
            tuple(sorted(declared.get("range", ()))),
            sample_types(kg, prop, "subject", sample) if eager else unsampled,
            sample_types(kg, prop, "object", sample) if eager else unsampled,
            _relation(declared.get("domain_relation", set())), _relation(declared.get("range_relation", set())),
        )
    classes = sorted({c for e in entries.values() for c in (*e.formal_domain, *e.formal_range,
                                                            *(e.empirical_domain or ()), *(e.empirical_range or ()))})
    class_labels = {c: label for c, (label, _) in _texts(kg, classes).items() if label} if curated is None else {}
    return SchemaIndex(kg.identity, entries, class_labels)


def load_or_build(kg: KnowledgeGraph, folder: Path, **options: Any) -> SchemaIndex:
    """The index stored in ``folder/schema.json``, else built from ``kg`` and stored there; a damaged stored
    index is rebuilt the same way, with a warning naming it."""
    path = Path(folder) / "schema.json"
    if path.exists():
        try:
            return SchemaIndex.load(path)
        except DamagedOutput as damaged:
            warnings.warn(f"the schema index {path} was damaged ({damaged.problem}); it is rebuilt from the KG",
                          RebuiltOutputWarning, stacklevel=2)
    index = build_schema_index(kg, **options)
    index.save(path)
    return index


def default_schema_folder(kg: KnowledgeGraph, sample: int = EMPIRICAL_SAMPLE) -> Path:
    """Where an index is kept outside a run (``sparqlab schema``, direct use); runs use their artifact folder."""
    key = [kg.identity, kg.profile.name, sample, SCHEMA_INDEX_VERSION]
    digest = declared_digest(kg)
    return cache_dir() / "schema" / stable_hash(key + [digest] if digest else key, 16)


def declared_superclasses(kg: KnowledgeGraph, classes: Iterable[str]) -> set[str] | None:
    """τ⁺ from the KG's curated schema (Freebase: ``fb_types``, already transitive): the classes and their
    supertypes; ``None`` when the KG has no curated schema (then the KG is asked)."""
    loader = DECLARED_SCHEMAS.find(kg.profile.name)
    if loader is None:
        return None
    supers = loader().superclasses
    return set(classes).union(*(supers.get(c, ()) for c in classes))


def declared_digest(kg: KnowledgeGraph) -> str | None:
    """The content digest of the KG's curated schema files (Freebase's fb_roles ...), ``None`` when the index
    reads its declarations from the KG: part of every stored index's key, so changed files rebuild it."""
    loader = DECLARED_SCHEMAS.find(kg.profile.name)
    return loader().digest if loader else None


def entity_types(kg: KnowledgeGraph, entity: str) -> list[str]:
    """τ(e): the classes ``entity`` (an IRI, prefixed name or short id such as ``Q42``) is declared to belong to,
    sorted."""
    entity = kg.profile.resolve_id(entity, "entity")
    rows = kg.query(f"SELECT DISTINCT ?t WHERE {{ <{entity}> <{kg.profile.type_predicate}> ?t }}").rows
    return sorted(r["t"].value for r in rows)


def class_superclasses(kg: KnowledgeGraph, entity: str) -> set[str]:
    """σ(e) for an entity that is a class: itself and its subclass-of values (what a "subclass of" type
    constraint is matched against); empty for an entity without subclass-of values (an instance)."""
    rows = kg.query(f"SELECT DISTINCT ?s WHERE {{ <{entity}> <{kg.profile.subclass_predicate}> ?s }}").rows
    direct = {r["s"].value for r in rows}
    return {entity} | direct if direct else set()


def superclass_query(classes: Iterable[str], subclass_predicate: str) -> str:
    """SELECT ``?super`` reachable from any of ``classes`` by zero or more subclass-of steps (the closure τ⁺).

    One path per class, each from a constant start, joined by UNION: Virtuoso refuses a path whose start comes
    from VALUES ("transitive start not given"), which every other engine accepts."""
    paths = " UNION ".join(f"{{ <{c}> <{subclass_predicate}>* ?super }}" for c in sorted(set(classes)))
    return f"SELECT DISTINCT ?super WHERE {{ {paths or 'VALUES ?super { }'} }}"


def superclasses(kg: KnowledgeGraph, classes: Iterable[str]) -> set[str]:
    """The classes and everything above them by subclass-of (τ⁺ for the subclass-closure option); from the KG's
    declared schema when it has one (Freebase: ``fb_types``, already transitive), else by a subclass-path query."""
    classes = set(classes)
    if not classes:
        return set()
    declared = declared_superclasses(kg, classes)
    if declared is not None:
        return declared
    rows = kg.query(superclass_query(classes, kg.profile.subclass_predicate)).rows
    return classes | {r["super"].value for r in rows if "super" in r}
