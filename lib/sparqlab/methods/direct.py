"""The one-shot baseline: one model call turns a question into a SPARQL query.

It is the floor every other method is compared against, and the generator shape that GGC and DeSQ build on.
The prompt is written for instruction-tuned chat models (gpt-oss-120b, Llama-3.1-70B, Llama-3.2-3B served by
vLLM): a system message describing the KG, optional worked examples as earlier chat turns, and a request for a
single fenced ``sparql`` block. A reply without a query gets one re-parse call before the question is recorded
as ``parse_failure``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from sparqlab.data.question import Question
from sparqlab.kg.base import KnowledgeGraph
from sparqlab.kg.describe import describe_schema
from sparqlab.llm.base import Message
from sparqlab.methods.base import Method, MethodOutput, QuestionContext
from sparqlab.methods.parsing import extract_sparql

SYSTEM_PROMPT = """\
You write SPARQL 1.1 queries that answer questions over the {kg_name} knowledge graph.

About this knowledge graph:
{kg_notes}

Rules:
- Answer with exactly one query inside a single ```sparql fenced block and nothing after it.
- Declare every prefix you use.
- Use ASK for yes/no questions and SELECT (COUNT(...) AS ?count) for "how many" questions.
- Do not invent identifiers you are unsure of; prefer matching entities by their labels."""

REPARSE_PROMPT = """\
Your reply did not contain a SPARQL query I could read. Reply again with only the query, inside one \
```sparql fenced block, and no other text."""


def question_message(question: Question) -> Message:
    """The user turn for one question; stand-ins read the text after ``Question:``."""
    return {"role": "user", "content": f"Question: {question.text}"}


def example_messages(examples: Sequence[Question]) -> list[Message]:
    """Worked examples as earlier chat turns: the model sees the exact answer format it must produce."""
    messages: list[Message] = []
    for example in examples:
        if not example.gold_sparql:
            raise ValueError(f"few-shot example {example.id} has no gold SPARQL")
        messages.append(question_message(example))
        messages.append({"role": "assistant", "content": f"```sparql\n{example.gold_sparql.strip()}\n```"})
    return messages


def kg_notes(kg: KnowledgeGraph) -> str:
    """What the prompt says about a KG: the profile's notes on writing queries, then its declared schema."""
    return "\n\n".join(part for part in (kg.profile.prompt_notes.strip(), describe_schema(kg)) if part)


def build_messages(question: Question, kg_name: str, notes: str, examples: Sequence[Question] = ()) -> list[Message]:
    """System prompt + examples + the question."""
    system = SYSTEM_PROMPT.format(kg_name=kg_name, kg_notes=notes)
    return [{"role": "system", "content": system}, *example_messages(examples), question_message(question)]


class DirectSparql(Method):
    """One-shot (or few-shot) text-to-SPARQL.

    ``examples`` are few-shot questions with gold SPARQL (e.g. the first k of a train split); their ids are part
    of the config, so changing them starts a new run. ``reparse_attempts`` bounds the re-ask calls for replies
    that contain no query.
    """

    name = "direct"

    def __init__(self, examples: Sequence[Question] = (), reparse_attempts: int = 1):
        self.examples = list(examples)
        self.reparse_attempts = reparse_attempts
        self._notes: dict[str, str] = {}

    def config(self) -> dict[str, Any]:
        return {"method": self.name, "examples": [q.id for q in self.examples],
                "reparse_attempts": self.reparse_attempts}

    async def answer(self, question: Question, ctx: QuestionContext) -> MethodOutput:
        if ctx.kg.identity not in self._notes:
            self._notes[ctx.kg.identity] = await asyncio.to_thread(kg_notes, ctx.kg)
        messages = build_messages(question, ctx.kg.profile.name, self._notes[ctx.kg.identity], self.examples)
        reply = await ctx.chat(messages, kind="generate")
        sparql = extract_sparql(reply.text)
        for _ in range(self.reparse_attempts):
            if sparql is not None:
                break
            messages = [*messages, {"role": "assistant", "content": reply.text},
                        {"role": "user", "content": REPARSE_PROMPT}]
            reply = await ctx.chat(messages, kind="reparse")
            sparql = extract_sparql(reply.text)
        if sparql is None:
            ctx.log("parse_failure", response=reply.text)
            return MethodOutput(None, error_category="parse_failure")
        return MethodOutput(sparql)
