"""The one-shot baseline: one model call turns a question into a SPARQL query.

It is the floor every other method is compared against, and the generator shape that GGC and DeSQ build on.
The prompt is written for instruction-tuned chat models (gpt-oss-120b, Llama-3.1-70B, Llama-3.2-3B served by
vLLM): a system message describing the KG, optional worked examples as earlier chat turns, and a request for a
single fenced ``sparql`` block. A reply without a query gets re-parse calls (``reparse_attempts``) before the
question is recorded as ``parse_failure``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from sparqlab.core.hashing import stable_hash
from sparqlab.data.question import Question
from sparqlab.kg.describe import kg_notes
from sparqlab.llm.base import Message
from sparqlab.llm.replies import reply_error
from sparqlab.platform.base import Method, MethodOutput
from sparqlab.platform.config import REPARSE_MAX_TOKENS, RESPONSE_CAP_TOKENS, MethodConfig
from sparqlab.platform.context import PrepareContext, QuestionContext
from sparqlab.platform.parsing import extract_sparql
from sparqlab.platform.prompts import PromptTemplate, prompt_table
from sparqlab.platform.registry import register_method
from sparqlab.train.prompts import question_messages

PROMPTS = prompt_table(
    PromptTemplate("system", """\
You write SPARQL 1.1 queries that answer questions over the {kg_name} knowledge graph.

About this knowledge graph:
{kg_notes}

Rules:
- Answer with exactly one query inside a single ```sparql fenced block and nothing after it.
- Declare every prefix you use.
- Use ASK for yes/no questions and SELECT (COUNT(...) AS ?count) for "how many" questions.
- Do not invent identifiers you are unsure of; prefer matching entities by their labels."""),
    PromptTemplate("question", "Question: {question}"),
    PromptTemplate("example_answer", "```sparql\n{sparql}\n```"),
    PromptTemplate("reparse", """\
Your reply did not contain a SPARQL query I could read. Reply again with only the query, inside one \
```sparql fenced block, and no other text."""),
)
"""The baseline's prompts; stand-ins read the text after ``Question:`` and the KG notes of the system prompt."""

PROMPT_STYLES = ("kg", "trained")
"""The values of :class:`DirectConfig`'s ``prompt``."""


@dataclass(frozen=True)
class DirectConfig(MethodConfig):
    """Settings of :class:`DirectSparql`.

    - ``few_shot_dataset`` / ``few_shot_split`` / ``few_shot_ids``: worked examples (question + gold SPARQL) shown
      as earlier chat turns, loaded in ``prepare`` from a split other than the scored one (no ids: zero-shot);
      ``few_shot_dataset`` ``None`` is the run's own training split (the scored dataset's ``train``, else the
      KG profile's ``train_dataset``).
    - ``allow_other_kg``: take few-shot examples from a dataset of another KG than the run's (refused otherwise).
    - ``prompt``: ``kg`` (the method's own system prompt with the KG notes and rules) or ``trained`` (the prompt of
      the generic training records, :func:`sparqlab.train.prompts.question_messages`, without KG notes: a model
      fine-tuned on ``sparqlab train data --builder generic`` records built without ``--kg`` is asked with the
      prompt it learnt).
    - ``reparse_attempts``: re-ask calls for a reply that contains no query.
    - ``generate_max_tokens`` / ``reparse_max_tokens``: the completion budget per call kind: 2,048 (no paper
      for this baseline: SAGA's cap for every system it compares, :data:`RESPONSE_CAP_TOKENS`) and 400 (SAGA
      appendix F.1's re-parse budget); ``None``: the server's default, up to the whole context. Method defaults:
      an explicit run or role setting wins (docs/replies.md).
    - ``generate_reasoning_effort`` / ``reparse_reasoning_effort``: a reasoning model's effort per call kind
      (``low`` / ``medium`` / ``high``; ``None``: the server's default).
    """

    few_shot_dataset: str | None = None
    few_shot_split: str = "train"
    few_shot_ids: tuple[str, ...] = ()
    allow_other_kg: bool = False
    prompt: str = "kg"
    reparse_attempts: int = 1
    generate_max_tokens: int | None = RESPONSE_CAP_TOKENS
    generate_reasoning_effort: str | None = None
    reparse_max_tokens: int | None = REPARSE_MAX_TOKENS
    reparse_reasoning_effort: str | None = None

    call_kinds: ClassVar[tuple[str, ...]] = ("generate", "reparse")

    def __post_init__(self) -> None:
        if self.reparse_attempts < 0:
            raise ValueError(f"reparse_attempts must be >= 0; got {self.reparse_attempts}")
        if self.prompt not in PROMPT_STYLES:
            raise ValueError(f"prompt must be one of {', '.join(PROMPT_STYLES)}; got {self.prompt!r}")


