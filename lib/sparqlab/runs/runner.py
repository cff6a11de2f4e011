"""The one runner every method goes through: ``run(method, questions, config)``.

A run is first planned (:func:`sparqlab.runs.plan.build_plan`: models and roles resolved, questions selected, KG
opened, gold snapshot found; ``sparqlab run --dry-run`` prints the plan), then executed by :class:`Runner`: it
checks the models' endpoints and the gold queries, prepares the method once (:class:`~sparqlab.runs.prepared.
PreparedRun`: the run id, which hashes the method's prompt and artifact digests), then answers. For each question
it builds a :class:`~sparqlab.platform.context.QuestionContext` around the question's **public** form (no gold),
awaits ``method.answer`` (bounded by the per-question timeout), **executes the final query** through
``method.execute_final`` (by default on the KG), turns the result into answers, has :func:`sparqlab.eval.assess.assess`
score the outcome (every registered metric, the error type, the queries' complexity), adds ``method.score`` (with
the full question), and appends one line to ``predictions.jsonl`` at once. Many questions are in flight
(``config.concurrency`` asyncio workers), so a batching model server stays busy.

Failures of the method stay inside their question: a method exception is ``error_category="method_error"``
(message and traceback in the trace), the per-question timeout is ``"question_timeout"``, a final query that hits
the KG's timeout is ``"final_query_timeout"``, another failing final query its ``KGError.kind`` (``syntax_error``,
``endpoint_error`` ...), and a per-request model refusal its ``ModelError.kind``.
A failure of the machinery is never an answer (:mod:`sparqlab.core.errors`): an
:class:`~sparqlab.core.errors.InfrastructureError` (a full disk or broken cache, a model endpoint that is
unreachable or answers garbage, an unknown model name, a replay-cache miss, a KG service that keeps refusing, a
damaged build output), an ``OSError`` of the storage or an ``ImportError`` raised while answering, and a crashing
scorer stop the run with :class:`RunAborted`; that question is not recorded. Finished questions are on disk, so
the same call afterwards resumes and answers the rest (see :mod:`sparqlab.runs.store`).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import sys
import time
import traceback
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparqlab.core.errors import InfrastructureError, ScorerFailed, as_infrastructure, stop_if_infrastructure
from sparqlab.core.event_loops import run_sync
from sparqlab.data.question import Question
from sparqlab.eval.assess import Outcome, assess
from sparqlab.eval.matching import match_either, result_answers
from sparqlab.kg.errors import KGError, QueryTimeout
from sparqlab.kg.results import QueryResult
from sparqlab.llm import CachedModel, ChatModel, ModelError
from sparqlab.platform.base import Method, MethodOutput
from sparqlab.platform.context import QuestionContext, token_counts
from sparqlab.runs.config import RunConfig
from sparqlab.runs.gold_answers import GoldAnswers
from sparqlab.runs.metrics import GENERATED_ONLY
from sparqlab.runs.plan import RunPlan, build_plan
from sparqlab.runs.prepared import PreparedRun
from sparqlab.runs.records import prediction_record
from sparqlab.runs.resources import InFlight, fit_to_slots
from sparqlab.runs.store import MANIFEST, GroupCommit, RunStore, write_json

if TYPE_CHECKING:
    import pandas as pd

    from sparqlab.kg.base import KnowledgeGraph


def scalar_metadata(question: Question) -> dict[str, Any]:
    """The question's scalar metadata (question type, hops, template ...) for grouping results; structured
    values such as stored gold results stay out of the predictions file. A number that is not finite (NaN from a
    spreadsheet's empty cell, infinity) is ``None``: JSON has no NaN, and the line must stay JSON."""
    return {k: None if isinstance(v, float) and not math.isfinite(v) else v
            for k, v in question.metadata.items() if isinstance(v, str | int | float | bool)}


class RunAborted(RuntimeError):
    """The run stopped early; finished questions are saved and the same call resumes."""


@contextlib.contextmanager
def scoring(question: Question, scorer: str) -> Iterator[None]:
    """A crash of the workbench's own scoring code is :class:`ScorerFailed` naming the scorer and the question: it
    says nothing about the method's answer, and every later question would be scored by the same code."""
    try:
        yield
    except Exception as error:
        stop_if_infrastructure(error, f"scoring question {question.id}")
        raise ScorerFailed(f"the scorer {scorer} crashed on question {question.id}: {type(error).__name__}: "
                           f"{error}; fix it and rerun") from error


@dataclass
class RunResult:
    """What :func:`run` returns: where the results are and their metrics (also in ``metrics.json``)."""

    run_dir: Path
    run_id: str
    config: RunConfig
    metrics: dict[str, Any]
    answered: int
    """Questions answered by this call (the rest were already done)."""

    def predictions(self) -> pd.DataFrame:
        """``predictions.jsonl`` as a DataFrame."""
        from sparqlab.runs.results import load_predictions

        return load_predictions(self.run_dir)


INLINE_ANSWER_ROWS = 64
"""A final result of at most this many rows is turned into answers on the event loop (microseconds), a larger one
on the runner's pool."""


def run(method: Method, questions: Sequence[Question] | None = None, config: RunConfig | None = None, *,
        kg: KnowledgeGraph | None = None, model: ChatModel | None = None,
        redo_errors: Iterable[str] = ()) -> RunResult:
    """Run ``method`` over ``questions`` (or ``config.dataset``) and return the results folder and metrics.

    ``kg`` / ``model`` are ready objects to use instead of opening ``config.kg`` / ``config.model`` (a model that
    is not a :class:`~sparqlab.llm.CachedModel` gets the response cache of ``config.cache``). ``redo_errors``
    names error categories whose finished questions are answered again (e.g. ``["endpoint_error"]`` after an
    outage). Works in scripts and inside Jupyter's running event loop (on a fresh loop in a worker thread).
    ``await arun(...)`` is the async form; it uses the caller's loop as it is, so with a slow remote KG and high
    concurrency give that loop a default executor of ``config.resources.kg_threads`` threads for the methods' KG
    calls (:class:`~sparqlab.runs.resources.ExecutionResources`).
    """
    config = config or RunConfig()

    async def in_own_loop() -> RunResult:
        # methods reach the KG through asyncio.to_thread; asyncio.run shuts this pool down afterwards
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(config.resources.kg_threads, "sparqlab-kg"))
        return await arun(method, questions, config, kg=kg, model=model, redo_errors=redo_errors)

    return run_sync(in_own_loop())


