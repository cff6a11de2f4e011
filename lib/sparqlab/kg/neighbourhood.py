"""An entity's neighbourhood with labels: what an agent's ``lookup`` tool shows, and a property's real uses.

:func:`lookup` reads an entity's label, description, types and outgoing edges (and incoming edges on KGs small
enough to read them), each property and value with its label, so a model sees names beside ids.
:func:`property_examples` returns a few real (subject, object) pairs of a property, the "examples" the SPINACH /
SAGA agents show before writing a triple pattern. Both run trusted queries the workbench writes itself, through
:meth:`KnowledgeGraph.query` (guard, cache, timeout, row cap).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from sparqlab.kg.base import KnowledgeGraph

LABEL_BATCH = 200
"""IRIs per label query (a VALUES block)."""


@dataclass(frozen=True)
class Edge:
    """One triple seen from the entity: ``direction="out"`` for ``entity property value``, ``"in"`` for
    ``value property entity``. Literal values have an empty ``value_label``."""

    property: str
    property_label: str
    value: str
    value_label: str
    direction: Literal["out", "in"] = "out"
    nested: tuple[Edge, ...] = ()
    """The outgoing edges of an unnamed value node (a Freebase CVT), one level deep, when the profile asks
    (``expand_unnamed``); the edge back to the looked-up entity is left out."""


@dataclass
class Neighbourhood:
    """An entity with its label, description, types ``(id, label)`` and edges; ``truncated`` when an edge list
    hit the lookup's limit."""

    id: str
    label: str = ""
    description: str = ""
    types: list[tuple[str, str]] = field(default_factory=list)
    outgoing: list[Edge] = field(default_factory=list)
    incoming: list[Edge] = field(default_factory=list)
    truncated: bool = False

    def to_observation(self, max_edges: int = 50) -> str:
        """Compact text for a model: header line, types, then ``property -> value`` lines with labels; edges
        beyond ``max_edges`` (per direction) are counted, never silently dropped."""
        head = f"{_named(self.id, self.label)}" + (f": {self.description}" if self.description else "")
        lines = [head]
        if self.types:
            lines.append("types: " + ", ".join(_named(t, label) for t, label in self.types))
        for title, edges, arrow in (("outgoing", self.outgoing, "->"), ("incoming", self.incoming, "<-")):
            if not edges:
                continue
            lines.append(f"{title} ({len(edges)}{'+' if self.truncated else ''}):")
            for e in edges[:max_edges]:
                lines.append(f"  {_named(e.property, e.property_label)} {arrow} {_named(e.value, e.value_label)}"
                             + (" (unnamed node:)" if e.nested else ""))
                lines += [f"      {_named(n.property, n.property_label)} -> {_named(n.value, n.value_label)}"
                          for n in e.nested]
            if len(edges) > max_edges:
                lines.append(f"  ... {len(edges) - max_edges} more {title} edges not shown")
        if not self.outgoing and not self.incoming:
            lines.append("(no edges)")
        return "\n".join(lines)


def _named(value: str, label: str) -> str:
    return f"{label} ({value})" if label and label != value else value


def _iri(iri: str) -> str:
    if any(c in iri for c in '<>"{}|^`\\ \n'):
        raise ValueError(f"not a valid IRI: {iri!r}")
    return f"<{iri}>"


def _lang_ok(var: str, languages: tuple[str, ...]) -> str:
    """Keep untagged literals and those in the profile's label languages (IRIs pass)."""
    return f'(!isLiteral({var}) || LANG({var}) = "" || LANG({var}) IN ({", ".join(map(json.dumps, languages))}))'


def fetch_labels(kg: KnowledgeGraph, iris: set[str] | list[str]) -> dict[str, str]:
    """IRI → one label (profile's label predicate and languages), in batched queries; unlabelled IRIs absent."""
    languages = kg.profile.label_languages
    ordered = sorted(set(iris))
    labels: dict[str, str] = {}
    for start in range(0, len(ordered), LABEL_BATCH):
        values = " ".join(_iri(i) for i in ordered[start:start + LABEL_BATCH])
        result = kg.query(f"SELECT ?e ?l WHERE {{ VALUES ?e {{ {values} }} ?e <{kg.profile.label_predicate}> ?l "
                          f"FILTER(LANG(?l) IN ({', '.join(map(json.dumps, languages))})) }}")
        for row in result.rows:
            labels.setdefault(row["e"].value, row["l"].value)
    return labels


