"""``standin-schema-rules``: a deterministic, non-LLM baseline for the one-shot prompt on IRI-keyed KGs (ck25).

It reads what a model reads and nothing else: the question and the schema the system prompt lists
(:func:`sparqlab.kg.describe.describe_schema`: ``- class Label (pv:Class)`` and ``- label (pv:prop): Domain ->
Range (comment)``), which is read from the KG itself. No benchmark question or gold query is involved. It answers:

* the **relation** whose label words share long prefixes with the question's words
  (:func:`sparqlab.methods.direct.keyword_rules.relation_score`, ties: first listed); the **class** likewise;
* the **entity**: the first run of capitalised words after the question's first word (titles such as "Ms."
  dropped), matched against labels by case-insensitive containment, since the prompt names no instances;
* a query shape from the question's opening: ``ASK`` for yes/no questions, ``COUNT`` for "how many", else a
  SELECT of ``?result``: the entity's values of the relation (either direction), or the class's instances
  (with the relation when one matched).

Replies without a usable relation, class or entity contain no query. It is a stand-in: never report its scores
as an LLM result.
"""

from __future__ import annotations

import re

from sparqlab.llm import register_standin
from sparqlab.methods.direct.keyword_rules import PromptRulesStandin, relation_score
from sparqlab.sparql.tree import quote_literal

_IRI = r"(?:[A-Za-z][\w.-]*:[\w-]+|<[^<>\s]+>)"
_RELATION = re.compile(rf"^- (.+?) \(({_IRI})\): (.+?) -> (.+?)(?: \((.*)\))?$", re.MULTILINE)
_CLASS = re.compile(rf"^- class (.+?) \(({_IRI})\)(?::.*)?$", re.MULTILINE)
_CAPITALISED = re.compile(r"(?:[A-Z][\w'.-]*\s?)+")
_WORD = re.compile(r"[a-z]+")
_TITLES = {"ms", "mr", "mrs", "dr", "prof"}
_YES_NO = ("is ", "are ", "does ", "do ", "can ", "has ", "have ", "was ", "were ")


def mentioned_name(question: str, class_labels: set[str]) -> str | None:
    """The first capitalised phrase after the question's first word, without titles or class names."""
    for match in _CAPITALISED.finditer(question, pos=question.find(" ") + 1 if " " in question else 0):
        words = [w.strip(".,?!'") for w in match.group(0).split()]
        words = [w for w in words if w and w.lower().rstrip(".") not in _TITLES and w.lower() not in class_labels]
        if words:
            return " ".join(words)
    return None


def best_by_words(labels: list[str], words: list[str]) -> int | None:
    """Index of the label sharing most words with the question (ties: first), ``None`` when none shares one."""
    scores = [relation_score(label, words) for label in labels]
    if not scores or max(scores) == 0:
        return None
    return max(range(len(labels)), key=lambda index: (scores[index], -index))


def schema_query(system_prompt: str, question: str) -> str | None:
    """The query for ``question`` from the prompt's schema (see the module docstring), or ``None``."""
    relations = _RELATION.findall(system_prompt)
    classes = _CLASS.findall(system_prompt)
    words = _WORD.findall(question.lower())
    relation = best_by_words([label for label, *_ in relations], words)
    class_index = best_by_words([label for label, _ in classes], words)
    name = mentioned_name(question, {label.lower() for label, _ in classes})
    lowered = question.strip().lower()
    prop = relations[relation][1] if relation is not None else None
    cls = classes[class_index][1] if class_index is not None else None
    if name is not None and prop is not None:
        match = (f"?entity <http://www.w3.org/2000/01/rdf-schema#label> ?name .\n"
                 f"  FILTER(CONTAINS(LCASE(STR(?name)), {quote_literal(name.lower())}))\n")
        if lowered.startswith(_YES_NO):
            return f"ASK {{\n  {match}  ?entity {prop} ?value .\n}}"
        return (f"SELECT DISTINCT ?result WHERE {{\n  {match}"
                f"  {{ ?entity {prop} ?result }} UNION {{ ?result {prop} ?entity }}\n}}")
    if cls is None:
        return None
    body = f"?result a {cls} ." + (f" ?result {prop} ?value ." if prop is not None else "")
    if lowered.startswith("how many"):
        return f"SELECT (COUNT(DISTINCT ?result) AS ?count) WHERE {{ {body} }}"
    return f"SELECT DISTINCT ?result WHERE {{ {body} }}"


@register_standin("standin-schema-rules")
class SchemaRulesStandin(PromptRulesStandin):
    """Schema-reading one-hop parser behind the chat interface (see the module docstring)."""

    name = "standin-schema-rules"
    no_query = "I could not match the question to the schema's relations, classes or a named entity."

    def rules(self, system_prompt: str, question: str) -> str | None:
        return schema_query(system_prompt, question)
