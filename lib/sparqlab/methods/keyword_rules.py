"""``standin-keyword-rules``: a deterministic, non-LLM baseline for the one-shot prompt on label-based KGs.

It reads what a model would read: the class and relation lists in the system prompt (lines
``- class Name: comment`` and ``- label: Domain -> Range``, as :func:`sparqlab.kg.describe.describe_schema`
writes them) and the question. It answers with a one-hop query: the bracketed topic entity (``[Wind]``,
MetaQA/MCQA style), the relation whose label words share the longest prefixes with the question's words, and a
direction chosen by the class that the words before the entity name mention (both directions when neither).
Multi-hop questions are beyond it by design. Replies without a usable entity or relation contain no query, which
exercises the re-parse path. It is a stand-in: never report its scores as an LLM result.
"""

from __future__ import annotations

import re

from sparqlab.kg.results import quote_literal
from sparqlab.llm import ChatRequest, StandinModel, register_standin

_RELATION_LINE = re.compile(r"^\s*-\s*(\w+):\s*(\w+)\s*->\s*(\w+)\b.*$", re.MULTILINE)
_CLASS_LINE = re.compile(r"^\s*-\s*class (\w+):\s*([\w ,]*)$", re.MULTILINE)
_TOPIC = re.compile(r"\[([^\]]+)\]")
_WORD = re.compile(r"[a-z]+")
_FUNCTION_WORDS = {"by", "has", "in", "of", "the", "imdb", "is"}
MIN_SHARED_PREFIX = 4


def shared_prefix(a: str, b: str) -> int:
    """Length of the common prefix of two words."""
    length = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        length += 1
    return length


def relation_score(label: str, question_words: list[str]) -> int:
    """How many content words of ``label`` (a relation label or a class with its synonyms) some question word
    shares a long prefix with."""
    words = [w for w in _WORD.findall(label.lower()) if w not in _FUNCTION_WORDS]
    return sum(any(shared_prefix(w, q) >= min(MIN_SHARED_PREFIX, len(w)) for q in question_words) for w in words)


def keyword_query(system_prompt: str, question: str) -> str | None:
    """The one-hop label-based query for ``question``, or ``None`` when the rules find no entity or relation."""
    relations = _RELATION_LINE.findall(system_prompt)
    class_words = {name: f"{name} {synonyms}" for name, synonyms in _CLASS_LINE.findall(system_prompt)}
    topic = _TOPIC.search(question)
    if not relations or not topic:
        return None
    words = _WORD.findall(question.lower())
    scores = [relation_score(label, words) for label, _, _ in relations]
    best = max(range(len(relations)), key=lambda index: (scores[index], -index))  # ties: first listed
    if scores[best] == 0:
        return None
    label, domain, range_ = relations[best]
    words_before_topic = _WORD.findall(question[: topic.start()].lower())
    if relation_score(class_words.get(domain, domain), words_before_topic):
        pattern = "?uri ?rel ?topic ."  # "which films ... [person]": the answers are subjects
    elif relation_score(class_words.get(range_, range_), words_before_topic):
        pattern = "?topic ?rel ?uri ."  # "which person ... [film]": the answers are objects
    else:
        pattern = "{ ?topic ?rel ?uri . } UNION { ?uri ?rel ?topic . }"
    return (
        "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
        "SELECT DISTINCT ?label ?uri WHERE {\n"
        f"  ?topic rdfs:label {quote_literal(topic.group(1))} .\n"
        f'  ?rel rdfs:label "{label}" .\n'
        f"  {pattern}\n"
        "  ?uri rdfs:label ?label .\n"
        "}"
    )


@register_standin("standin-keyword-rules")
class KeywordRulesStandin(StandinModel):
    """Keyword-matching one-hop parser behind the chat interface (see the module docstring)."""

    name = "standin-keyword-rules"

    def respond(self, request: ChatRequest) -> str:
        system = next((content for role, content in request.messages if role == "system"), "")
        question = request.last_user_message.removeprefix("Question:").strip()
        query = keyword_query(system, question)
        if query is None:
            return "I could not find a relation and an entity for this question."
        return f"```sparql\n{query}\n```"