def _property_labels(kg: KnowledgeGraph, predicates: set[str]) -> dict[str, str]:
    """Labels of predicates, read from the property's own item where the KG keeps it apart (Wikidata)."""
    entities = {p: kg.profile.property_entity_iri(p) for p in predicates}
    labels = fetch_labels(kg, set(entities.values()))
    return {p: labels[e] for p, e in entities.items() if e in labels}


def lookup(kg: KnowledgeGraph, entity: str, *, incoming: bool | None = None, limit: int = 200) -> Neighbourhood:
    """The neighbourhood of ``entity`` (an IRI, prefixed name or one of the profile's short ids such as ``Q42``;
    the neighbourhood's ``id`` is the resolved IRI). ``incoming=None`` reads incoming edges only on
    KGs with a local label index (small, bundled KGs); ``limit`` caps each edge list."""
    iri = kg.profile.resolve_id(entity)
    node = _iri(iri)
    p = kg.profile
    if incoming is None:
        incoming = p.search == "local"
    languages = p.label_languages
    info = kg.query(f"SELECT ?l ?d WHERE {{ OPTIONAL {{ {node} <{p.label_predicate}> ?l FILTER({_lang_ok('?l', languages)}) }} "
                    f"OPTIONAL {{ {node} <{p.description_predicate}> ?d FILTER({_lang_ok('?d', languages)}) }} }} LIMIT 1")
    row = info.rows[0] if info.rows else {}
    hood = Neighbourhood(iri, row["l"].value if "l" in row else "", row["d"].value if "d" in row else "")
    types = kg.query(f"SELECT DISTINCT ?t WHERE {{ {node} <{p.type_predicate}> ?t }} LIMIT {limit}")
    type_ids = [r["t"].value for r in types.rows]
    skip = {p.label_predicate, p.description_predicate, p.type_predicate}
    edges = {}
    for direction, pattern in (("out", f"{node} ?p ?v"), ("in", f"?v ?p {node}")):
        if direction == "in" and not incoming:
            edges[direction] = []
            continue
        result = kg.query(f"SELECT ?p ?v WHERE {{ {pattern} FILTER({_lang_ok('?v', languages)}) }} LIMIT {limit}")
        hood.truncated |= len(result.rows) >= limit or result.truncated
        edges[direction] = [(r["p"].value, r["v"]) for r in result.rows if r["p"].value not in skip]
    iris = set(type_ids) | {v.value for rows in edges.values() for _, v in rows if v.type == "uri"}
    labels = fetch_labels(kg, iris)
    nested = _unnamed_edges(kg, iri, {v.value for _, v in edges["out"] if v.type == "uri"} - set(labels), skip,
                            limit) if p.expand_unnamed else {}
    labels |= fetch_labels(kg, {v.value for rows in nested.values() for _, v in rows if v.type == "uri"})
    prop_labels = _property_labels(kg, {prop for rows in (*edges.values(), *nested.values()) for prop, _ in rows})

    def edge(prop: str, value, direction: Literal["out", "in"], inner: tuple[Edge, ...] = ()) -> Edge:
        return Edge(prop, prop_labels.get(prop, ""), value.value,
                    labels.get(value.value, "") if value.type == "uri" else "", direction, inner)

    hood.types = [(t, labels.get(t, "")) for t in type_ids]
    for direction, rows in edges.items():
        target = hood.outgoing if direction == "out" else hood.incoming
        for prop, v in sorted(rows, key=lambda pair: (pair[0], pair[1].value)):
            inner = tuple(edge(q, w, "out") for q, w in sorted(nested.get(v.value, ()), key=lambda pair: (
                pair[0], pair[1].value))) if direction == "out" else ()
            target.append(edge(prop, v, direction, inner))
    return hood


def _unnamed_edges(kg: KnowledgeGraph, entity: str, nodes: set[str], skip: set[str],
                   limit: int) -> dict[str, list[tuple[str, object]]]:
    """node -> its outgoing ``(property, value)`` pairs, for the unnamed value nodes of a lookup (Freebase CVTs),
    without the edges back to ``entity`` and without type / name / description edges."""
    out: dict[str, list[tuple[str, object]]] = {}
    languages = kg.profile.label_languages
    ordered = sorted(nodes)
    for start in range(0, len(ordered), LABEL_BATCH):
        values = " ".join(_iri(n) for n in ordered[start:start + LABEL_BATCH])
        result = kg.query(f"SELECT ?n ?p ?v WHERE {{ VALUES ?n {{ {values} }} ?n ?p ?v "
                          f"FILTER({_lang_ok('?v', languages)}) }} LIMIT {limit * LABEL_BATCH}")
        for row in result.rows:
            if row["p"].value not in skip and row["v"].value != entity:
                out.setdefault(row["n"].value, []).append((row["p"].value, row["v"]))
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
