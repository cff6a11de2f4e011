"""The declared schema of a small KG as prompt text: its classes and its relations with domain and range.

Large KGs (Wikidata, Freebase) cannot be listed in a prompt; their models discover the schema through tools.
For a KG whose profile sets ``schema_in_prompt``, the listing is read from the KG itself (``rdfs:domain`` /
``rdfs:range`` declarations), so the prompt can never disagree with the data. Lines are sorted: the prompt, and
so the response cache key, is the same on every run.
"""

from __future__ import annotations

from sparqlab.kg.base import KnowledgeGraph
from sparqlab.kg.profiles import RDFS

CLASSES_QUERY = """\
SELECT ?class ?label ?comment WHERE {{
  ?class a <{rdfs_class}> ; <{label}> ?label .
  OPTIONAL {{ ?class <{comment}> ?comment }}
}}"""

RELATIONS_QUERY = """\
SELECT ?label ?domainLabel ?rangeLabel ?comment WHERE {{
  ?relation <{domain}> ?domain ; <{range}> ?range ; <{label}> ?label .
  ?domain <{label}> ?domainLabel . ?range <{label}> ?rangeLabel .
  OPTIONAL {{ ?relation <{comment}> ?comment }}
}}"""


def describe_schema(kg: KnowledgeGraph) -> str:
    """``Classes:`` lines ``- class Name: comment`` and ``Relations:`` lines ``- label: Domain -> Range (comment)``;
    empty when the profile does not ask for the schema in prompts."""
    profile = kg.profile
    if not profile.schema_in_prompt:
        return ""
    names = {"label": profile.label_predicate, "comment": profile.description_predicate,
             "domain": profile.constraints.domain_predicate, "range": profile.constraints.range_predicate,
             "rdfs_class": RDFS + "Class"}
    classes = sorted(
        f"- class {row['label'].value}" + (f": {row['comment'].value}" if "comment" in row else "")
        for row in kg.query(CLASSES_QUERY.format(**names)).rows
    )
    relations = sorted(
        f"- {row['label'].value}: {row['domainLabel'].value} -> {row['rangeLabel'].value}"
        + (f" ({row['comment'].value})" if "comment" in row else "")
        for row in kg.query(RELATIONS_QUERY.format(**names)).rows
    )
    return "\n".join(["Classes:", *classes, "Relations (subject class -> object class):", *relations])


def kg_notes(kg: KnowledgeGraph) -> str:
    """What the prompt says about a KG: the profile's notes on writing queries, then its declared schema."""
    return "\n\n".join(part for part in (kg.profile.prompt_notes.strip(), describe_schema(kg)) if part)
