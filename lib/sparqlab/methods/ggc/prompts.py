"""GGC prompt templates (kept as data): generator and corrector. What they say about the KG comes from its profile
(:class:`~sparqlab.kg.profiles.PromptConventions`: the topic of its questions, what it calls its relations, and
its rules for writing queries, e.g. the label-based movie KG of the paper's MCQA setting, Wikidata as in the
paper's appendix B, Freebase with its MID, dotted-relation and CVT conventions), then its notes and schema.

By default the system prompts have the parts of the paper's (appendix B, Tables 7–8): a task line, the KG
named, topic entities in square brackets, the prefixes to use, and for the corrector "only output the final
query". Three additions of the workbench are options (:class:`PromptAdditions`, off by default): the KG's own
query conventions (``kg_rules``: label matching, answer shape), the KG's notes and schema listing
(``schema_listing``), and a required ```` ```sparql ```` fence around the reply (``reply_fence``; the training
target is then fenced too, so the Alpaca ``output`` and the chat target always agree).

Written for instruction-tuned chat models served by vLLM (gpt-oss-120b, Llama-3.1-70B, Llama-3.2-3B — the
paper fine-tunes the last one on exactly these instruction/response pairs, see :mod:`sparqlab.methods.ggc.data`). The
user turn starts with ``Question:`` and a generated query travels in a ```` ```sparql ```` block, which the
stand-ins read the way a model would.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sparqlab.kg.describe import query_rules
from sparqlab.kg.vocab import STANDARD_PREFIXES
from sparqlab.platform import MethodConfig
from sparqlab.platform.prompts import PromptTemplate, prompt_table

if TYPE_CHECKING:
    from sparqlab.kg.profiles import KGProfile, PromptConventions


GENERATOR_USER = PromptTemplate("generator_user", "Question: {question}")

CORRECTOR_USER = PromptTemplate("corrector_user", """\
Question: {question}

