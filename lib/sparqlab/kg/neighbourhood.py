"""An entity's neighbourhood with labels: what an agent's ``lookup`` tool shows, and a property's real uses.

:func:`lookup` reads an entity's label, description, types and all its outgoing edges (and incoming edges on KGs
small enough to read them), each property and value with its label, so a model sees names beside ids. It is SAGA's
``get_wikidata_entry`` (appendix F.2: "all outgoing edges (linked entities, properties, and qualifiers)"): on a KG
with reified statements (:class:`~sparqlab.kg.profiles.StatementScheme`, Wikidata) it reads the truthy edges only —
never the statement namespaces as properties of their own, nor ``schema:``/``wikibase:`` bookkeeping — and the
qualifiers of their best-rank statements beside the value they qualify. Every property is read with its number of
values (one counting query), so a property is never lost to a row limit: at most ``values_per_property`` values
of each are read, the rest are counted. :func:`property_order` is the one documented order in which renderings
list properties and cut them. :func:`property_examples` returns a few real (subject, object) pairs of a property,
the "examples" the SPINACH / SAGA agents show before writing a triple pattern. All run trusted queries the
workbench writes itself, through :meth:`KnowledgeGraph.query` (guard, cache, timeout, row cap).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from sparqlab.kg.results import Term

if TYPE_CHECKING:
    from sparqlab.kg.base import KnowledgeGraph
    from sparqlab.kg.profiles import KGProfile, StatementScheme

LABEL_BATCH = 200
"""IRIs per label query (a VALUES block)."""
VALUES_PER_PROPERTY = 20
"""Values read per property of a lookup (the rest are counted, never silently dropped)."""
QUALIFIER_ROWS = 5000
"""Qualifier rows read per lookup (a statement-heavy entity's qualifiers beyond it are left out, and said so)."""

Direction = Literal["out", "in"]


@dataclass(frozen=True)
class Edge:
    """One triple seen from the entity: ``direction="out"`` for ``entity property value``, ``"in"`` for
    ``value property entity``. Literal values have an empty ``value_label``."""

    property: str
    property_label: str
    value: str
    value_label: str
    direction: Direction = "out"
    nested: tuple[Edge, ...] = ()
    """The outgoing edges of an unnamed value node (a Freebase CVT), one level deep, when the profile asks
    (``expand_unnamed``); the edge back to the looked-up entity is left out."""
    qualifiers: tuple[Edge, ...] = ()
    """The qualifiers of the best-rank statement(s) behind this truthy edge (Wikidata: ``pq:`` predicates)."""


@dataclass
class Neighbourhood:
    """An entity with its label, description, types ``(id, label)`` and edges.

    ``counts`` holds the number of values of every property per direction (``("out", property)`` -> n) — also of
    properties whose values were cut at the lookup's ``values_per_property``; ``identifiers`` the properties
    whose datatype is an external identifier (listed last by :func:`property_order`); ``truncated`` is set
    when some values or qualifiers were not read."""

    id: str
    label: str = ""
    description: str = ""
    types: list[tuple[str, str]] = field(default_factory=list)
    outgoing: list[Edge] = field(default_factory=list)
    incoming: list[Edge] = field(default_factory=list)
    counts: dict[tuple[Direction, str], int] = field(default_factory=dict)
    identifiers: frozenset[str] = frozenset()
    property_labels: dict[str, str] = field(default_factory=dict)
    truncated: bool = False

    def edges(self, direction: Direction) -> list[Edge]:
        return self.outgoing if direction == "out" else self.incoming

    def grouped(self, direction: Direction) -> dict[str, list[Edge]]:
        """Property -> its edges, in :func:`property_order`; every property with a count is present (with the
        values read for it)."""
        groups: dict[str, list[Edge]] = {}
        for edge in self.edges(direction):
            groups.setdefault(edge.property, []).append(edge)
        props = {p for d, p in self.counts if d == direction} | set(groups)
        return {p: groups.get(p, []) for p in property_order(props, self.identifiers)}

    def count(self, direction: Direction, prop: str) -> int:
        return self.counts.get((direction, prop), sum(1 for e in self.edges(direction) if e.property == prop))

    def to_observation(self, max_properties: int = 50, values_per_property: int = 5) -> str:
        """Compact text for a model: header line, types, then one line per property (``property -> values``, in
        :func:`property_order`); properties beyond ``max_properties`` per direction are named in a closing line
        and values beyond ``values_per_property`` counted, never silently dropped."""
        head = f"{_named(self.id, self.label)}" + (f": {self.description}" if self.description else "")
        lines = [head]
        if self.types:
            lines.append("types: " + ", ".join(_named(t, label) for t, label in self.types))
        for direction, title, arrow in (("out", "outgoing", "->"), ("in", "incoming", "<-")):
            groups = self.grouped(direction)
            if not groups:
                continue
            lines.append(f"{title} ({len(groups)} propert{'y' if len(groups) == 1 else 'ies'}):")
            shown = list(groups)[:max_properties]
            for prop in shown:
                edges = groups[prop]
                values = ", ".join(_named(e.value, e.value_label) + qualifier_text(e, _named)
                                   + (" (unnamed node:)" if e.nested else "") for e in edges[:values_per_property])
                more = self.count(direction, prop) - min(len(edges), values_per_property)
                lines.append(f"  {_named(prop, self.property_labels.get(prop, ''))} {arrow} {values}"
                             + (f" … (+{more} more)" if more > 0 else ""))
                lines += [f"      {_named(n.property, n.property_label)} -> {_named(n.value, n.value_label)}"
                          for e in edges[:values_per_property] for n in e.nested]
            hidden = list(groups)[max_properties:]
            if hidden:
                lines.append(not_shown_line(hidden, lambda p: _named(p, self.property_labels.get(p, ""))))
        if not self.outgoing and not self.incoming and not self.counts:
            lines.append("(no edges)")
        return "\n".join(lines)


def property_order(properties: Iterable[str], identifiers: Iterable[str] = ()) -> list[str]:
    """The order in which a lookup lists (and cuts) properties: external identifiers after every other property,
    then by the number ending the property's id (Wikidata's P19 before P106: low ids are the older, general
    properties, the order SPINACH's own tool uses), then by IRI."""
    identifiers = set(identifiers)
    return sorted(set(properties), key=lambda prop: (prop in identifiers, *_number_key(prop)))


def _number_key(prop: str) -> tuple:
    number = re.search(r"(\d+)$", prop)
    return (int(number.group(1)) if number else float("inf"), prop)


def not_shown_line(props: list[str], name) -> str:
    """The closing line of a capped lookup: how many properties were not shown, and which."""
    return f"({len(props)} more propert{'y' if len(props) == 1 else 'ies'} not shown: {', '.join(map(name, props))})"


def qualifier_text(edge: Edge, named) -> str:
    """`` [qualifier: value; …]`` after a value whose statement has qualifiers (``named(iri, label)`` writes an
    id with its label)."""
    if not edge.qualifiers:
        return ""
    parts: dict[str, list[str]] = {}
    for q in edge.qualifiers:
        parts.setdefault(named(q.property, q.property_label), []).append(
            named(q.value, q.value_label) if q.value_label or "://" in q.value else q.value)
    return " [" + "; ".join(f"{name}: {', '.join(values)}" for name, values in parts.items()) + "]"


def _named(value: str, label: str) -> str:
    return f"{label} ({value})" if label and label != value else value


def _iri(iri: str) -> str:
    if any(c in iri for c in '<>"{}|^`\\ \n'):
        raise ValueError(f"not a valid IRI: {iri!r}")
    return f"<{iri}>"


def _values(iris: Iterable[str]) -> str:
    return " ".join(_iri(i) for i in iris)


def _lang_ok(var: str, languages: tuple[str, ...]) -> str:
    """Keep untagged literals and those in the profile's label languages (IRIs pass)."""
    return f'(!isLiteral({var}) || LANG({var}) = "" || LANG({var}) IN ({", ".join(map(json.dumps, languages))}))'


def _language_family_ok(var: str, languages: tuple[str, ...]) -> str:
    """Keep untagged literals and those in the profile's label languages or their regional forms (``en-gb`` for
    ``en``): for monolingual values such as a qualifier's media legend, which exist in dozens of languages."""
    tests = " || ".join(f"LANGMATCHES(LANG({var}), {json.dumps(lang)})" for lang in languages if lang)
    return f'(!isLiteral({var}) || LANG({var}) = ""' + (f" || {tests})" if tests else ")")


def fetch_labels(kg: KnowledgeGraph, iris: set[str] | list[str]) -> dict[str, str]:
    """IRI → one label (profile's label predicate and languages), in batched queries; unlabelled IRIs absent."""
    languages = kg.profile.label_languages
    ordered = sorted(set(iris))
    labels: dict[str, str] = {}
    for start in range(0, len(ordered), LABEL_BATCH):
        values = " ".join(_iri(i) for i in ordered[start:start + LABEL_BATCH])
        result = kg.query(f"SELECT ?e ?l WHERE {{ VALUES ?e {{ {values} }} ?e <{kg.profile.label_predicate}> ?l "
                          f"FILTER(LANG(?l) IN ({', '.join(map(json.dumps, languages))})) }} ORDER BY ?e ?l")
        for row in result.rows:
            labels.setdefault(row["e"].value, row["l"].value)
    return labels


def _property_entity(profile: KGProfile, predicate: str) -> str:
    """Where a predicate's label and datatype live: the property's own entity (Wikidata ``wdt:P19``/``pq:P19``
    -> ``wd:P19``), else the predicate itself."""
    scheme = profile.statements
    local = scheme.local_id(predicate) if scheme else None
    return scheme.entity_prefix + local if scheme and local else profile.property_entity_iri(predicate)


def _property_labels(kg: KnowledgeGraph, predicates: set[str]) -> dict[str, str]:
    """Labels of predicates, read from the property's own item where the KG keeps it apart (Wikidata)."""
    entities = {p: _property_entity(kg.profile, p) for p in predicates}
    labels = fetch_labels(kg, set(entities.values()))
    return {p: labels[e] for p, e in entities.items() if e in labels}


def _identifiers(kg: KnowledgeGraph, predicates: set[str]) -> frozenset[str]:
    """The predicates whose property has the external-identifier datatype (one batched query per 200)."""
    scheme = kg.profile.statements
    if scheme is None or not predicates:
        return frozenset()
    entities = {_property_entity(kg.profile, p): p for p in predicates}
    found: set[str] = set()
    ordered = sorted(entities)
    for start in range(0, len(ordered), LABEL_BATCH):
        result = kg.query(f"SELECT ?e WHERE {{ VALUES ?e {{ {_values(ordered[start:start + LABEL_BATCH])} }} "
                          f"?e <{scheme.property_type}> <{scheme.identifier_type}> }}")
        found |= {entities[row["e"].value] for row in result.rows}
    return frozenset(found)


def _edge_pattern(node: str, direction: Direction, predicate: str = "?p") -> str:
    return f"{node} {predicate} ?v" if direction == "out" else f"?v {predicate} {node}"


def _read_edges(kg: KnowledgeGraph, node: str, direction: Direction, skip: set[str], values_per_property: int,
                truthy: StatementScheme | None) -> tuple[dict[str, int], list[tuple[str, Term]], bool]:
    """``({property: count}, [(property, value)], cut)`` of one direction: every property with its number of
    values, and at most ``values_per_property`` values of each (in value order; ``cut`` when some were left)."""
    # Truthy edges are facts, kept in every language (a title, a native name); elsewhere literal values in other
    # languages are the labels and comments of the KG's other languages, left out like the label itself.
    value_ok = "true" if truthy is not None else _lang_ok("?v", kg.profile.label_languages)
    condition = truthy.in_namespace("?p", truthy.truthy_prefix) if truthy is not None else value_ok
    pattern = _edge_pattern(node, direction)
    counted = kg.query(f"SELECT ?p (COUNT(?v) AS ?n) WHERE {{ {pattern} FILTER({condition}) }} GROUP BY ?p")
    counts = {row["p"].value: int(row["n"].value) for row in counted.rows if row["p"].value not in skip}
    small = sorted(p for p, n in counts.items() if n <= values_per_property)
    large = sorted(p for p, n in counts.items() if n > values_per_property)
    pairs: list[tuple[str, Term]] = []
    for start in range(0, len(small), LABEL_BATCH):
        result = kg.query(f"SELECT ?p ?v WHERE {{ VALUES ?p {{ {_values(small[start:start + LABEL_BATCH])} }} "
                          f"{pattern} FILTER({value_ok}) }}")
        pairs += [(row["p"].value, row["v"]) for row in result.rows]
    for prop in large:
        result = kg.query(f"SELECT ?v WHERE {{ {_edge_pattern(node, direction, _iri(prop))} "
                          f"FILTER({value_ok}) }} ORDER BY ?v LIMIT {int(values_per_property)}")
        pairs += [(prop, row["v"]) for row in result.rows]
    return counts, pairs, bool(large) or counted.truncated


def _qualifiers(kg: KnowledgeGraph, node: str, scheme: StatementScheme) -> tuple[dict[tuple[str, str], list], bool]:
    """``(truthy predicate, value) -> [(qualifier predicate, qualifier value)]`` of the entity's best-rank
    statements (those whose value is the truthy one), and whether the row cap cut them."""
    result = kg.query(
        f"SELECT ?claim ?v ?q ?qv WHERE {{ {node} ?claim ?st . ?st a <{scheme.best_rank}> ; ?q ?qv ; ?ps ?v . "
        f"FILTER({scheme.in_namespace('?claim', scheme.claim_prefix)} && "
        f"{scheme.in_namespace('?q', scheme.qualifier_prefix)} && "
        f"{_language_family_ok('?qv', kg.profile.label_languages)} && "
        f'?ps = IRI(CONCAT("{scheme.value_prefix}", STRAFTER(STR(?claim), "{scheme.claim_prefix}")))) }} '
        f"ORDER BY ?claim ?v ?q ?qv LIMIT {QUALIFIER_ROWS}", max_rows=QUALIFIER_ROWS)
    out: dict[tuple[str, str], list] = {}
    for row in result.rows:
        truthy = scheme.truthy_prefix + row["claim"].value[len(scheme.claim_prefix):]
        entry = out.setdefault((truthy, row["v"].value), [])
        pair = (row["q"].value, row["qv"])
        if pair not in entry:
            entry.append(pair)
    return out, len(result.rows) >= QUALIFIER_ROWS


def lookup(kg: KnowledgeGraph, entity: str, *, incoming: bool | None = None,
           values_per_property: int = VALUES_PER_PROPERTY) -> Neighbourhood:
    """The neighbourhood of ``entity`` (an IRI, prefixed name or one of the profile's short ids such as ``Q42``;
    the neighbourhood's ``id`` is the resolved IRI). ``incoming=None`` reads incoming edges only on KGs with a
    local label index (small, bundled KGs). Every property is counted; ``values_per_property`` caps the values
    read of each (see the module docstring)."""
    iri = kg.profile.resolve_id(entity)
    node = _iri(iri)
    p = kg.profile
    scheme = p.statements
    if incoming is None:
        incoming = p.search == "local"
    languages = p.label_languages
    info = kg.query(f"SELECT ?l ?d WHERE {{ OPTIONAL {{ {node} <{p.label_predicate}> ?l FILTER({_lang_ok('?l', languages)}) }} "
                    f"OPTIONAL {{ {node} <{p.description_predicate}> ?d FILTER({_lang_ok('?d', languages)}) }} }} "
                    "ORDER BY ?l ?d LIMIT 1")
    row = info.rows[0] if info.rows else {}
    hood = Neighbourhood(iri, row["l"].value if "l" in row else "", row["d"].value if "d" in row else "")
    types = kg.query(f"SELECT DISTINCT ?t WHERE {{ {node} <{p.type_predicate}> ?t }} ORDER BY ?t")
    type_ids = [r["t"].value for r in types.rows]
    skip = {p.label_predicate, p.description_predicate, p.type_predicate, *p.alias_predicates}
    edges: dict[Direction, list[tuple[str, Term]]] = {"out": [], "in": []}
    for direction in ("out", "in") if incoming else ("out",):
        counts, pairs, cut = _read_edges(kg, node, direction, skip, values_per_property, scheme)
        hood.counts.update({(direction, prop): n for prop, n in counts.items()})
        hood.truncated |= cut
        edges[direction] = pairs
    qualifiers, cut = _qualifiers(kg, node, scheme) if scheme is not None else ({}, False)
    hood.truncated |= cut
    iris = set(type_ids) | {v.value for rows in edges.values() for _, v in rows if v.type == "uri"}
    iris |= {v.value for rows in qualifiers.values() for _, v in rows if v.type == "uri"}
    labels = fetch_labels(kg, iris)
    nested = _unnamed_edges(kg, iri, {v.value for _, v in edges["out"] if v.type == "uri"} - set(labels), skip,
                            values_per_property) if p.expand_unnamed else {}
    labels |= fetch_labels(kg, {v.value for rows in nested.values() for _, v in rows if v.type == "uri"})
    predicates = {prop for _, prop in hood.counts} | {q for rows in (*qualifiers.values(), *nested.values())
                                                     for q, _ in rows}
    hood.property_labels = _property_labels(kg, predicates)
    hood.identifiers = _identifiers(kg, {prop for _, prop in hood.counts})

    def edge(prop: str, value: Term, direction: Direction, inner: tuple[Edge, ...] = (),
             quals: tuple[Edge, ...] = ()) -> Edge:
        return Edge(prop, hood.property_labels.get(prop, ""), value.value,
                    labels.get(value.value, "") if value.type == "uri" else "", direction, inner, quals)

    def edges_of(pairs) -> tuple[Edge, ...]:
        return tuple(edge(q, w, "out") for q, w in sorted(pairs, key=lambda pair: (*_number_key(pair[0]),
                                                                                      pair[1].value)))

    hood.types = [(t, labels.get(t, "")) for t in type_ids]
    for direction, rows in edges.items():
        target = hood.outgoing if direction == "out" else hood.incoming
        for prop, v in sorted(rows, key=lambda pair: (pair[0], pair[1].value)):
            inner = edges_of(nested.get(v.value, ())) if direction == "out" else ()
            quals = edges_of(qualifiers.get((prop, v.value), ())) if direction == "out" else ()
            target.append(edge(prop, v, direction, inner, quals))
    return hood


def _unnamed_edges(kg: KnowledgeGraph, entity: str, nodes: set[str], skip: set[str],
                   values_per_property: int) -> dict[str, list[tuple[str, Term]]]:
    """node -> its outgoing ``(property, value)`` pairs, for the unnamed value nodes of a lookup (Freebase CVTs),
    without the edges back to ``entity`` and without type / name / description edges; at most
    ``values_per_property`` values of each of a node's properties."""
    out: dict[str, list[tuple[str, Term]]] = {}
    languages = kg.profile.label_languages
    ordered = sorted(nodes)
    for start in range(0, len(ordered), LABEL_BATCH):
        values = " ".join(_iri(n) for n in ordered[start:start + LABEL_BATCH])
        result = kg.query(f"SELECT ?n ?p ?v WHERE {{ VALUES ?n {{ {values} }} ?n ?p ?v "
                          f"FILTER({_lang_ok('?v', languages)}) }} ORDER BY ?n ?p ?v")
        for row in result.rows:
            node, prop = row["n"].value, row["p"].value
            if prop in skip or row["v"].value == entity:
                continue
            pairs = out.setdefault(node, [])
            if sum(1 for q, _ in pairs if q == prop) < values_per_property:
                pairs.append((prop, row["v"]))
    return out


def property_examples(kg: KnowledgeGraph, prop: str, limit: int = 3) -> list[dict[str, str]]:
    """Up to ``limit`` real uses of a property: ``{"subject", "subject_label", "object", "object_label"}``
    (a literal object has no label). ``prop`` is an IRI, prefixed name or short id (``P19``, ``directed_by``); a
    property given as its own item (``wd:P19``) is mapped to its predicate."""
    predicate = _iri(kg.profile.predicate_iri(kg.profile.resolve_id(prop, "property")))
    result = kg.query(f"SELECT ?s ?o WHERE {{ ?s {predicate} ?o }} LIMIT {int(limit)}")
    labels = fetch_labels(kg, {t.value for r in result.rows for t in r.values() if t.type == "uri"})
    return [{"subject": r["s"].value, "subject_label": labels.get(r["s"].value, ""),
             "object": r["o"].value, "object_label": labels.get(r["o"].value, "") if r["o"].type == "uri" else ""}
            for r in result.rows]
