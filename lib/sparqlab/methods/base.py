"""What every text-to-SPARQL method implements, and the per-question context the runner gives it.

A method turns a :class:`~sparqlab.data.Question` into a final SPARQL query plus a trace. It never scores itself:
the runner executes the final query on the KG and computes every metric with the same code for every method.
All model and KG access goes through :class:`QuestionContext`, so calls, tokens and latency are counted per call
kind and every step lands in the trace.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from sparqlab.data.question import Question
from sparqlab.kg.base import KnowledgeGraph
from sparqlab.kg.errors import KGError
from sparqlab.kg.results import QueryResult
from sparqlab.llm.accounting import UsageTotals
from sparqlab.llm.base import ChatModel, ChatRequest, ChatResponse, Message


@dataclass
class MethodOutput:
    """A method's answer to one question.

    ``sparql`` is the final query (``None`` when the method gave up); ``error_category`` names why it gave up or
    what went wrong (e.g. ``parse_failure``, ``budget_exhausted``), ``None`` when it finished normally.
    """

    sparql: str | None
    error_category: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class QuestionContext:
    """Per-question access to the model and the KG, with accounting and a trace.

    ``usage`` counts model calls by call kind (``generate``, ``reparse``, ``gate`` ...), tokens (flagged when
    estimated, as for stand-ins), cache hits and model latency, so that a results table can say where the cost
    went.
    """

    question: Question
    kg: KnowledgeGraph
    model: ChatModel | None
    model_params: dict[str, Any] = field(default_factory=dict)
    trace: list[dict[str, Any]] = field(default_factory=list)
    usage: UsageTotals = field(default_factory=UsageTotals)
    kg_calls: int = 0

    def log(self, event: str, **data: Any) -> None:
        """Append one step (thought, action, observation, ...) to the trace."""
        self.trace.append({"event": event, "t": round(time.time(), 3), **data})

    async def chat(self, messages: list[Message], kind: str = "generate", **params: Any) -> ChatResponse:
        """Call the run's model; ``params`` override the run's sampling parameters for this call."""
        if self.model is None:
            raise RuntimeError("this method needs a model, but the run was configured without one")
        request = ChatRequest.build(self.model.name, messages, **{**self.model_params, **params})
        response = await self.model.acomplete(request)
        self.usage.add(response, kind)
        self.log("model_call", kind=kind, messages=request.message_dicts, response=response.text,
                 usage={"prompt": response.usage.prompt_tokens, "completion": response.usage.completion_tokens},
                 cached=response.cached)
        return response

    async def query(self, sparql: str, **options: Any) -> QueryResult | KGError:
        """Run a query in a worker thread; a KG error is returned (and traced), never raised, so that a
        malformed query becomes an observation rather than a crash."""
        self.kg_calls += 1
        try:
            result = await asyncio.to_thread(self.kg.query, sparql, **options)
        except KGError as error:
            self.log("query", sparql=sparql, error=error.kind, message=str(error))
            return error
        self.log("query", sparql=sparql, rows=len(result), truncated=result.truncated, cached=result.cached)
        return result


class Method:
    """Base class of every method. Subclasses set ``name`` and implement :meth:`answer`.

    ``config()`` returns every setting that changes the method's output; it is saved in the run's
    ``config.json`` and hashed into the run id, so a changed setting starts a new run instead of resuming.
    """

    name: str = "method"
    needs_model: bool = True

    def config(self) -> dict[str, Any]:
        return {"method": self.name}

    async def answer(self, question: Question, ctx: QuestionContext) -> MethodOutput:
        raise NotImplementedError
