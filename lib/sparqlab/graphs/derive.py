"""A KG profile derived from the KG itself, for an RDF file, a store folder or an endpoint no profile describes.

What is read (bounded queries, outside the query cache so that it holds only what methods asked):

- prefixes: the ones the file declares (``@prefix`` / ``PREFIX`` lines, read by the parser), over the standard four;
- the label and description predicates: the most used of the common ones (:data:`LABEL_PREDICATES`,
  :data:`DESCRIPTION_PREDICATES`); ``rdfs:label`` / ``rdfs:comment`` when none is used;
- the alias predicates: those of :data:`ALIAS_PREDICATES` the data uses (``skos:altLabel``), which the local
  search index matches like labels;
- the RDFS / OWL schema: classes (declared, or used as a type or in ``rdfs:subClassOf``) with their superclasses,
  and properties with their ``rdfs:domain`` / ``rdfs:range``;
- from these: the notes every prompt shows about the KG (its prefixes, how to name an entity, and the schema with
  its class hierarchy, up to :data:`MAX_SCHEMA_LINES` lines), its id shapes (classes, properties and other
  resources under each declared prefix) and an example id.

A YAML file beside the data refines the result (:func:`refinement_path`: ``university.ttl`` →
``university.kg.yaml``; the keys of :data:`REFINABLE`, documented in docs/adding-a-kg.md). Registered on import as
the KG layer's :data:`~sparqlab.kg.profiles.PROFILE_DERIVERS`, which ``open_kg`` asks for a file, folder or URL.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from sparqlab.kg.base import KnowledgeGraph
from sparqlab.kg.errors import KGError
from sparqlab.kg.profiles import (
    PROFILE_DERIVERS,
    ConstraintScheme,
    IdForm,
    KGProfile,
    PromptConventions,
)
from sparqlab.kg.vocab import OWL, RDF, RDFS, SCHEMA, STANDARD_PREFIXES

SKOS = "http://www.w3.org/2004/02/skos/core#"
DCTERMS = "http://purl.org/dc/terms/"
FOAF = "http://xmlns.com/foaf/0.1/"

LABEL_PREDICATES = (RDFS + "label", SKOS + "prefLabel", SCHEMA + "name", FOAF + "name", DCTERMS + "title")
DESCRIPTION_PREDICATES = (RDFS + "comment", SKOS + "definition", SCHEMA + "description", DCTERMS + "description")
ALIAS_PREDICATES = (SKOS + "altLabel",)
CLASS_TYPES = (RDFS + "Class", OWL + "Class")
PROPERTY_TYPES = (RDF + "Property", OWL + "ObjectProperty", OWL + "DatatypeProperty")

MAX_SCHEMA_LINES = 200
"""Classes and properties listed in the notes at most (each); a larger schema is cut with a count of the rest."""

QUERY_TIMEOUT_S = 20.0
LOCAL_NAME = r"[A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_\-])?"
"""A local name that can be written after ``prefix:`` in SPARQL without escapes."""

REFINABLE = ("name", "prefixes", "type_predicate", "label_predicate", "description_predicate", "alias_predicates",
             "answer_key", "prompt_notes", "notes", "topic", "relation_word", "query_rules", "answer_types",
             "train_dataset")
"""Keys of a refinement file (docs/adding-a-kg.md)."""


def refinement_path(data: str | Path) -> Path:
    """Where the refinement of the KG in ``data`` (a file or a store folder) lives: beside it, its name with the
    suffix ``.kg.yaml`` (``university.ttl`` → ``university.kg.yaml``)."""
    data = Path(data)
    return data.with_name(data.stem + ".kg.yaml") if data.suffix else data.with_name(data.name + ".kg.yaml")


def read_refinement(path: str | Path) -> dict[str, Any]:
    """The refinement file's keys (none when it does not exist); unknown keys are an error naming them."""

    from sparqlab.core.yaml_loader import load_yaml_file

    path = Path(path)
    if not path.is_file():
        return {}
    data = load_yaml_file(path) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of profile keys, got {type(data).__name__}")
    unknown = sorted(set(data) - set(REFINABLE))
    if unknown:
        hints = []
        for key in unknown:
            close = difflib.get_close_matches(str(key), REFINABLE, n=1)
            hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise ValueError(f"{path}: unknown keys {', '.join(hints)}; known: {', '.join(REFINABLE)}")
    return data


