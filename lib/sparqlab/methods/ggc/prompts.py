"""GGC prompt templates (kept as data): generator and corrector. What they say about the KG comes from its profile
(:class:`~sparqlab.kg.profiles.PromptConventions`: the topic of its questions, what it calls its relations, and
its rules for writing queries, e.g. the label-based movie KG of the paper's MCQA setting, Wikidata as in the
paper's appendix B, Freebase with its MID, dotted-relation and CVT conventions), then its notes and schema.

Written for instruction-tuned chat models served by vLLM (gpt-oss-120b, Llama-3.1-70B, Llama-3.2-3B — the
paper fine-tunes the last one on exactly these instruction/response pairs, see :mod:`sparqlab.methods.ggc.data`). The
user turn starts with ``Question:`` and a generated query travels in a ```` ```sparql ```` block, which the
stand-ins read the way a model would.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from sparqlab.kg.describe import query_rules
from sparqlab.platform.prompts import PromptTemplate, prompt_table

if TYPE_CHECKING:
    from sparqlab.kg.profiles import KGProfile, PromptConventions

_REPLY = "Reply with exactly one query inside a ```sparql fenced block and nothing else."

GENERATOR_USER = PromptTemplate("generator_user", "Question: {question}")

CORRECTOR_USER = PromptTemplate("corrector_user", """\
Question: {question}

Generated query:
```sparql
{sparql}
```{feedback}""")

CORRECTOR_FEEDBACK = PromptTemplate("corrector_feedback", "\n\nExecution feedback: {feedback}.")

_TAIL = """

About this knowledge graph:
{kg_notes}

""" + _REPLY


GENERATOR = PromptTemplate("generator", "You translate questions{topic} into SPARQL 1.1 queries over the {kg_name} "
                           "knowledge graph.\n\n{query_rules}" + _TAIL)
"""The generator's system prompt: task line, the KG's rules for queries, its notes, reply format."""

CORRECTOR = PromptTemplate("corrector", """\
You check and repair SPARQL 1.1 queries over the {kg_name} knowledge graph. You are only called when a gate \
has judged that a generated query probably answers its question wrongly.

Compare the query with the question: the topic entities, the {relation_word}, every constraint, which variable \
holds the answer and the query form. Change what does not match and keep every part that already does. If you \
find nothing you are confident about, return the generated query unchanged. Do not change what the question asks \
and do not add facts it does not state.

{query_rules}""" + _TAIL)
"""The corrector's system prompt (paper, section 3.5: keep what matches, change what does not)."""

PROMPTS = prompt_table(GENERATOR, CORRECTOR, GENERATOR_USER, CORRECTOR_USER, CORRECTOR_FEEDBACK)
"""Every GGC prompt by name; ``generator`` / ``corrector`` are system prompts."""


def conventions_for(profile: KGProfile, variant: str | None = None) -> PromptConventions:
    """The prompt conventions of the KG ``profile`` (``variant`` ``None`` or its own name), or of the registered
    profile named ``variant`` (a mirror opened with a generic profile written like Wikidata); rules for queries
    are derived from the profile when it states none."""
    if variant not in (None, profile.name):
        from sparqlab.kg.profiles import get_profile

        profile = get_profile(variant)
    return dataclasses.replace(profile.conventions, query_rules=query_rules(profile))




def generator_messages(question: str, kg_name: str, kg_notes: str, conventions: PromptConventions) -> list[dict]:
    """System + user turn asking for the initial query s(0) (paper, section 3.3); ``conventions`` from
    :func:`conventions_for`."""
    topic = f" about {conventions.topic}" if conventions.topic else ""
    system = GENERATOR.render(kg_name=kg_name, kg_notes=kg_notes, topic=topic, query_rules=conventions.query_rules)
    return [{"role": "system", "content": system},
            {"role": "user", "content": GENERATOR_USER.render(question=question)}]


def corrector_messages(question: str, sparql: str, kg_name: str, kg_notes: str, conventions: PromptConventions,
                       feedback: str | None = None) -> list[dict]:
    """System + user turn asking for s(c) = C(q, s(0)) (paper, section 3.5); ``feedback`` is the KG execution
    feedback line (:meth:`sparqlab.methods.ggc.feedback.KGFeedback.describe`) or ``None``."""
    system = CORRECTOR.render(kg_name=kg_name, kg_notes=kg_notes, relation_word=conventions.relation_word,
                              query_rules=conventions.query_rules)
    extra = CORRECTOR_FEEDBACK.render(feedback=feedback) if feedback else ""
    return [{"role": "system", "content": system},
            {"role": "user", "content": CORRECTOR_USER.render(question=question, sparql=sparql.strip(),
                                                             feedback=extra)}]