def question_message(question: Question) -> Message:
    """The user turn for one question."""
    return {"role": "user", "content": PROMPTS["question"].render(question=question.text)}


def example_messages(examples: Sequence[Question]) -> list[Message]:
    """Worked examples as earlier chat turns: the model sees the exact answer format it must produce."""
    messages: list[Message] = []
    for example in examples:
        if not example.gold_sparql:
            raise ValueError(f"few-shot example {example.id} has no gold SPARQL")
        messages.append(question_message(example))
        messages.append({"role": "assistant",
                         "content": PROMPTS["example_answer"].render(sparql=example.gold_sparql.strip())})
    return messages


def build_messages(question: Question, kg_name: str, notes: str, examples: Sequence[Question] = (),
                   prompt: str = "kg") -> list[Message]:
    """System prompt + examples + the question; ``prompt``: :class:`DirectConfig`'s ``prompt``."""
    if prompt == "trained":
        system, user = question_messages(question.text, kg_name)
        return [system, *example_messages(examples), user]
    system = PROMPTS["system"].render(kg_name=kg_name, kg_notes=notes)
    return [{"role": "system", "content": system}, *example_messages(examples), question_message(question)]


@register_method("direct")
class DirectSparql(Method):
    """One-shot (or few-shot) text-to-SPARQL.

    ``DirectSparql(examples=[...])`` takes ready few-shot questions instead of ``few_shot_ids`` (their ids go into
    the config, their content into an artifact digest, so changing them starts a new run). The KG notes of the
    system prompt are read in ``prepare`` and their digest is an artifact of the run id.
    """

    config_class = DirectConfig
    roles = ("generator",)
    prompts = PROMPTS

    def __init__(self, config: DirectConfig | None = None, *, examples: Sequence[Question] = (), **overrides: Any):
        if examples:
            overrides["few_shot_ids"] = tuple(q.id for q in examples)
            overrides.setdefault("few_shot_dataset", "(given)")
        super().__init__(config, **overrides)
        self.examples = list(examples)
        self._notes: str | None = None
        self._kg_name = ""

    def artifacts(self) -> dict[str, str]:
        found = {}
        if self.examples:
            found["examples"] = stable_hash([[q.id, q.text, q.gold_sparql] for q in self.examples], 16)
        if self._notes is not None:
            found["kg_notes"] = stable_hash(self._notes, 16)
        return found

    def example_ids(self) -> set[str]:
        return {q.id for q in self.examples}

    def example_texts(self) -> set[str]:
        return {q.text for q in self.examples}

    async def prepare(self, ctx: PrepareContext) -> None:
        self._notes = await asyncio.to_thread(kg_notes, ctx.kg)
        self._kg_name = ctx.kg.profile.name
        config = self.config
        if config.few_shot_ids and not self.examples:
            by_id = {q.id: q for q in ctx.train_questions(config.few_shot_dataset, config.few_shot_split,
                                                                  option="few_shot_dataset",
                                                                  allow_other_kg=config.allow_other_kg)}
            missing = [i for i in config.few_shot_ids if i not in by_id]
            if missing:
                raise ValueError(f"few-shot ids not in {config.few_shot_dataset}/{config.few_shot_split}: "
                                 f"{', '.join(missing[:10])}")
            self.examples = [by_id[i] for i in config.few_shot_ids]

    async def answer(self, question: Question, ctx: QuestionContext) -> MethodOutput:
        if self._notes is None:
            raise RuntimeError("DirectSparql.prepare() must run before answer() (the runner calls it)")
        messages = build_messages(question, self._kg_name, self._notes, self.examples, self.config.prompt)
        reply = await ctx.chat(messages, role="generator", kind="generate",
                               defaults=self.config.call_params("generate"))
        sparql = extract_sparql(reply.text)
        for _ in range(self.config.reparse_attempts):
            if sparql is not None:
                break
            messages = [*messages, {"role": "assistant", "content": reply.text},
                        {"role": "user", "content": PROMPTS["reparse"].render()}]
            reply = await ctx.chat(messages, role="generator", kind="reparse",
                                   defaults=self.config.call_params("reparse"))
            sparql = extract_sparql(reply.text)
        if sparql is None:
            error = reply_error(reply.text, reply.finish_reason, reply.reasoning)
            ctx.log("parse_failure", response=reply.text, finish_reason=reply.finish_reason, failure=error)
            return MethodOutput(None, error_category=error)
        return MethodOutput(sparql)
