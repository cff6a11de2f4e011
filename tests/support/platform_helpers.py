"""Test-only KG and methods for the platform tests: a labelled in-memory KG, a two-role two-tool method, a
method that executes its final query with model calls, and a spy that tries to read gold data."""

from __future__ import annotations

from dataclasses import dataclass, field

import pyoxigraph as ox

from sparqlab.data.question import Question
from sparqlab.kg.base import KnowledgeGraph
from sparqlab.kg.embedded import run_on_store
from sparqlab.kg.errors import SparqlSyntaxError
from sparqlab.kg.profiles import RDF, RDFS, generic_profile
from sparqlab.kg.results import QueryResult
from sparqlab.platform import (
    Method,
    MethodConfig,
    MethodOutput,
    PromptTemplate,
    QuestionContext,
    get_tools,
    prompt_table,
)

EX = "http://example.org/films/"


class FilmKG(KnowledgeGraph):
    """Three films, two directors, labels and types; ``executed`` counts queries reaching the store."""

    def __init__(self):
        super().__init__(generic_profile("films"))
        self.store = ox.Store()
        triples = [
            f"<{EX}alien> <{RDF}type> <{EX}Film>", f"<{EX}alien> <{RDFS}label> \"Alien\"",
            f"<{EX}alien> <{EX}directed_by> <{EX}scott>", f"<{EX}alien> <{EX}year> \"1979\"",
            f"<{EX}blade> <{RDF}type> <{EX}Film>", f"<{EX}blade> <{RDFS}label> \"Blade Runner\"",
            f"<{EX}blade> <{EX}directed_by> <{EX}scott>",
            f"<{EX}heat> <{RDF}type> <{EX}Film>", f"<{EX}heat> <{RDFS}label> \"Heat\"",
            f"<{EX}heat> <{EX}directed_by> <{EX}mann>",
            f"<{EX}scott> <{RDFS}label> \"Ridley Scott\"", f"<{EX}mann> <{RDFS}label> \"Michael Mann\"",
            f"<{EX}scott> <{RDF}type> <{EX}Person>", f"<{EX}Film> <{RDFS}label> \"film\"",
            f"<{EX}directed_by> <{RDFS}label> \"directed by\"",
        ]
        self.store.load(("".join(t + " .\n" for t in triples)).encode(), format=ox.RdfFormat.N_TRIPLES)
        self.executed = 0

    @property
    def identity(self) -> str:
        return "films-test-kg"

    def _execute(self, sparql: str, timeout_s: float, max_rows: int) -> QueryResult:
        self.executed += 1
        try:
            return run_on_store(self.store, sparql, max_rows)
        except SyntaxError as error:
            raise SparqlSyntaxError(f"not valid SPARQL: {error}") from None


def films_by(director: str) -> str:
    return f"SELECT ?f WHERE {{ ?f <{EX}directed_by> <{EX}{director}> }}"


def film_questions() -> list[Question]:
    return [Question("q-scott", "Which films did [Ridley Scott] direct?", gold_sparql=films_by("scott"),
                     gold_answers=[f"{EX}alien", f"{EX}blade"], topic_entities=["Ridley Scott"], kg="films"),
            Question("q-mann", "Which films did [Michael Mann] direct?", gold_sparql=films_by("mann"),
                     gold_answers=[f"{EX}heat"], topic_entities=["Michael Mann"], kg="films")]


PROMPTS = prompt_table(PromptTemplate("draft", "Draft a query for: {question}"),
                       PromptTemplate("fix", "{query}"))


@dataclass(frozen=True)
class TwoRoleConfig(MethodConfig):
    """- ``tools``: the tool set (an ablation removes one); - ``note``: a label that lands in ``extra``."""

    tools: tuple[str, ...] = ("lookup", "execute")
    note: str = "n"


class TwoRoleMethod(Method):
    """Generator drafts, a lookup and an execute tool inspect the KG, the corrector (an echo model) returns the
    query; per-role usage, per-tool KG calls and typed events all come out of one question."""

    name = "test-two-roles"
    config_class = TwoRoleConfig
    roles = ("generator", "corrector")
    prompts = PROMPTS

    async def answer(self, question: Question, ctx: QuestionContext) -> MethodOutput:
        tools = get_tools(self.config.tools)
        director = "scott" if "Scott" in question.text else "mann"
        ctx.step = 0
        await ctx.chat([{"role": "user", "content": PROMPTS["draft"].render(question=question.text)}],
                       role="generator", kind="generate")
        ctx.log("thought", text=f"look at {director}")
        seen = await tools["lookup"](ctx, {"entity": f"<{EX}{director}>"})
        ctx.step = 1
        ctx.log("action", tool="execute")
        result = await tools["execute"](ctx, {"sparql": films_by(director)})
        ctx.step = 2
        fixed = await ctx.chat([{"role": "user", "content": PROMPTS["fix"].render(query=films_by(director))}],
                               role="corrector", kind="correct")
        return MethodOutput(fixed.text, extra={"note": self.config.note, "lookup_chars": len(seen.text),
                                               "rows_seen": result.text.count("\n"), "structured": {"a": 1}})

    def score(self, question, output, predicted, gold):
        return {"predicted_count": len(predicted or []), "gold_count": len(gold or []),
                "exact": sorted(predicted or []) == sorted(gold or [])}


@dataclass(frozen=True)
class OracleConfig(MethodConfig):
    """- ``calls``: oracle calls made while executing the final query."""

    calls: int = 2


class OracleExecution(Method):
    """Overrides ``execute_final``: asks the ``oracle`` role ``calls`` times (counted on the question's context)
    and then runs the query the oracle returned (an echo model returns the query it is sent)."""

    name = "test-oracle-exec"
    config_class = OracleConfig
    roles = ("oracle",)

    async def answer(self, question: Question, ctx: QuestionContext) -> MethodOutput:
        director = "scott" if "Scott" in question.text else "mann"
        return MethodOutput(films_by(director))

    async def execute_final(self, output: MethodOutput, ctx: QuestionContext) -> QueryResult:
        reply = None
        for _ in range(self.config.calls):
            reply = await ctx.chat([{"role": "user", "content": output.sparql}], role="oracle", kind="oracle_eval")
        ctx.log("oracle", answer=reply.text)
        return await ctx.final_query(reply.text)


@dataclass(frozen=True)
class SpyConfig(MethodConfig):
    """No settings."""


@dataclass
class Seen:
    questions: list[Question] = field(default_factory=list)
    scored: list[Question] = field(default_factory=list)


class GoldSpy(Method):
    """Records every question object it is handed, in ``answer`` and through the context, and in ``score``."""

    name = "test-gold-spy"
    config_class = SpyConfig
    roles = ()
    needs_model = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seen = Seen()

    async def answer(self, question: Question, ctx: QuestionContext) -> MethodOutput:
        self.seen.questions += [question, ctx.question]
        return MethodOutput(None, error_category="gave_up")

    def score(self, question, output, predicted, gold):
        self.seen.scored.append(question)
        return {}