def derive_profile(kg: KnowledgeGraph, name: str, *, prefixes: dict[str, str] | None = None,
                   refinement: dict[str, Any] | None = None) -> KGProfile:
    """The profile of ``kg`` (opened with any profile whose queries it answers, e.g. a generic one) read from its
    data (module docstring); ``prefixes`` are the ones its file declares, ``refinement`` a refinement file's keys."""
    refinement = dict(refinement or {})
    declared = {**STANDARD_PREFIXES, **(prefixes or {}), **dict(refinement.get("prefixes") or {})}
    expand = _expander(declared)
    label = expand(refinement.get("label_predicate")) or _most_used(kg, LABEL_PREDICATES) or LABEL_PREDICATES[0]
    description = (expand(refinement.get("description_predicate"))
                   or _most_used(kg, DESCRIPTION_PREDICATES) or DESCRIPTION_PREDICATES[0])
    type_predicate = expand(refinement.get("type_predicate")) or RDF + "type"
    aliases = (tuple(expand(str(p)) for p in refinement["alias_predicates"]) if "alias_predicates" in refinement
               else _used(kg, ALIAS_PREDICATES))
    schema = Schema.read(kg, label, description, type_predicate)
    base = KGProfile(
        name=str(refinement.get("name") or name),
        type_predicate=type_predicate,
        label_predicate=label,
        description_predicate=description,
        prefixes=declared,
        entity_id_pattern=r"^\S+$",
        entity_id_example="<http://example.org/entity>",
        property_id_pattern=r"^\S+$",
        constraints=ConstraintScheme("rdfs", domain_predicate=RDFS + "domain", range_predicate=RDFS + "range"),
        answer_key=refinement.get("answer_key", "iri"),
        property_types=PROPERTY_TYPES,
        class_types=CLASS_TYPES,
        alias_predicates=aliases,
        train_dataset=refinement.get("train_dataset"),
    )
    example = _example_entity(kg, schema, label)
    shapes = _id_shapes(declared, schema)
    base = dataclasses.replace(base, entity_id_example=base.shorten(example) if example else base.entity_id_example,
                               id_shapes=shapes)
    notes = refinement.get("prompt_notes") or _notes(base, schema)
    if refinement.get("notes"):
        notes = notes.rstrip() + "\n\n" + str(refinement["notes"]).strip()
    answer_types = tuple((str(label_), base.shorten(expand(str(iri)) or str(iri)))
                         for label_, iri in refinement.get("answer_types") or ())
    conventions = PromptConventions(topic=str(refinement.get("topic") or ""),
                                    relation_word=str(refinement.get("relation_word") or "properties"),
                                    query_rules=str(refinement.get("query_rules") or ""),
                                    answer_types=answer_types)
    return dataclasses.replace(base, prompt_notes=notes, conventions=conventions)


def _expander(prefixes: dict[str, str]):
    def expand(text: Any) -> str | None:
        if not text:
            return None
        text = str(text).strip()
        if text.startswith("<") and text.endswith(">"):
            return text[1:-1]
        prefix, sep, local = text.partition(":")
        if sep and prefix in prefixes and not local.startswith("//"):
            return prefixes[prefix] + local
        return text

    return expand


def _rows(kg: KnowledgeGraph, sparql: str) -> list[dict[str, str]]:
    """The rows of a trusted schema query as ``{var: value}``; none when the KG refuses the query or times out (an
    endpoint too large or too slow to be read keeps the generic parts of its profile). An endpoint that cannot be
    reached or keeps throttling raises :class:`~sparqlab.kg.errors.EndpointUnavailable` after its retries: the
    KG is not opened with a profile that was never read."""
    try:
        result = kg.query(sparql, timeout_s=QUERY_TIMEOUT_S, max_rows=50_000, use_cache=False)
    except KGError:
        return []
    return [{var: term.value for var, term in row.items()} for row in result.rows]