async def arun(method: Method, questions: Sequence[Question] | None = None, config: RunConfig | None = None, *,
               kg: KnowledgeGraph | None = None, model: ChatModel | None = None,
               redo_errors: Iterable[str] = ()) -> RunResult:
    """Async form of :func:`run`."""
    if config is not None and config.repeats > 1:
        raise ValueError(f"repeats={config.repeats}: run() makes one run; sparqlab.runs.run_repeats (or `sparqlab run "
                         "--repeats`) runs the repeats as one group")
    plan = build_plan(method, questions, config or RunConfig(), kg=kg, model=model)
    try:
        return await Runner(plan).execute(set(redo_errors))
    finally:
        plan.close()  # a KG the run opened: its query workers, or the server of an engine axis, stop now


async def final_answers(method: Method, output: MethodOutput, ctx: QuestionContext, scope: asyncio.Timeout,
                        answers_of: Callable[[QueryResult], Awaitable[list[str]]], timeout_s: float | None
                        ) -> tuple[list[str] | None, str | None, QueryResult | None]:
    """Execute the final query through the method's hook within the question's time ``scope``; the answers
    (``None`` if there are none), an error category and the raw result (``None`` when there is none)."""
    if output.sparql is None:
        return None, None, None
    sparql = output.sparql
    try:
        async with scope:
            result = await method.execute_final(output, ctx)
        answers = await answers_of(result)
    except TimeoutError as error:
        if not scope.expired():
            return (*_final_error(ctx, sparql, "answer_error", error), None)
        ctx.log("final_query", sparql=sparql, error="final_query_timeout",
                message=f"final-query execution exceeded {timeout_s} s")
        return None, "final_query_timeout", None
    except KGError as error:
        kind = "final_query_timeout" if isinstance(error, QueryTimeout) else error.kind
        ctx.log("final_query", sparql=sparql, error=kind, message=str(error))
        return None, kind, None
    except InfrastructureError:
        raise
    except ModelError as error:
        ctx.log("final_query", sparql=sparql, error=error.kind, message=str(error))
        return None, error.kind, None
    except Exception as error:
        stop_if_infrastructure(error, f"the final query of question {ctx.question.id}")
        return (*_final_error(ctx, sparql, "answer_error", error), None)
    ctx.log("final_query", sparql=sparql, answers=answers, rows=len(result), truncated=result.truncated,
            cached=result.cached, elapsed_s=round(result.elapsed_s, 6))
    return answers, None, result


