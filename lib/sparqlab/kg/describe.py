"""The declared schema of a small KG as prompt text: its classes and its relations with domain and range.

Large KGs (Wikidata, Freebase) cannot be listed in a prompt; their models discover the schema through tools.
For a KG whose profile sets ``schema_in_prompt``, the listing is read from the KG itself (``rdfs:domain`` /
``rdfs:range`` declarations), so the prompt can never disagree with the data. Lines are sorted: the prompt, and
so the response cache key, is the same on every run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sparqlab.kg.base import KnowledgeGraph
from sparqlab.kg.vocab import STANDARD_PREFIXES

if TYPE_CHECKING:
    from sparqlab.kg.profiles import KGProfile

CLASSES_QUERY = """\
SELECT DISTINCT ?class ?label ?comment WHERE {{
  VALUES ?type {{ {class_types} }}
  ?class a ?type ; <{label}> ?label .
  OPTIONAL {{ ?class <{comment}> ?comment }}
}}"""

RELATIONS_QUERY = """\
SELECT ?relation ?label ?domain ?domainLabel ?range ?rangeLabel ?comment WHERE {{
  ?relation <{domain}> ?domain ; <{range}> ?range ; <{label}> ?label .
  OPTIONAL {{ ?domain <{label}> ?domainLabel }} OPTIONAL {{ ?range <{label}> ?rangeLabel }}
  OPTIONAL {{ ?relation <{comment}> ?comment }}
}}"""


def describe_schema(kg: KnowledgeGraph) -> str:
    """``Classes:`` lines ``- class Name: comment`` and ``Relations:`` lines ``- label: Domain -> Range (comment)``;
    empty when the profile does not ask for the schema in prompts.

    On a KG whose answers are IRIs (``answer_key="iri"``, e.g. ck25) queries must name classes and relations by
    IRI, so each line carries it after the label, shortened by the profile's prefixes (``- member of
    (pv:memberOf): Agent -> Department (…)``), and an end without a label (a datatype such as ``xsd:string``)
    is shown by its shortened IRI. A label-based KG (movies) keeps the plain ``- label: Domain -> Range`` lines.
    """
    profile = kg.profile
    if not profile.schema_in_prompt:
        return ""
    with_iris = profile.answer_key == "iri"
    names = {"label": profile.label_predicate, "comment": profile.description_predicate,
             "domain": profile.constraints.domain_predicate, "range": profile.constraints.range_predicate,
             "class_types": " ".join(f"<{t}>" for t in profile.class_types)}

    def named(row, var: str) -> str:
        label = row[f"{var}Label"].value if f"{var}Label" in row else None
        if with_iris or label is None:
            return profile.shorten(row[var].value) if label is None else label
        return label

    def iri(row, var: str) -> str:
        return f" ({profile.shorten(row[var].value)})" if with_iris else ""

    classes = sorted({
        f"- class {row['label'].value}{iri(row, 'class')}" + (f": {row['comment'].value}" if "comment" in row else "")
        for row in kg.query(CLASSES_QUERY.format(**names)).rows
    })
    relations = sorted(
        f"- {row['label'].value}{iri(row, 'relation')}: {named(row, 'domain')} -> {named(row, 'range')}"
        + (f" ({row['comment'].value})" if "comment" in row else "")
        for row in kg.query(RELATIONS_QUERY.format(**names)).rows
        if with_iris or ("domainLabel" in row and "rangeLabel" in row)
    )
    return "\n".join(["Classes:", *classes, "Relations (subject class -> object class):", *relations])


def kg_notes(kg: KnowledgeGraph) -> str:
    """What the prompt says about a KG: the profile's notes on writing queries, then its declared schema."""
    return "\n\n".join(part for part in (kg.profile.prompt_notes.strip(), describe_schema(kg)) if part)


def query_rules(profile: KGProfile) -> str:
    """How a query over the KG names topic entities, relations and answers: the profile's own rules
    (``conventions.query_rules``), else rules read off the profile (its label predicate, predefined prefixes and
    answer key), so that no KG is described with another KG's conventions."""
    if profile.conventions.query_rules.strip():
        return profile.conventions.query_rules.strip()
    label = profile.shorten(profile.label_predicate)
    own = [f"{prefix}: <{iri}>" for prefix, iri in profile.prefixes.items() if prefix not in STANDARD_PREFIXES]
    rules = [f"A name in square brackets, such as [Name], is a topic entity: match it by its {label} with the exact "
             "text inside the brackets, and use only identifiers you are certain of."]
    if own:
        rules.append(f"The prefixes {', '.join(own)} are predefined.")
    rules.append("Return the answer entities with their labels." if profile.answer_key == "label"
                 else "Return the answer entities' IRIs (or the literal values the question asks for).")
    return " ".join(rules)