def _counts(kg: KnowledgeGraph, candidates: tuple[str, ...]) -> dict[str, int]:
    """How many triples use each of the ``candidates`` predicates (the unused ones left out)."""
    values = " ".join(f"<{c}>" for c in candidates)
    rows = _rows(kg, f"SELECT ?p (COUNT(*) AS ?n) WHERE {{ VALUES ?p {{ {values} }} ?s ?p ?o }} GROUP BY ?p")
    counts = {row["p"]: int(row.get("n", 0)) for row in rows if "p" in row}
    return {c: counts[c] for c in candidates if counts.get(c)}


def _most_used(kg: KnowledgeGraph, candidates: tuple[str, ...]) -> str | None:
    counts = _counts(kg, candidates)
    return max(counts, key=lambda c: (counts[c], -candidates.index(c))) if counts else None


def _used(kg: KnowledgeGraph, candidates: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(_counts(kg, candidates))


@dataclasses.dataclass
class Schema:
    """The RDFS / OWL schema a KG carries: class -> (label, comment, superclasses); property -> (label, comment,
    domains, ranges)."""

    classes: dict[str, tuple[str, str, tuple[str, ...]]]
    properties: dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...]]]

    @classmethod
    def read(cls, kg: KnowledgeGraph, label: str, description: str, type_predicate: str) -> Schema:
        class_types = " ".join(f"<{t}>" for t in CLASS_TYPES)
        property_types = " ".join(f"<{t}>" for t in PROPERTY_TYPES)
        class_rows = _rows(kg, f"""SELECT DISTINCT ?c ?super ?label ?comment WHERE {{
  {{ VALUES ?t {{ {class_types} }} ?c a ?t }} UNION {{ ?c <{RDFS}subClassOf> ?x }} UNION {{ ?x <{RDFS}subClassOf> ?c }}
  UNION {{ ?x <{type_predicate}> ?c }}
  FILTER(isIRI(?c))
  OPTIONAL {{ ?c <{RDFS}subClassOf> ?super FILTER(isIRI(?super)) }}
  OPTIONAL {{ ?c <{label}> ?label }} OPTIONAL {{ ?c <{description}> ?comment }}
}} LIMIT 20000""")
        property_rows = _rows(kg, f"""SELECT DISTINCT ?p ?domain ?range ?label ?comment WHERE {{
  {{ VALUES ?t {{ {property_types} }} ?p a ?t }} UNION {{ ?p <{RDFS}domain> ?x }} UNION {{ ?p <{RDFS}range> ?x }}
  FILTER(isIRI(?p))
  OPTIONAL {{ ?p <{RDFS}domain> ?domain }} OPTIONAL {{ ?p <{RDFS}range> ?range }}
  OPTIONAL {{ ?p <{label}> ?label }} OPTIONAL {{ ?p <{description}> ?comment }}
}} LIMIT 20000""")
        vocabulary = (RDF, RDFS, OWL)
        classes: dict[str, list] = {}
        supers: dict[str, set[str]] = defaultdict(set)
        for row in class_rows:
            if row["c"].startswith(vocabulary):
                continue
            entry = classes.setdefault(row["c"], [row.get("label", ""), row.get("comment", "")])
            entry[0], entry[1] = entry[0] or row.get("label", ""), entry[1] or row.get("comment", "")
            if row.get("super") and row["super"] != row["c"]:
                supers[row["c"]].add(row["super"])
        properties: dict[str, list] = {}
        for row in property_rows:
            if row["p"].startswith(vocabulary):
                continue
            entry = properties.setdefault(row["p"], [row.get("label", ""), row.get("comment", ""), set(), set()])
            entry[0], entry[1] = entry[0] or row.get("label", ""), entry[1] or row.get("comment", "")
            if row.get("domain"):
                entry[2].add(row["domain"])
            if row.get("range"):
                entry[3].add(row["range"])
        return cls({c: (name, text, tuple(sorted(supers[c]))) for c, (name, text) in sorted(classes.items())},
                   {p: (name, text, tuple(sorted(dom)), tuple(sorted(rng)))
                    for p, (name, text, dom, rng) in sorted(properties.items())})