Generated query:
```sparql
{sparql}
```{feedback}""")

CORRECTOR_FEEDBACK = PromptTemplate("corrector_feedback", "\n\nExecution feedback: {feedback}.")


@dataclass(frozen=True)
class PromptAdditions(MethodConfig):
    """What GGC's prompts say beyond the paper's (appendix B); nested in GGC's config as ``prompt``.

    - ``kg_rules``: the KG profile's query conventions (``query_rules``: label matching, the answer's shape)
      instead of the paper's "topic entity + prefixes" paragraph.
    - ``schema_listing``: append the KG's notes and schema listing ("About this knowledge graph").
    - ``reply_fence``: ask for the query inside a sparql code fence (the paper: "only output the final SPARQL
      query"); the training target (the Alpaca output and the chat assistant turn) is fenced exactly then.
    """

    kg_rules: bool = False
    schema_listing: bool = False
    reply_fence: bool = False


PAPER_PROMPTS = PromptAdditions()
"""The paper's prompts: no addition."""

REPLY_FENCED = PromptTemplate("reply_fenced",
                              "Reply with exactly one query inside a ```sparql fenced block and nothing else.")
REPLY_PLAIN = PromptTemplate("reply_plain", "Reply with the final SPARQL query only, nothing else.")

KG_PARAGRAPH = PromptTemplate("kg_paragraph", "The knowledge graph is {kg_name}. A name in square brackets, such as "
                              "[Name], is a topic entity of the question.{prefixes}")
"""The paper's KG paragraph (appendix B): the KG named, bracketed topic entities, the prefixes to use."""

KG_NOTES = PromptTemplate("kg_notes", "About this knowledge graph:\n{kg_notes}")

GENERATOR = PromptTemplate("generator", "You translate questions{topic} into SPARQL 1.1 queries over the {kg_name} "
                           "knowledge graph.")
"""The generator's task line; the KG paragraph, notes and reply line follow (:func:`generator_messages`)."""

CORRECTOR = PromptTemplate("corrector", """\
You check and repair SPARQL 1.1 queries over the {kg_name} knowledge graph. You are only called when a gate \
has judged that a generated query probably answers its question wrongly.

Compare the query with the question: the topic entities, the {relation_word}, every constraint, which variable \
holds the answer and the query form. Change what does not match and keep every part that already does. If you \
find nothing you are confident about, return the generated query unchanged. Do not change what the question asks \
and do not add facts it does not state.""")
"""The corrector's task paragraph (paper, section 3.5: keep what matches, change what does not)."""


def prompt_prefixes(profile: KGProfile) -> str:
    """``PREFIX`` lines of the KG's paper-style paragraph: the profile's ``conventions.prompt_prefixes`` when
    it names them, else its own predefined prefixes and ``rdfs``."""
    names = profile.conventions.prompt_prefixes or (
        *(name for name in profile.prefixes if name not in STANDARD_PREFIXES), "rdfs")
    return "\n".join(f"PREFIX {name}: <{profile.prefixes[name]}>" for name in names if name in profile.prefixes)


def _system(task: str, kg_name: str, kg_notes: str, conventions: PromptConventions, prefixes: str,
            additions: PromptAdditions, reply_required: bool) -> str:
    listed = f" Use only these prefixes when you need them:\n{prefixes}" if prefixes else ""
    parts = [task, conventions.query_rules if additions.kg_rules else
             KG_PARAGRAPH.render(kg_name=kg_name, prefixes=listed)]
    if additions.schema_listing:
        parts.append(KG_NOTES.render(kg_notes=kg_notes))
    if additions.reply_fence:
        parts.append(REPLY_FENCED.render())
    elif reply_required:
        parts.append(REPLY_PLAIN.render())
    return "\n\n".join(part for part in parts if part.strip())


def sparql_target(sparql: str, additions: PromptAdditions) -> str:
    """The training target of a gold query: fenced exactly when the prompt asks for a fence, so the Alpaca
    ``output`` and the chat ``assistant`` turn are the same text."""
    sparql = sparql.strip()
    return f"```sparql\n{sparql}\n```" if additions.reply_fence else sparql


PROMPTS = prompt_table(GENERATOR, CORRECTOR, KG_PARAGRAPH, KG_NOTES, REPLY_FENCED, REPLY_PLAIN, GENERATOR_USER,
                       CORRECTOR_USER, CORRECTOR_FEEDBACK)
"""Every GGC prompt by name; ``generator`` / ``corrector`` are system prompts."""


def variant_profile(profile: KGProfile, variant: str | None = None) -> KGProfile:
    """``profile`` (``variant`` ``None`` or its own name), or the registered profile named ``variant`` (a mirror
    opened with a generic profile written like Wikidata)."""
    if variant in (None, profile.name):
        return profile
    from sparqlab.kg.profiles import get_profile

    return get_profile(variant)


def conventions_for(profile: KGProfile, variant: str | None = None) -> PromptConventions:
    """The prompt conventions of :func:`variant_profile`; rules for queries are derived from the profile when it
    states none."""
    profile = variant_profile(profile, variant)
    return dataclasses.replace(profile.conventions, query_rules=query_rules(profile))


def generator_messages(question: str, kg_name: str, kg_notes: str, conventions: PromptConventions,
                       additions: PromptAdditions = PAPER_PROMPTS, prefixes: str = "") -> list[dict]:
    """System + user turn asking for the initial query s(0) (paper, section 3.3); ``conventions`` from
    :func:`conventions_for`, ``prefixes`` from :func:`prompt_prefixes` (the paper's KG paragraph)."""
    topic = f" about {conventions.topic}" if conventions.topic else ""
    system = _system(GENERATOR.render(kg_name=kg_name, topic=topic), kg_name, kg_notes, conventions, prefixes,
                     additions, reply_required=False)
    return [{"role": "system", "content": system},
            {"role": "user", "content": GENERATOR_USER.render(question=question)}]


def corrector_messages(question: str, sparql: str, kg_name: str, kg_notes: str, conventions: PromptConventions,
                       feedback: str | None = None, additions: PromptAdditions = PAPER_PROMPTS,
                       prefixes: str = "") -> list[dict]:
    """System + user turn asking for s(c) = C(q, s(0)) (paper, section 3.5); ``feedback`` is the KG execution
    feedback line (:meth:`sparqlab.methods.ggc.feedback.KGFeedback.describe`) or ``None``."""
    task = CORRECTOR.render(kg_name=kg_name, relation_word=conventions.relation_word)
    system = _system(task, kg_name, kg_notes, conventions, prefixes, additions, reply_required=True)
    extra = CORRECTOR_FEEDBACK.render(feedback=feedback) if feedback else ""
    return [{"role": "system", "content": system},
            {"role": "user", "content": CORRECTOR_USER.render(question=question, sparql=sparql.strip(),
                                                             feedback=extra)}]
