"""What every text-to-SPARQL method implements.

A method turns a (public, gold-free) :class:`~sparqlab.data.Question` into a final SPARQL query plus a trace. It
never scores itself: the runner executes the final query (through :meth:`Method.execute_final`, which a method may
override, e.g. generative SPARQL evaluates a query with model calls in it) and computes every metric with the same
code for every method; :meth:`Method.score` may add method-specific scores afterwards.

Extension points, all optional except :meth:`Method.answer`:

- ``config_class``: a :class:`~sparqlab.platform.config.MethodConfig` dataclass with every output-changing knob;
- ``roles``: the model roles the method calls (each maps to the run's model unless the run names another);
- ``prompts``: the method's :class:`~sparqlab.platform.prompts.PromptTemplate` table (digests enter the run id);
- :meth:`artifacts`: digests of trained or loaded artifacts (enter the run id);
- :meth:`example_ids` / :meth:`example_texts`: few-shot or training questions (the runner refuses an overlap with
  the scored questions);
- :meth:`prepare`: once-per-run setup (schema index, KB memory, trained gate), cost reported apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from sparqlab.core.extras import require
from sparqlab.data.question import Question
from sparqlab.kg.results import QueryResult
from sparqlab.platform.config import MethodConfig
from sparqlab.platform.context import PrepareContext, QuestionContext
from sparqlab.platform.prompts import PromptTemplate, digests


@dataclass
class MethodOutput:
    """A method's answer to one question.

    ``sparql`` is the final query (``None`` when the method gave up); ``error_category`` names why it gave up or
    what went wrong (e.g. ``parse_failure``, ``budget_exhausted``), ``None`` when it finished normally. ``extra``
    holds per-question values for analysis (scalars become ``extra.<key>`` columns of ``load_predictions``).
    ``reported_latency_s``: the seconds the answer took where it was made, for a method that replays answers made
    elsewhere (a peer's published outputs); the record's ``latency_s`` is then that plus the final query's time
    here, not the replay's time.
    """

    sparql: str | None
    error_category: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    reported_latency_s: float | None = None


class Method:
    """Base class of every method; register subclasses with :func:`sparqlab.methods.register_method`.

    ``Method(config)`` or ``Method(**overrides)`` (validated against ``config_class``); ``self.config`` is the
    config instance. :meth:`describe` is what ``config.json`` stores and the run id hashes.
    """

    name: ClassVar[str] = "method"
    config_class: ClassVar[type[MethodConfig]] = MethodConfig
    roles: ClassVar[tuple[str, ...]] = ("generator",)
    prompts: ClassVar[dict[str, PromptTemplate]] = {}
    needs_model: ClassVar[bool] = True

    def __init__(self, config: MethodConfig | None = None, **overrides: Any):
        if config is None:
            config = self.config_class.from_dict(overrides)
        elif not isinstance(config, self.config_class):
            raise TypeError(f"{type(self).__name__} takes a {self.config_class.__name__}, "
                            f"not a {type(config).__name__}")
        elif overrides:
            config = config.replace(**overrides)
        self.config = config
        require(*self.required_extras(), what=f"method {self.name}")

    def required_extras(self) -> tuple[str, ...]:
        """The package extras (:data:`sparqlab.core.extras.EXTRAS`) this configuration needs: checked when the
        method is made, so a missing package stops a run before its first question."""
        return ()

    # -- identity -----------------------------------------------------------------------------------------------

    def artifacts(self) -> dict[str, str]:
        """Name → content digest of every trained or loaded artifact the answers depend on."""
        return {}

    def describe(self) -> dict[str, Any]:
        """The method's identity: name, full config, prompt digests and artifact digests."""
        return {"method": self.name, "config": self.config.to_dict(), "prompts": digests(self.prompts),
                "artifacts": dict(sorted(self.artifacts().items()))}

    @classmethod
    def from_config(cls, saved: dict[str, Any]) -> Method:
        """Rebuild this method from a saved :meth:`describe` dict (``config.json``'s ``method``;
        :func:`~sparqlab.platform.registry.method_from_config` finds the class by the saved name). Prompt digests
        that differ from the current code are an error: the saved run used other prompts."""
        if cls.name != saved["method"]:
            raise ValueError(f"saved config is for method {saved['method']!r}, not {cls.name!r}")
        method = cls(cls.config_class.from_dict(saved.get("config", {})))
        changed = sorted(name for name, digest in saved.get("prompts", {}).items()
                         if digests(method.prompts).get(name) != digest)
        if changed:
            raise ValueError(f"the saved run used other versions of the prompts {', '.join(changed)}; "
                             "the current code would not reproduce it")
        return method

    # -- few-shot / training examples ---------------------------------------------------------------------------

    def example_ids(self) -> set[str]:
        """Ids of few-shot or training questions shown to the model."""
        return set()

    def example_texts(self) -> set[str]:
        """Texts of those questions (an overlap by text is refused too)."""
        return set()

    # -- the work -----------------------------------------------------------------------------------------------

    def cannot_answer(self, questions: Sequence[Question]) -> str | None:
        """Why this method (as configured) cannot answer ``questions`` (their public form), or ``None``: the
        runner refuses the run with this reason before any work, instead of recording every question as failed
        (e.g. GenOp on questions without a GenOp query)."""
        return None

    async def prepare(self, ctx: PrepareContext) -> None:
        """Once per run, before any question: build or load what all questions share."""

    async def answer(self, question: Question, ctx: QuestionContext) -> MethodOutput:
        raise NotImplementedError

    async def execute_final(self, output: MethodOutput, ctx: QuestionContext) -> QueryResult:
        """Execute the final query; the default runs ``output.sparql`` on the KG. Raise a
        :class:`~sparqlab.kg.errors.KGError` for a failure (its ``kind`` becomes the error category)."""
        return await ctx.final_query(output.sparql)

    def score(self, question: Question, output: MethodOutput, predicted: list[str] | None,
              gold: list[str] | None) -> dict[str, Any]:
        """Method-specific per-question scores, computed by the runner after answering, with the full question
        (gold included). Land under ``scores`` in ``predictions.jsonl``."""
        return {}


__all__ = ["Method", "MethodOutput", "PrepareContext", "QuestionContext"]
