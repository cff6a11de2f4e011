"""SAGA's persistent type state Θ and the type-constrained filter P_τ(e) (method section, Eq. 3).

Θ maps every entity and SPARQL variable met so far in one interaction to the classes known for it: entity types
come from lookups (τ(e)), variable types from explicit type patterns in executed queries (``?x wdt:P31 wd:Q5``,
``?x a mclass:Film``). It also keeps trace-local range evidence (types observed among the results of a property
the index has no range for) and the expected answer type, which is a prior for the controller only and never
removes a property.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from sparqlab.methods.agents.schema.index import SchemaIndex
from sparqlab.methods.agents.schema.patterns import Triple, type_patterns


@dataclass
class FilterResult:
    """The outcome of P_τ(e) on one candidate list: kept and removed properties, in input order."""

    kept: list[str]
    removed: list[str]


def related_classes(relation: str, types: set[str], supers: set[str]) -> set[str]:
    """The classes an entity relates to in the way a declaration's P2309 relation asks: τ(e) for "instance of",
    its superclasses σ(e) (the entity itself and its subclass-of values) for "subclass of", both for "instance or
    subclass of"."""
    if relation == "subclass":
        return supers
    return types | supers if relation == "either" else types


def type_filter(properties: Iterable[str], entity_types: Iterable[str], schema: SchemaIndex,
                side: Literal["domain", "range"] = "domain", superclasses: Iterable[str] = ()) -> FilterResult:
    """Eq. (3): P_τ(e) = {p ∈ P(e) | δ(p) = ∅ ∨ δ(p) ∩ τ(e) ≠ ∅}, with δ(p) the *known* domain.

    ``entity_types`` is τ(e), already closed under subclass-of when that option is on. With τ(e) = ∅ nothing is
    removed (no evidence of a conflict); unknown properties (δ = ∅) are always kept, and so are properties whose
    only evidence is empirical (soft evidence never removes; :meth:`SchemaIndex.filter_classes`).
    ``side="range"`` applies the same rule to properties whose *object* is e (incoming edges), with ρ(p).

    Class matching is exact set intersection, as Eq. (3) writes it: a domain declared on a superclass of e's
    type does not match unless the types are closed under subclass-of first (the ``subclass_closure`` option).
    A declaration whose P2309 relation is "subclass of" (or "instance or subclass of") is matched against
    ``superclasses`` σ(e) — e itself and its subclass-of values — instead of (or besides) τ(e); an entity that
    relates to no class in the asked way is never evidence of a conflict.
    """
    types, supers = set(entity_types), set(superclasses)
    kept, removed = [], []
    for prop in dict.fromkeys(properties):
        allowed = schema.filter_classes(prop, side)
        related = related_classes(schema.relation(prop, side), types, supers)
        (kept if not related or not allowed or allowed & related else removed).append(prop)
    return FilterResult(kept, removed)


@dataclass
class TypeState:
    """Θ: term (entity IRI or ``?var``) -> known classes, most recently updated last.

    ``range_evidence`` maps a property without an indexed range to the classes seen among its results in this
    interaction; ``answer_type`` is the expected answer type ``(label, class IRI or "")``; ``class_labels``
    names classes for the controller prompt; ``superclasses`` σ(e) of looked-up entities that are classes
    (themselves and their subclass-of values), for declarations whose P2309 relation is "subclass of".
    """

    types: dict[str, set[str]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    range_evidence: dict[str, set[str]] = field(default_factory=dict)
    answer_type: tuple[str, str] | None = None
    class_labels: dict[str, str] = field(default_factory=dict)
    superclasses: dict[str, set[str]] = field(default_factory=dict)

    def add(self, term: str, classes: Iterable[str], label: str | None = None,
            class_labels: Mapping[str, str] | None = None) -> bool:
        """Record ``classes`` for ``term``; returns whether anything new was learnt. The term becomes the most
        recent entry either way."""
        classes = set(classes)
        known = self.types.pop(term, set())
        self.types[term] = known | classes
        if label:
            self.labels[term] = label
        self.class_labels.update(class_labels or {})
        return bool(classes - known)

    def get(self, term: str) -> set[str]:
        return set(self.types.get(term, ()))

    def observe_query(self, triples: list[Triple], type_predicate: str) -> list[tuple[str, str]]:
        """Variable (and entity) types from the query's explicit type patterns; returns the new pairs."""
        learnt = []
        for term, cls in type_patterns(triples, type_predicate):
            if self.add(term, [cls]):
                learnt.append((term, cls))
        return learnt

    def observe_range(self, prop: str, classes: Iterable[str]) -> None:
        """Trace-local range evidence for a property the index has no range for (never written to the index)."""
        self.range_evidence.setdefault(prop, set()).update(classes)

    def class_name(self, cls: str) -> str:
        return self.class_labels.get(cls) or cls.rstrip("/").rsplit("/", 1)[-1]

    def recent(self, n: int = 5) -> list[tuple[str, set[str]]]:
        """The ``n`` most recently updated entries that carry types (the prompt's "Known entity types")."""
        return [(term, classes) for term, classes in list(self.types.items()) if classes][-n:]

    def render(self, n: int = 5, shorten=None) -> str:
        """One line per recent entry: ``label (id): class, class`` (``shorten`` writes ids compactly)."""
        lines = []
        for term, classes in self.recent(n):
            name = shorten(term) if shorten and not term.startswith("?") else term
            label = self.labels.get(term)
            head = f"{label} ({name})" if label else name
            lines.append(f"- {head}: {', '.join(sorted(self.class_name(c) for c in classes))}")
        return "\n".join(lines) or "(none yet)"


def domain_conflicts(triples: list[Triple], state: TypeState, schema: SchemaIndex,
                     closure: Mapping[str, set[str]] | None = None) -> list[tuple[Triple, set[str], frozenset[str]]]:
    """The patterns whose property has a *known* (formal, unmasked) domain that shares no class with the known
    types of its subject (Θ, plus the query's own type patterns already observed into it).

    Returns ``(triple, subject types, domain)`` for each conflict; a subject without known types (for a "subclass
    of" declaration: without known superclasses), a property without a formal domain, or a path never conflicts. ``closure`` maps a class to its superclasses when the
    subclass-closure option is on.
    """
    conflicts = []
    for triple in triples:
        domain = schema.formal_domain(triple.predicate)
        types = state.get(triple.subject)
        if closure:
            types = types.union(*(closure.get(c, set()) for c in types))
        supers = state.superclasses.get(triple.subject, set())
        subject_types = related_classes(schema.relation(triple.predicate), types, supers)
        if not domain or not subject_types:
            continue
        if not domain & subject_types:
            conflicts.append((triple, subject_types, domain))
    return conflicts
