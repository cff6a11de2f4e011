"""``standin-keyword-rules``: a deterministic, non-LLM baseline for the one-shot prompt on label-based KGs.

It reads what a model would read: the class and relation lists in the system prompt (lines
``- class Name: comment`` and ``- label: Domain -> Range``, as :func:`sparqlab.kg.describe.describe_schema`
writes them) and the question. It answers with a one-hop query: the bracketed topic entity (``[Wind]``,
MetaQA/MCQA style), the relation whose label words share the longest prefixes with the question's words, and a
direction chosen from the classes of the relation's two ends that the words before the entity name mention: a
class named right before the entity ("the film [Alien]") is the entity's own, else the first one named ("which
movies did [Ridley Scott] direct") is the answer's; both directions when neither is named.
Multi-hop questions are beyond it by design. Replies without a usable entity or relation contain no query, which
exercises the re-parse path. At a temperature above 0 it draws among its candidate queries (the next relations
by score, the other directions) with the request's seed, so the repeats of a run differ, reproducibly
(:meth:`PromptRulesStandin.respond`). It is a stand-in: never report its scores, or their spread, as an LLM
result.
"""

from __future__ import annotations

import re

from sparqlab.llm import ChatRequest, StandinModel, register_standin
from sparqlab.llm.standins import sampled
from sparqlab.sparql.tree import quote_literal

_RELATION_LINE = re.compile(r"^\s*-\s*(\w+):\s*(\w+)\s*->\s*(\w+)\b.*$", re.MULTILINE)
_CLASS_LINE = re.compile(r"^\s*-\s*class (\w+):(.*)$", re.MULTILINE)
_TOPIC = re.compile(r"\[([^\]]+)\]")
_WORD = re.compile(r"[a-z]+")
_FUNCTION_WORDS = {"a", "an", "and", "by", "has", "in", "of", "or", "the", "imdb", "is"}
MIN_SHARED_PREFIX = 4


def shared_prefix(a: str, b: str) -> int:
    """Length of the common prefix of two words."""
    length = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        length += 1
    return length


def content_words(label: str) -> list[str]:
    """The lower-case words of ``label`` without function words."""
    return [w for w in _WORD.findall(label.lower()) if w not in _FUNCTION_WORDS]


def matches(word: str, question_word: str) -> bool:
    """A label word and a question word match when they share a long prefix (``direct`` / ``directed``)."""
    return shared_prefix(word, question_word) >= min(MIN_SHARED_PREFIX, len(word))


def relation_score(label: str, question_words: list[str]) -> int:
    """How many content words of ``label`` some question word shares a long prefix with."""
    return sum(any(matches(w, q) for q in question_words) for w in content_words(label))


def class_words(system_prompt: str) -> dict[str, list[str]]:
    """Each listed class's words: its name and the words of its note that are long enough to be specific and do
    not name another class (the Tag note "a user tag attached to films" must not make "films" a Tag word)."""
    notes = dict(_CLASS_LINE.findall(system_prompt))
    words = {}
    for name, note in notes.items():
        others = [other.lower() for other in notes if other != name]
        specific = [
            w for w in content_words(note)
            if len(w) >= MIN_SHARED_PREFIX and not any(matches(o, w) for o in others)
        ]
        words[name] = list(dict.fromkeys([name.lower(), *specific]))
    return words


def answer_side(domain: list[str], range_: list[str], words_before_topic: list[str]) -> str | None:
    """``"subject"`` or ``"object"``: where the answers sit in the relation's triples, or ``None`` when the words
    before the topic entity name neither end's class. A word names a class when it starts with one of the class's
    words ("movies", "directors"; not the verb "directed")."""
    named = [
        (position, side)
        for position, word in enumerate(words_before_topic)
        for side, words in (("subject", domain), ("object", range_))
        if any(word.startswith(w) for w in words)
    ]
    if not named:
        return None
    position, side = named[-1]
    if position == len(words_before_topic) - 1:  # "... the film [Alien]": the topic's class, answers opposite
        return "object" if side == "subject" else "subject"
    return named[0][1]


