"""``saga``: Schema-Aware Grounding (method section and Algorithm 1) on top of the SPINACH controller.

Before the first question the schema index is built from the KG (or loaded from its artifact folder) and viewed
through the run's coverage mask and fallback switch. Per question: one answer-type call (appendix F.1) seeds the
expected answer type, then the loop runs with SAGA's tools (:mod:`sparqlab.methods.agents.tools`) and a controller prompt
carrying the type context (Θ's most recent entries) and the knowledge log. Each mechanism can be removed on its
own for the ablations of Table 5, and the coverage of formal domain declarations varied for Table 6.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import ClassVar, Literal

from sparqlab.kg.base import KnowledgeGraph
from sparqlab.llm.replies import reply_error
from sparqlab.methods.agents.actions import parse_answer_type
from sparqlab.methods.agents.controller import AgentConfig, AgentMethod, AgentSession
from sparqlab.methods.agents.features import SagaFeatures
from sparqlab.methods.agents.prompts import ANSWER_TYPE, SAGA_STATE_LAST_PROMPTS
from sparqlab.methods.agents.schema import (
    SCHEMA_INDEX_VERSION,
    SchemaIndex,
    declared_digest,
    default_schema_folder,
    load_or_build,
)
from sparqlab.platform import PrepareContext, QuestionContext, register_method


@dataclass(frozen=True)
class SagaConfig(AgentConfig):
    """SAGA's settings on top of :class:`~sparqlab.methods.agents.controller.AgentConfig`.

    - ``features``: which of SAGA's mechanisms run (:class:`~sparqlab.methods.agents.features.SagaFeatures`, one
      nested config read as typed attributes; ``-o features.type_filter=false`` for Table 5's ablations).
    - ``schema_coverage`` / ``coverage_seed``: keep this fraction of formal domain declarations, chosen
      reproducibly by the seed (Table 6); masked properties fall back like undeclared ones.
    - ``type_context_entries`` / ``knowledge_log_entries``: Θ entries (5) and outcomes (6) in the prompt.
    - ``empirical_sample``: subjects/objects sampled per property when the index is built.
    - ``prompt_layout``: where the controller prompt carries the type context and knowledge log, which change at
      every step: ``paper`` (appendix F.2: in the middle of the system prompt) or ``state_last`` (the same text
      after the action history in the user message, so the whole system prompt stays in a server's prefix
      cache; docs/runs.md has the measured reuse of both).
    - ``answer_type_temperature`` / ``answer_type_max_tokens`` / ``answer_type_reasoning_effort``: the
      answer-type call (appendix F.1: temperature 0, 100 tokens). A reasoning model (gpt-oss) spends part of
      the budget on reasoning: raise it or lower the effort; a reply whose whole budget went to reasoning is
      counted as ``reasoning_exhausted`` and leaves the type unpredicted, never "unknown" (docs/replies.md).
    """

    features: SagaFeatures = SagaFeatures()
    schema_coverage: float = 1.0
    coverage_seed: int = 0
    type_context_entries: int = 5
    knowledge_log_entries: int = 6
    empirical_sample: int = 50
    prompt_layout: Literal["paper", "state_last"] = "paper"
    answer_type_temperature: float = 0.0
    answer_type_max_tokens: int = 100
    answer_type_reasoning_effort: str | None = None

    call_kinds: ClassVar[tuple[str, ...]] = (*AgentConfig.call_kinds, "answer_type")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.0 <= self.schema_coverage <= 1.0:
            raise ValueError(f"schema_coverage must be in [0, 1]; got {self.schema_coverage}")


def schema_view(index: SchemaIndex, config: SagaConfig) -> SchemaIndex:
    """The index as one configuration sees it: coverage mask, fallback and empirical-filter switches applied."""
    return index.with_coverage(config.schema_coverage, config.coverage_seed).with_empirical_fallback(
        config.features.empirical_fallback).with_empirical_filter(config.features.empirical_filter)


@register_method("saga")
class Saga(AgentMethod):
    """The ReAct loop over ``agent_search``… with SAGA's ``saga_search`` / ``saga_lookup`` / ``saga_execute``."""

    config_class = SagaConfig
    action_tools = {"search": "saga_search", "lookup": "saga_lookup", "examples": "agent_examples",
                    "execute": "saga_execute", "stop": "agent_stop"}

    def __init__(self, config: SagaConfig | None = None, **overrides):
        super().__init__(config, **overrides)
        self._schemas: dict[str, SchemaIndex] = {}
        if self.config.prompt_layout == "state_last":
            self.prompts = {**self.prompts, **SAGA_STATE_LAST_PROMPTS}

    async def prepare(self, ctx: PrepareContext) -> None:
        """Build (or load) the KG's schema index once per run, in the platform's artifact folder."""
        key = {"kg": ctx.kg.identity, "profile": ctx.kg.profile.name, "sample": self.config.empirical_sample,
               "version": SCHEMA_INDEX_VERSION}
        if digest := declared_digest(ctx.kg):  # curated schema files (Freebase): their content keys the index
            key["declared"] = digest
        folder, _ = ctx.artifact_dir("schema-index", key)
        index = await asyncio.to_thread(load_or_build, ctx.kg, folder, sample=self.config.empirical_sample)
        ctx.log("schema_index", properties=len(index.properties), folder=str(folder))
        self._schemas[ctx.kg.identity] = schema_view(index, self.config)

    async def _schema(self, kg: KnowledgeGraph) -> SchemaIndex:
        if kg.identity not in self._schemas:  # answering without the runner's prepare step (direct use)
            index = await asyncio.to_thread(load_or_build, kg, default_schema_folder(kg, self.config.empirical_sample),
                                            sample=self.config.empirical_sample)
            self._schemas[kg.identity] = schema_view(index, self.config)
        return self._schemas[kg.identity]

    async def start(self, session: AgentSession, ctx: QuestionContext) -> None:
        session.schema = await self._schema(ctx.kg)
        session.features = self.config.features.for_kg(ctx.kg.profile)  # the session is SAGA's (schema_aware)
        if self.config.features.answer_type_prior and ctx.models:  # no model: an observation outside a run
            session.theta.answer_type = await self._answer_type(session, ctx)

    async def _answer_type(self, session: AgentSession, ctx: QuestionContext) -> tuple[str, str] | None:
        """Appendix F.1: ``(label, class IRI or "")`` from one temperature-0 call. The id may be any class of the
        KG (the catalogue's common mappings are examples); an id the schema index never met is kept as a
        label-only type (logged as ``unindexed``), since no domain or range can match it. An unreadable reply gives
        "unknown". A reply cut by its budget (``reasoning_exhausted``, ``truncated_reply``) gives ``None`` (not
        predicted) and is recorded as ``answer_type_failure``: the prior did not run, it did not say "unknown"."""
        catalogue = type_catalogue(ctx.kg, session.schema)
        person = next((cid for label, cid in catalogue if "person" in label or "human" in label), "")
        prompt = ANSWER_TYPE.render(kg_name=ctx.kg.profile.name, question=session.question.text, person_example=person,
                                    type_catalogue="\n".join(f"- {label}: {cid}" for label, cid in catalogue))
        reply = await ctx.chat([{"role": "user", "content": prompt}], role="controller", kind="answer_type",
                               defaults=self.config.call_params("answer_type"))
        found = parse_answer_type(reply.text)
        if found is None:
            failure = reply_error(reply.text, reply.finish_reason, reply.reasoning)
            if failure != "parse_failure":
                session.answer_type_failure = failure
                ctx.log("answer_type", label=None, type=None, failure=failure, finish_reason=reply.finish_reason)
                return None
        label, type_id = found or ("", "")
        label = (label or "unknown")[:60]
        try:
            iri = ctx.kg.profile.resolve_id(type_id) if type_id else ""
        except ValueError:
            iri = ""
        if iri and not session.schema.knows_class(iri):  # any class id is welcome; one the index never met
            ctx.log("answer_type", label=label, type=None, unindexed=iri)  # cannot match a range: label only
            return label, ""
        ctx.log("answer_type", label=label, type=iri)
        return label, iri

    def _state(self, session: AgentSession, ctx: QuestionContext) -> dict[str, str]:
        """The prompt's changing blocks: the expected answer type, the type context and the knowledge log."""
        profile = ctx.kg.profile
        config = self.config
        answer = session.theta.answer_type
        if not answer:
            answer_text = "(not predicted)"
        else:
            label, iri = answer
            answer_text = f"{label} ({profile.shorten(iri)})" if iri else label
            if label == "boolean":
                answer_text += " — a yes/no question: finish with an ASK query"
        type_env = (session.theta.render(config.type_context_entries, profile.shorten) if config.features.type_state
                    else "(not kept)")
        return {"answer_type": answer_text, "type_env": type_env,
                "knowledge_log": session.knowledge_log(config.knowledge_log_entries)}

    def system_prompt(self, session: AgentSession, ctx: QuestionContext) -> str:
        profile = ctx.kg.profile
        fixed = {"kg_name": profile.name, "kg_notes": profile.prompt_notes.strip() or "-"}
        if self.config.prompt_layout == "state_last":
            return self.prompts[self.prompt_name("saga_controller_state_last")].render(**fixed)
        return self.prompts[self.prompt_name("saga_controller")].render(**fixed, **self._state(session, ctx))

    def _messages(self, session: AgentSession, ctx: QuestionContext) -> list[dict[str, str]]:
        if self.config.prompt_layout == "paper":
            return super()._messages(session, ctx)
        user = self.prompts["saga_controller_input_state_last"].render(
            question=session.question.text, action_history=session.history(), **self._state(session, ctx))
        return [{"role": "system", "content": self.system_prompt(session, ctx)}, {"role": "user", "content": user}]


def type_catalogue(kg: KnowledgeGraph, schema: SchemaIndex) -> list[tuple[str, str]]:
    """``(label, id)`` of answer types the answer-type prompt offers: the profile's list of common classes for KGs
    whose class lists are far too long (Wikidata, Freebase), every class of the schema index otherwise."""
    if kg.profile.conventions.answer_types:
        return list(kg.profile.conventions.answer_types)
    return sorted((label.lower(), kg.profile.shorten(iri)) for iri, label in schema.class_labels.items())