def _final_error(ctx: QuestionContext, sparql: str, kind: str, error: Exception) -> tuple[None, str]:
    ctx.log("final_query", sparql=sparql, error=kind, message=str(error),
            traceback="".join(traceback.format_exception(error)))
    return None, kind


class Runner:
    """Executes a :class:`~sparqlab.runs.plan.RunPlan`: prepares the method, opens the results folder, answers
    the questions (many in flight) and writes one record per question, then the run's metrics."""

    def __init__(self, plan: RunPlan):
        self.plan = plan
        self.method, self.config, self.kg, self.roles = plan.method, plan.config, plan.kg, plan.roles
        self.models = plan.models
        if plan.evaluation_set:  # the run says so, and manifest.json keeps it
            print(f"sparqlab run: note: this run {plan.evaluation_set}", file=sys.stderr)
        self._pool = ThreadPoolExecutor(max_workers=self.config.resources.runner_threads,
                                        thread_name_prefix="sparqlab-run")
        self.gold = GoldAnswers(self._execute, self._pool, plan.gold_snapshot)
        self.slots = InFlight({}, self.config.resources.question_workers)
        self.prepared: PreparedRun | None = None

    async def _sub_run(self, method: Method, questions: Sequence[Question], *, experiment: str,
                       role: str) -> RunResult:
        """A nested run for :meth:`PrepareContext.sub_run`: same KG and output root, the model of ``role`` with
        its sampling parameters, questions given (never the scored ones: the context's caller took them from
        ``train_questions``)."""
        target = self.roles[role]
        config = RunConfig(experiment=experiment, kg=self.kg.profile.name, model_params=dict(target.params),
                           output_root=self.config.output_root, progress=self.config.progress)
        return await arun(method, list(questions), config, kg=self.kg, model=target.model)

    async def prepare(self) -> PreparedRun:
        """``method.prepare`` once, then the run id (:meth:`PreparedRun.prepare`)."""
        self.prepared = await PreparedRun.prepare(self.plan, self._sub_run)
        return self.prepared

    # -- answering ------------------------------------------------------------------------------------------

    def _time_limit(self, deadline: float | None) -> asyncio.Timeout:
        """The question's time limit: ``question_timeout_s`` from now, or an absolute ``deadline`` (event-loop
        time) when the question's time started earlier (a served request that waited in the queue)."""
        return asyncio.timeout(self.config.question_timeout_s) if deadline is None else asyncio.timeout_at(deadline)

    async def _call_method(self, question: Question, ctx: QuestionContext,
                           deadline: float | None = None) -> MethodOutput:
        scope = self._time_limit(deadline)
        try:
            async with scope:
                output = await self.method.answer(question, ctx)
            if not isinstance(output, MethodOutput):
                raise TypeError(f"{type(self.method).__name__}.answer returned {type(output).__name__}, "
                                "not a MethodOutput")
            return output
        except TimeoutError as error:
            if scope.expired():
                ctx.log("question_timeout", timeout_s=self.config.question_timeout_s)
                return MethodOutput(None, error_category="question_timeout")
            return self._method_error(ctx, error)
        except InfrastructureError:
            raise
        except ModelError as error:
            ctx.log("model_error", kind=error.kind, message=str(error))
            return MethodOutput(None, error_category=error.kind)
        except Exception as error:
            stop_if_infrastructure(error, f"question {question.id}")
            return self._method_error(ctx, error)

    @staticmethod
    def _method_error(ctx: QuestionContext, error: Exception) -> MethodOutput:
        ctx.log("method_error", error=type(error).__name__, message=str(error),
                traceback="".join(traceback.format_exception(error)))
        return MethodOutput(None, error_category="method_error")

    def _answers(self, result: QueryResult) -> list[str]:
        """Blocking: a result's sorted, normalised answer list (labels fetched for label-keyed KGs)."""
        return sorted(result_answers(result, self.kg, self.config.answer_match))

    async def _answers_of(self, result: QueryResult) -> list[str]:
        """:meth:`_answers` here when that is cheap (a small result, no labels to fetch from the KG), else on the
        runner's pool: a thread hop costs more than normalising a few answers."""
        if len(result) <= INLINE_ANSWER_ROWS and self.config.answer_match != "label":
            return self._answers(result)
        return await asyncio.get_running_loop().run_in_executor(self._pool, self._answers, result)

    def _execute(self, sparql: str) -> list[str]:
        """Blocking: run a query and turn its result into answers."""
        return self._answers(self.kg.query(sparql))

    async def _run_final_query(self, sparql: str) -> QueryResult:
        """The default final-query execution (:meth:`QuestionContext.final_query`): the runner's worker pool."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, self.kg.query, sparql)

    def _method_scores(self, question: Question, output: MethodOutput, predicted: list[str] | None,
                       gold: list[str] | None) -> dict[str, Any]:
        """``method.score`` with the full question; a failing scorer stops the run (:class:`ScorerFailed`): its
        crash says nothing about the answer, and every later question would be scored by the same code."""
        with scoring(question, f"of method {self.method.name!r} ({type(self.method).__name__}.score)"):
            return dict(self.method.score(question, output, predicted, gold))

    async def answer(self, question: Question,
                     deadline: float | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """One question, end to end: the prediction record and the trace. The method sees only
        ``question.public()``; gold is read here, after it has answered. ``deadline`` (event-loop time) ends the
        question's time instead of ``question_timeout_s`` from now, for both the method and its final query."""
        public = question.public()
        ctx = QuestionContext(public, self.kg, self.roles, final_executor=self._run_final_query)
        started = time.perf_counter()
        output = await self._call_method(public, ctx, deadline)
        if output.reported_latency_s is not None:  # answered elsewhere (a peer's file): its time, not the replay's
            started = time.perf_counter() - output.reported_latency_s
        result, gold_source = None, None
        if self.config.generate_only:  # queries only; sparqlab.runs.scoring executes and scores them later
            predicted, query_error = None, None
            gold, gold_source = question.gold_answers, GENERATED_ONLY
        else:
            predicted, query_error, result = await final_answers(self.method, output, ctx, self._time_limit(deadline),
                                                                 self._answers_of, self.config.question_timeout_s)
            gold, gold_source = await self.gold.of(question)
            if self.config.answer_match == "either" and predicted and gold is not None:
                predicted = await asyncio.get_running_loop().run_in_executor(
                    self._pool, match_either, predicted, gold, self.kg)
        latency = time.perf_counter() - started
        error_category = output.error_category or query_error
        outcome = Outcome(output.sparql, result, predicted, error_category, gold, gold_source)
        with scoring(question, "sparqlab.eval.assess"):
            assessed = assess(question, outcome)
        usage = ctx.usage
        record = prediction_record(
            id=question.id,
            question=question.text,
            answer_form=question.answer_form,
            predicted_sparql=output.sparql,
            predicted_answers=predicted,
            gold_sparql=question.gold_sparql,
            gold_answers=gold,
            gold_source=gold_source,
            **{**assessed, "scores": {**self._method_scores(question, output, predicted, gold), **assessed["scores"]}},
            error_category=error_category,
            model_calls=dict(sorted(usage.calls.items())),
            model_calls_uncached=usage.total_calls - usage.cached_calls,
            role_usage=ctx.role_usage_dict(),
            reply_outcomes=ctx.reply_outcomes_dict(),
            tokens=token_counts(usage),
            tokens_estimated=usage.estimated,
            kg_calls=dict(sorted(ctx.kg_calls.items())),
            latency_s=round(latency, 6),
            model_latency_s=round(usage.latency_s, 6),
            extra=output.extra,
            metadata=scalar_metadata(question),
        )
        return record, ctx.trace.to_json()

    # -- the run --------------------------------------------------------------------------------------------

    async def execute(self, redo_errors: set[str]) -> RunResult:
        """The whole run: checks, preparation, the questions not yet done (and those of ``redo_errors``), metrics."""
        started = time.perf_counter()
        self._kg_stats_start = self.kg.service.stats()
        try:
            await self._check_models()
            self.plan.check()
            if not self.config.generate_only:
                await self.gold.check(self.plan.questions, self.kg.profile.name, self.config.allow_gold_errors)
            prepared = await self.prepare()
        except BaseException as error:  # an interruption too: the pool and the model are released either way
            await self.release()
            cause = as_infrastructure(error, f"preparing method {self.method.name!r}")
            if cause is None:
                raise
            raise RunAborted(f"preparing the run stopped: {str(cause).rstrip('.')}; nothing was answered or written, "
                             "the same call starts again") from cause
        store = RunStore(prepared.run_dir)
        done = store.open(redo_errors)
        try:
            prepared.write_provenance()
            todo = [q for q in self.plan.questions if q.id not in done]
            write_json(prepared.run_dir / MANIFEST, prepared.manifest("running", len(self.plan.questions) - len(todo)))
        except BaseException:
            store.close()
            self._pool.shutdown(wait=False)
            raise
        appends = GroupCommit(store)  # one writer thread, off the event loop, fsyncs shared by what ends together
        answered = 0
        try:
            answered = await self._answer_all(prepared, todo, appends)
        finally:
            await appends.close()
            try:
                metrics = prepared.finish(store.predictions(), time.perf_counter() - started, self._kg_stats_start,
                                          self.slots)
            finally:
                store.close()
                await self.release()
        return RunResult(prepared.run_dir, prepared.run_id, self.config, metrics, answered)

    async def _check_models(self) -> None:
        """Before any work: ask each endpoint what it serves under the name (environment.json and the cache key);
        a name it does not serve stops the run (:class:`~sparqlab.llm.errors.UnknownModel`). Then fit the run to
        the endpoints' slots (:func:`~sparqlab.runs.resources.fit_to_slots`)."""
        for model in self.models:
            if isinstance(model, CachedModel):
                await model.check_identity()
        self.slots = fit_to_slots(self.models, self.config.model_slots, self.config.resources.question_workers)
        if self.slots.question_workers < self.config.concurrency:
            print(f"sparqlab run: note: {self.slots.question_workers} question(s) in flight, not "
                  f"{self.config.concurrency}: the model endpoint serves {self.slots.question_workers} request(s) at "
                  "once (--model-slots, or its /props total_slots)", file=sys.stderr)

    async def release(self) -> None:
        """Stop the runner's threads and close the models' connections of this event loop (a sync ``run`` closes
        its loop afterwards)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        for model in self.models:
            await model.aclose()

    async def _answer_all(self, prepared: PreparedRun, todo: list[Question], appends: GroupCommit) -> int:
        from tqdm.auto import tqdm

        pending = iter(todo)
        answered = 0
        bar = tqdm(total=len(self.plan.questions), initial=len(self.plan.questions) - len(todo), unit="q",
                   desc=f"{self.config.experiment}/{prepared.run_dir.name}", disable=not self.config.progress)

        async def worker() -> None:
            nonlocal answered
            for question in pending:
                record, trace = await self.answer(question)
                await appends.append(record, trace)
                answered += 1
                bar.update(1)

        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(min(self.slots.question_workers, len(todo))):
                    group.create_task(worker())
        except BaseExceptionGroup as failures:
            first = failures.exceptions[0]
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            cause = as_infrastructure(first)
            if cause is not None:
                raise RunAborted(f"run {prepared.run_id} stopped: {cause} — the questions answered so far are saved "
                                 f"in {prepared.run_dir}; the same call resumes") from cause
            raise first from None
        finally:
            bar.close()
        return answered