def _example_entity(kg: KnowledgeGraph, schema: Schema, label: str) -> str | None:
    """A labelled resource that is neither a class nor a property, for the profile's example id."""
    for row in _rows(kg, f"SELECT ?x WHERE {{ ?x <{label}> ?l FILTER(isIRI(?x)) }} ORDER BY ?x LIMIT 200"):
        if row["x"] not in schema.classes and row["x"] not in schema.properties:
            return row["x"]
    return None


def _id_shapes(prefixes: dict[str, str], schema: Schema) -> tuple[IdForm, ...]:
    """Per declared (non-standard) prefix: its classes, its properties and any other resource written
    ``prefix:local``, in that order (a shape's kind is decided by the first that matches)."""
    shapes: list[IdForm] = []
    own = [(p, ns) for p, ns in prefixes.items() if p not in STANDARD_PREFIXES and ns not in STANDARD_PREFIXES.values()]
    for kind, members in (("class", schema.classes), ("property", schema.properties)):
        for prefix, namespace in own:
            locals_ = sorted(iri[len(namespace):] for iri in members if iri.startswith(namespace)
                             and re.fullmatch(LOCAL_NAME, iri[len(namespace):]))
            if locals_:
                shapes.append(IdForm(kind, "|".join(map(re.escape, locals_)), namespace, locals_[0], prefix))
    shapes += [IdForm("entity", LOCAL_NAME, namespace, "", prefix) for prefix, namespace in own]
    return tuple(shapes)


def _notes(profile: KGProfile, schema: Schema) -> str:
    """The notes prompts show about a derived KG: its prefixes and labels, then its schema with the class
    hierarchy (sorted, so the prompt and the response cache key are the same on every run)."""
    own = [f"{prefix}: <{iri}>" for prefix, iri in profile.prefixes.items() if prefix not in STANDARD_PREFIXES]
    label = profile.shorten(profile.label_predicate)
    parts = []
    if own:
        parts.append(f"The prefixes {', '.join(own)} are predefined (with rdf:, rdfs:, owl: and xsd:).")
    parts.append(f"Entities carry their names as {label}; find an entity by its name "
                 f"(`?x {label} \"Name\"`) or look its IRI up, and select the answer entities' IRIs "
                 "(or the literal values the question asks for).")
    text = " ".join(parts)

    def name(iri: str) -> str:
        entry = schema.classes.get(iri)
        short = profile.shorten(iri)
        return f"{entry[0]} ({short})" if entry and entry[0] else short

    classes = [f"- {name(c)}" + (f", subclass of {', '.join(map(name, supers))}" if supers else "")
               + (f": {comment}" if comment else "") for c, (_, comment, supers) in schema.classes.items()]
    properties = []
    for p, (plabel, comment, domains, ranges) in schema.properties.items():
        head = f"{plabel} ({profile.shorten(p)})" if plabel else profile.shorten(p)
        ends = f": {', '.join(map(name, domains)) or '?'} -> {', '.join(map(name, ranges)) or '?'}"
        properties.append(f"- {head}{ends}" + (f" ({comment})" if comment else ""))
    for title, lines in (("Classes:", classes), ("Properties (subject class -> object class):", properties)):
        if lines:
            shown = lines[:MAX_SCHEMA_LINES]
            more = [f"- ... and {len(lines) - len(shown)} more"] if len(lines) > len(shown) else []
            text += "\n\n" + "\n".join([title, *shown, *more])
    return text


def profile_from_data(kg: KnowledgeGraph, name: str, prefixes: dict[str, str], data: Path | None) -> KGProfile:
    """:func:`derive_profile` of ``kg``, refined by the YAML file beside ``data`` (its file or store folder) when
    there is one."""
    refinement = read_refinement(refinement_path(data)) if data is not None else {}
    return derive_profile(kg, name, prefixes=prefixes, refinement=refinement)


PROFILE_DERIVERS.register("data", profile_from_data)
