"""The ``genop`` method: evaluate the generative query a question file gives (its ``query`` field) through the
runner, so GenOp queries get the same caching, resume, accounting and traces as every other method.

``answer`` parses the query (no model call) and returns it as the final query; ``execute_final`` evaluates it:
BGPs through ``ctx.query`` (counted KG calls), model calls through ``ctx.chat(role="oracle")`` (counted per
kind, ``propose`` / ``validate``, in the run's ``role_usage``), and returns the true rows as the KG result the
runner scores. The ``oracle`` role is the run's model unless ``--model-roles oracle=...`` names another; the
scripted model is ``-m standin-genop-script`` with the option ``script=FILE.json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from sparqlab.data.question import Question
from sparqlab.kg.errors import KGError
from sparqlab.kg.results import QueryResult
from sparqlab.methods.genop.algebra import GenOpSyntaxError
from sparqlab.methods.genop.dependency import analyse
from sparqlab.methods.genop.oracle import PROMPTS, Oracle
from sparqlab.methods.genop.semantics import EvalSettings, Evaluation, GenOpEvaluationError
from sparqlab.methods.genop.syntax import parse_genop_query
from sparqlab.platform.base import Method, MethodOutput
from sparqlab.platform.config import RESPONSE_CAP_TOKENS, MethodConfig
from sparqlab.platform.context import QuestionContext
from sparqlab.platform.registry import register_method


class GenOpFailure(KGError):
    """A generative query that could not be evaluated (its message says why); category ``genop_error``."""

    kind = "genop_error"


@dataclass(frozen=True)
class GenOpConfig(MethodConfig):
    """Settings of :class:`GenOpMethod` (the execution parameters of Sect. 6 and the implementation policies).

    - ``evaluation``: the evaluation's parameters (:class:`~sparqlab.methods.genop.semantics.EvalSettings`:
      semantics, K, B, T, R, Str≃, ...), set as ``-o evaluation.semantics=lfp -o evaluation.k=3``.
    - ``aggregation``: how the R validation votes combine (``all``, ``majority``, ``any``).
    - ``memoise``: the proposal and validation caches of App. A.1 (off only to measure what they save).
    - ``propose_max_tokens`` / ``propose_reasoning_effort`` / ``validate_max_tokens`` / ``validate_reasoning_effort``:
      per call kind, the completion budget (2,048 each: the GenOp paper leaves decoding parameters to the
      implementation, so SAGA's cap for every system it compares, :data:`RESPONSE_CAP_TOKENS`; ``None``: the
      server's default, up to the whole context) and a reasoning model's effort (``low`` / ``medium`` / ``high``;
      ``None``: the server's default). Method defaults: an explicit run or role setting wins (docs/replies.md).
    """

    evaluation: EvalSettings = EvalSettings()
    aggregation: Literal["all", "majority", "any"] = "majority"
    memoise: bool = True
    propose_max_tokens: int | None = RESPONSE_CAP_TOKENS
    propose_reasoning_effort: str | None = None
    validate_max_tokens: int | None = RESPONSE_CAP_TOKENS
    validate_reasoning_effort: str | None = None

    call_kinds: ClassVar[tuple[str, ...]] = ("propose", "validate")


def _genop_text(question: Question) -> str | None:
    """The GenOp query a question carries (its ``query`` metadata), if any."""
    text = question.metadata.get("query")
    return text if isinstance(text, str) and text.strip() else None


@register_method("genop")
class GenOpMethod(Method):
    """Generative SPARQL: the question's ``query`` is evaluated with model calls (paper Sects 3–6)."""

    config_class = GenOpConfig
    roles = ("oracle",)
    prompts = PROMPTS
    needs_model = True

    def cannot_answer(self, questions: Sequence[Question]) -> str | None:
        if any(_genop_text(q) for q in questions):
            return None
        return ("none of the questions has a 'query' field holding a GenOp query to evaluate (genop evaluates "
                "given queries; it does not write them): give a question file with one (docs/genop.md)")

    async def answer(self, question: Question, ctx: QuestionContext) -> MethodOutput:
        text = _genop_text(question)
        if text is None:
            return MethodOutput(None, "no_query", {"message": "the question has no 'query' field to evaluate"})
        try:
            query = parse_genop_query(text, ctx.kg.profile.prefixes)
        except GenOpSyntaxError as error:
            ctx.log("parse_failure", message=str(error))
            return MethodOutput(None, "genop_syntax_error", {"message": str(error)})
        deps = analyse(query.pattern)
        ctx.log("genop_analysis", **deps.describe())
        return MethodOutput(text, None, {"genop_class": deps.query_class, "genops": len(deps.genops)})

    async def execute_final(self, output: MethodOutput, ctx: QuestionContext) -> QueryResult:
        query = parse_genop_query(output.sparql or "", ctx.kg.profile.prefixes)

        async def chat(messages, kind: str = "generate", **params):
            return await ctx.chat(messages, role="oracle", kind=kind, defaults=self.config.call_params(kind),
                                  **params)

        async def query_kg(sparql: str) -> QueryResult:
            result = await ctx.query(sparql)
            if isinstance(result, KGError):
                raise result
            return result

        oracle = Oracle(chat, aggregation=self.config.aggregation, memoise=self.config.memoise)
        try:
            result = await Evaluation(query, query_kg, oracle, self.config.evaluation,
                                      ctx.kg.profile.label_predicate).run()
        except GenOpEvaluationError as error:
            raise GenOpFailure(str(error)) from None
        ctx.log("genop_result", query_class=result.query_class, semantics=result.semantics,
                rows=len(result.rows), undefined=len(result.undefined), iterations=result.iterations,
                **result.oracle_stats)
        output.extra.update({"genop_model_calls": result.model_calls, "genop_semantics": result.semantics})
        return result.to_query_result()