def keyword_query(system_prompt: str, question: str) -> str | None:
    """The one-hop label-based query for ``question``, or ``None`` when the rules find no entity or relation."""
    return next(iter(keyword_queries(system_prompt, question)), None)


SIDES = ("subject", "object", None)
"""Where the answers sit in a relation's triples (``None``: either)."""


def keyword_queries(system_prompt: str, question: str) -> list[str]:
    """The candidate queries for ``question``, best first (empty when the rules find no entity or relation): the
    relations sharing words with the question by score (ties: first listed), each in the direction the rules
    choose, the best relation's two other directions right after its own."""
    relations = _RELATION_LINE.findall(system_prompt)
    classes = class_words(system_prompt)
    topic = _TOPIC.search(question)
    if not relations or not topic:
        return []
    words = _WORD.findall(question.lower())
    scores = [relation_score(label, words) for label, _, _ in relations]
    ranked = sorted((index for index in range(len(relations)) if scores[index] > 0),
                    key=lambda index: (-scores[index], index))
    candidates = []
    for rank, index in enumerate(ranked):
        label, domain, range_ = relations[index]
        side = answer_side(
            classes.get(domain, [domain.lower()]),
            classes.get(range_, [range_.lower()]),
            _WORD.findall(question[: topic.start()].lower()),
        )
        sides = [side, *(other for other in SIDES if other != side)] if rank == 0 else [side]
        candidates += [_one_hop(topic.group(1), label, chosen) for chosen in sides]
    return candidates


def _one_hop(topic: str, label: str, side: str | None) -> str:
    pattern = {
        "subject": "?uri ?rel ?topic .",  # "which films ... [person]": the answers are subjects
        "object": "?topic ?rel ?uri .",  # "which person ... [film]": the answers are objects
        None: "{ ?topic ?rel ?uri . } UNION { ?uri ?rel ?topic . }",
    }[side]
    return (
        "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
        "SELECT DISTINCT ?label ?uri WHERE {\n"
        f"  ?topic rdfs:label {quote_literal(topic)} .\n"
        f'  ?rel rdfs:label "{label}" .\n'
        f"  {pattern}\n"
        "  ?uri rdfs:label ?label .\n"
        "}"
    )


class PromptRulesStandin(StandinModel):
    """A rule-based stand-in for the one-shot prompt: :meth:`rules` maps the system prompt and the question (the
    text after ``Question:``) to a query, answered in a ```sparql block; ``None`` gives :attr:`no_query`. At a
    temperature above 0 it draws among :meth:`candidates` with the request's seed
    (:func:`sparqlab.llm.standins.sampled`): deterministic given the seed, a stand-in's draw, not an LLM's."""

    no_query = "I could not find a query for this question."

    def rules(self, system_prompt: str, question: str) -> str | None:
        raise NotImplementedError

    def candidates(self, system_prompt: str, question: str) -> list[str]:
        """The queries the rules consider, best first (by default the one :meth:`rules` gives)."""
        query = self.rules(system_prompt, question)
        return [] if query is None else [query]

    def respond(self, request: ChatRequest) -> str:
        system = next((content for role, content in request.messages if role == "system"), "")
        queries = self.candidates(system, request.last_user_message.removeprefix("Question:").strip())
        return f"```sparql\n{sampled(queries, request)}\n```" if queries else self.no_query


@register_standin("standin-keyword-rules")
class KeywordRulesStandin(PromptRulesStandin):
    """Keyword-matching one-hop parser behind the chat interface (see the module docstring)."""

    name = "standin-keyword-rules"
    no_query = "I could not find a relation and an entity for this question."

    def rules(self, system_prompt: str, question: str) -> str | None:
        return keyword_query(system_prompt, question)

    def candidates(self, system_prompt: str, question: str) -> list[str]:
        return keyword_queries(system_prompt, question)
