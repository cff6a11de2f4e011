"""Test-only KG, questions and methods for the runner tests (no production backend).

``TinyKG`` is an in-memory pyoxigraph store of N entities, each with one value ``"v<i>"``. Question ``q<i>`` asks
for entity i's value; ``lookup_sparql(i)`` answers it. Run as a script, this module runs a slow method over the
tiny KG (used by the SIGKILL test, which needs a separate process to kill).
"""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from dataclasses import dataclass, field

import pyoxigraph as ox

from sparqlab.data.question import Question
from sparqlab.kg.base import KnowledgeGraph
from sparqlab.kg.embedded import run_on_store
from sparqlab.kg.errors import SparqlSyntaxError
from sparqlab.kg.profiles import generic_profile
from sparqlab.kg.results import QueryResult
from sparqlab.platform.base import Method, MethodOutput, QuestionContext
from sparqlab.platform.config import MethodConfig

EX = "http://example.org/tiny/"


def lookup_sparql(i: int) -> str:
    return f"SELECT ?v WHERE {{ <{EX}e{i}> <{EX}value> ?v }}"


class TinyKG(KnowledgeGraph):
    """An in-memory KG for tests; ``executed`` counts queries that reached the store (cache misses);
    ``content`` stands for the KG's content identity (another value: an edited KG)."""

    def __init__(self, n: int = 12, content: str = "tiny-test-kg"):
        super().__init__(generic_profile("tiny"))
        self.content = content
        self.store = ox.Store()
        triples = "".join(f'<{EX}e{i}> <{EX}value> "v{i}" .\n' for i in range(n))
        self.store.load(triples.encode(), format=ox.RdfFormat.N_TRIPLES)
        self.executed = Counter()

    @property
    def identity(self) -> str:
        return self.content

    def _execute(self, sparql: str, timeout_s: float, max_rows: int) -> QueryResult:
        self.executed[sparql] += 1
        try:
            return run_on_store(self.store, sparql, max_rows)
        except SyntaxError as error:
            raise SparqlSyntaxError(f"not valid SPARQL: {error}") from None


def tiny_questions(n: int = 12, gold: str = "answers") -> list[Question]:
    """``q0..q<n-1>``; ``gold="sparql"`` gives gold SPARQL instead of gold answers (the runner executes it)."""
    return [Question(f"q{i}", f"What is the value of e{i}?",
                     gold_sparql=lookup_sparql(i),
                     gold_answers=[f"v{i}"] if gold == "answers" else None,
                     kg="tiny")
            for i in range(n)]


def index(question: Question) -> int:
    return int(question.id[1:])


@dataclass(frozen=True)
class LookupConfig(MethodConfig):
    """- ``behaviour``: question id → what goes wrong; - ``variant``: a label that changes the run id."""

    behaviour: dict[str, str] = field(default_factory=dict)
    variant: str = "a"


class LookupMethod(Method):
    """Answers question i with the lookup query; ``behaviour`` maps a question id to what goes wrong instead:
    ``raise``, ``sleep:<seconds>``, ``malformed``, ``update``, ``wrong`` (a query for another entity).
    ``delay_s`` only slows it down (not part of the config)."""

    name = "lookup"
    config_class = LookupConfig
    roles = ()
    needs_model = False

    def __init__(self, behaviour: dict[str, str] | None = None, delay_s: float = 0.0, variant: str = "a"):
        super().__init__(behaviour=behaviour or {}, variant=variant)
        self.behaviour = self.config.behaviour
        self.variant = variant
        self.delay_s = delay_s
        self.in_flight = 0
        self.max_in_flight = 0

    async def answer(self, question: Question, ctx: QuestionContext) -> MethodOutput:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            ctx.log("thought", text=f"look up e{index(question)}")
            await asyncio.sleep(self.delay_s)
            action = self.behaviour.get(question.id, "")
            if action == "raise":
                raise RuntimeError(f"deliberate failure on {question.id}")
            if action.startswith("sleep:"):
                await asyncio.sleep(float(action.split(":")[1]))
            if action == "malformed":
                return MethodOutput("SELECT ?v WHERE { ?s ?p ", extra={"note": "malformed"})
            if action == "update":
                return MethodOutput(f"INSERT DATA {{ <{EX}x> <{EX}y> <{EX}z> }}")
            if action == "wrong":
                return MethodOutput(lookup_sparql(index(question) + 1))
            observation = await ctx.query(lookup_sparql(index(question)))
            ctx.log("observation", rows=len(observation))
            return MethodOutput(lookup_sparql(index(question)), extra={"variant": self.variant})
        finally:
            self.in_flight -= 1


@dataclass(frozen=True)
class EchoChatConfig(MethodConfig):
    """- ``calls``: model calls per question."""

    calls: int = 2


class EchoChatMethod(Method):
    """Sends the lookup query to the model as the user message; ``standin-echo`` sends it back, so the answer
    is right and every call goes through the model path (cache, accounting, trace)."""

    name = "echo-chat"
    config_class = EchoChatConfig

    def __init__(self, calls: int = 2):
        super().__init__(calls=calls)

    async def answer(self, question: Question, ctx: QuestionContext) -> MethodOutput:
        reply = None
        for step in range(self.config.calls):
            kind = "generate" if step == 0 else "refine"
            reply = await ctx.chat([{"role": "user", "content": lookup_sparql(index(question))}], kind=kind)
        return MethodOutput(reply.text)


def _main(root: str, n: int, delay_s: float) -> None:
    """Run LookupMethod slowly over the tiny KG (the SIGKILL test kills this process mid-run)."""
    from sparqlab.runs import RunConfig, run

    config = RunConfig(experiment="kill", output_root=root, concurrency=3, progress=False)
    run(LookupMethod(delay_s=delay_s), tiny_questions(n), config, kg=TinyKG(n))


if __name__ == "__main__":
    _main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))
