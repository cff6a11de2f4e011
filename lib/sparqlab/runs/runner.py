"""The one runner every method goes through: ``run(method, questions, config)``.

Before the questions, the runner resolves one model per method role, calls ``method.prepare`` once (cost
reported apart in ``metrics.json``), refuses few-shot or training examples that overlap the scored questions, and
only then computes the run id (prompt and artifact digests are part of it). For each question it builds a
:class:`~sparqlab.platform.context.QuestionContext` around the question's **public** form (no gold), awaits
``method.answer`` (bounded by the per-question timeout), **executes the final query** through
``method.execute_final`` (by default on the KG), turns the result into answers and scores them with
:mod:`sparqlab.eval`, adds ``method.score`` (with the full question), and appends one line to
``predictions.jsonl`` at once. Many questions are in flight (``config.concurrency`` asyncio workers), so a
batching model server stays busy.

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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparqlab.core.errors import InfrastructureError, ScorerFailed, as_infrastructure
from sparqlab.core.names import short_name
from sparqlab.data.gold_snapshot import GoldSnapshot, find_snapshot
from sparqlab.data.question import Question, check_id
from sparqlab.data.registry import evaluation_set_note, training_source
from sparqlab.eval.complexity import query_complexity
from sparqlab.eval.errors import gold_error_source, score_and_categorise
from sparqlab.eval.matching import match_either, resolve_mode, result_answers
from sparqlab.eval.text2sparql import official_question_scores
from sparqlab.kg.errors import KGError, QueryTimeout
from sparqlab.kg.results import QueryResult
from sparqlab.llm import (
    CachedModel,
    ChatModel,
    InFlightLimit,
    ModelError,
    RunBinding,
    bind_standins,
    run_sync,
)
from sparqlab.platform.base import Method, MethodOutput
from sparqlab.platform.context import PrepareContext, QuestionContext, RoleModel, token_counts
from sparqlab.runs import manifest as provenance
from sparqlab.runs.config import (
    RUN_FORMAT,
    SERVED_PREFIX,
    RunConfig,
    apply_limit,
    check_format,
    identity,
    make_run_id,
    questions_fingerprint,
    select_shard,
    shard_folder_name,
)
from sparqlab.runs.manifest import manifest_document
from sparqlab.runs.metrics import (
    GENERATED_ONLY,
    KG_CLIENT_PREFIX,
    SNAPSHOT_ERROR_MARK,
    SNAPSHOT_SOURCE,
    gold_snapshot_entry,
    kg_client_totals,
    metrics_document,
)
from sparqlab.runs.records import prediction_record, run_header, score_values
from sparqlab.runs.store import CONFIG, ENVIRONMENT, MANIFEST, METRICS, RunStore, read_json, write_json

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


class MethodCannotAnswer(ValueError):
    """The method, as configured, cannot answer the run's questions (:meth:`Method.cannot_answer`): said before
    any work instead of a run whose every question fails."""


def gold_problem(answers: list[str] | None, source: str | None) -> str | None:
    """What is wrong with a gold query's outcome (:meth:`Runner._gold_answers`): the engine's error, or ``no
    answer`` for an empty result; ``None`` when it answered."""
    if source and source.startswith("error: "):
        return source.removeprefix("error: ")
    return "no answer" if source in ("gold_sparql", SNAPSHOT_SOURCE) and not answers else None


class GoldQueriesFailed(ValueError):
    """Gold queries of the run's questions fail or return nothing on the run's KG: found before any question is
    answered, so a researcher's own dataset or KG is fixed before a run scores against nothing."""


SHOWN_GOLD_PROBLEMS = 10
"""At most this many gold problems are listed one by one; the rest are counted."""


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


def stop_if_infrastructure(error: Exception, where: str) -> None:
    """Raise ``error`` as an :class:`InfrastructureError` when it is a failure of the machinery in disguise (a
    full disk, a missing module) so that it stops the run instead of becoming the question's answer."""
    cause = as_infrastructure(error, where)
    if cause is not None:
        raise cause from error


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
    runner = Runner(method, questions, config or RunConfig(), kg=kg, model=model)
    try:
        return await runner.execute(set(redo_errors))
    finally:
        if kg is None:  # the run opened it: its query workers, or the server of an engine axis, stop now
            runner.kg.close()


def load_run_questions(questions: Sequence[Question] | None, config: RunConfig) -> tuple[list[Question], str | None]:
    """The questions given or loaded, and the split they came from (a named dataset's default split made
    explicit, so that leaving ``split`` unset and naming the default give the same run)."""
    split = config.split
    if questions is not None and config.language is not None:
        raise ValueError("RunConfig.language selects the questions of config.dataset; with questions passed in, "
                         "pass the questions of that language instead")
    if questions is None:
        if not config.dataset:
            raise ValueError("no questions: pass questions=... or set RunConfig.dataset (e.g. 'metaqa-1hop')")
        from sparqlab.data import DATASETS, load

        if split is None and config.dataset in DATASETS:
            split = DATASETS[config.dataset].default_split
        questions = load(config.dataset, split, language=config.language)
    for question in questions:
        check_id(question.id)
    return list(questions), split


def answerable(question: Question, kg: KnowledgeGraph) -> bool:
    """Whether ``question`` is answerable on ``kg``: its gold query runs without error and gives at least one
    row (an ASK always answers); without a gold query, whether it has gold answers."""
    if not question.gold_sparql:
        return bool(question.gold_answers)
    try:
        result = kg.query(question.gold_sparql)
    except KGError:
        return False
    return not result.is_empty


def _select_questions(questions: list[Question], config: RunConfig, kg: KnowledgeGraph) -> list[Question]:
    """``select`` (a rule-defined subset, checked in parallel on the KG), then ``limit``, then ``sample``."""
    if config.select == "answerable":
        with ThreadPoolExecutor(config.resources.select_threads, "sparqlab-select") as pool:
            keep = list(pool.map(lambda q: answerable(q, kg), questions))
        questions = [q for q, ok in zip(questions, keep, strict=True) if ok]
    questions = apply_limit(questions, config.limit)
    if config.sample is not None:
        from sparqlab.data.sampling import sample_questions

        questions = sample_questions(questions, config.sample, config.sample_seed)
    if not questions:
        raise ValueError(f"no questions to run ({config.dataset or 'questions=...'} gives none after "
                         "select/limit/sample); nothing was written")
    return questions


def resolve_run_kg(config: RunConfig, kg: KnowledgeGraph | None, questions: list[Question]) -> tuple[Any, str]:
    """The run's KG and its name: ``kg`` when passed in, else ``config.kg`` (or the one KG the questions name)
    opened by :func:`open_run_kg`."""
    if kg is not None:
        name = kg.profile.name
        if config.kg and name not in (config.kg, short_name(config.kg)):  # a file or URL names its KG by its stem/host
            raise ValueError(f"config.kg is {config.kg!r} but the KG passed in is {name!r}")
        return kg, name
    name = config.kg
    if not name:
        names = {q.kg for q in questions if q.kg}
        if len(names) != 1:
            raise ValueError("set RunConfig.kg: the questions do not name one KG "
                             f"({', '.join(sorted(names)) or 'none given'})")
        name = names.pop()
    return open_run_kg(config, name), name


def open_run_kg(config: RunConfig, name: str) -> KnowledgeGraph:
    """The KG ``name`` as a run with ``config`` opens it: at ``kg_url`` when given (``name`` then picks the
    profile, when it is a registered one), with :func:`kg_open_options`."""
    from sparqlab.kg import PROFILES, open_kg

    options = kg_open_options(config)
    if config.kg_url:
        return open_kg(config.kg_url, profile=name if name in PROFILES else None, **options)
    return open_kg(name, **options)


def kg_open_options(config: RunConfig) -> dict[str, Any]:
    """``open_kg`` options of a run: ``config.kg_options`` over an embedded store's query-worker count sized
    from the run's concurrency (:class:`~sparqlab.runs.resources.ExecutionResources`), so an agent running many
    queries per question is not held to two workers."""
    return {"workers": config.resources.kg_query_workers, **config.kg_options}


def _cached_model(config: RunConfig, name: str, url: str | None, options: dict[str, Any]) -> ChatModel:
    from sparqlab.llm import make_model

    spec = {"model": name, **options, "cache_mode": config.cache, "cache_path": config.cache_path}
    if url and url.startswith(SERVED_PREFIX):
        served = url.removeprefix(SERVED_PREFIX)
        if served not in config.served_urls:
            raise ValueError(f"model {name!r} is at {url}: the model server a job with a serve: block starts "
                             "(docs/sweeps.md); run it through that sweep, or give the server's URL "
                             f"(--served-urls {served}=URL, or --model-url URL for a new run)")
        url = config.served_urls[served]
    if url:
        spec["base_url"] = url
    return make_model(spec)


def needs_run_model(method: Method, config: RunConfig) -> bool:
    """Whether the method calls a model through a role the run does not map to another model."""
    return method.needs_model and any(role not in config.model_roles for role in method.roles)


def _resolve_model(config: RunConfig, model: ChatModel | None, method: Method) -> ChatModel | None:
    """The run's own model (``config`` is :meth:`RunConfig.resolved`), or a ready one passed in."""
    if model is not None:
        if config.model and config.model != model.name:
            raise ValueError(f"config.model is {config.model!r} but the model passed in is {model.name!r}")
        return model if isinstance(model, CachedModel) else CachedModel(model, config.cache_path, config.cache)
    if not config.model:
        if needs_run_model(method, config):
            from sparqlab.llm.standins import standin_names

            raise ValueError(f"method {method.name!r} needs a model: name one (sparqlab run -m NAME, "
                             f"RunConfig(model=NAME)): a stand-in ({', '.join(standin_names())}) or the name your "
                             "server serves with its URL (--model-url URL, model_url=URL); or set SPARQLAB_MODEL")
        return None
    return _cached_model(config, config.model, config.model_url, config.model_options)


def served_url(model: ChatModel) -> str | None:
    """The endpoint a ready model is reached at (``None`` in process), from its description."""
    description: Any = model.describe()
    while isinstance(description, dict):
        if description.get("base_url"):
            return description["base_url"]
        description = description.get("base") if isinstance(description.get("base"), dict) \
            else description.get("inner")
    return None


def _resolve_roles(config: RunConfig, model: ChatModel | None, method: Method) -> dict[str, RoleModel]:
    """One model per method role: ``config.model_roles[role]`` or the run's model."""
    unknown = sorted(set(config.model_roles) - set(method.roles))
    if unknown:
        raise ValueError(f"model_roles names {', '.join(unknown)}, which method {method.name!r} does not have; "
                         f"its roles: {', '.join(method.roles) or '(none)'}")
    base = config.sampling_params()
    roles = {}
    for role in method.roles:
        spec = config.model_roles.get(role)
        if spec is None:
            if model is not None:
                roles[role] = RoleModel(role, model, base)
            continue
        roles[role] = RoleModel(role, _cached_model(config, spec.model, spec.url, spec.options),
                                {**base, **spec.params.request_params()})
    return roles


def _normalised_text(text: str) -> str:
    return " ".join(text.casefold().split())


def model_pools(roles: Mapping[str, Any]) -> dict[str, list[Question]]:
    """The question sets the run's models remember (a stand-in's ``memory``: ``{"dataset", "split", "start",
    "stop"}`` in its description, or the ``ids`` it drew, as GGC's ``standin-knn`` has), by ``dataset:split``."""
    from sparqlab.data import load

    pools = {}
    for spec in roles.values():
        memory = spec.model.describe().get("memory")
        if isinstance(memory, Mapping) and memory.get("dataset"):
            name = f"{memory['dataset']}:{memory.get('split')}"
            if name not in pools:
                questions = load(memory["dataset"], memory.get("split"))
                ids = set(memory.get("ids") or ())  # a drawn portion's questions, else a slice
                pools[name] = ([q for q in questions if q.id in ids] if ids
                               else questions[memory.get("start") or 0:memory.get("stop")])
    return pools


def check_examples(method: Method, questions: Sequence[Question]) -> None:
    """Refuse few-shot / training examples whose id or text is among the scored questions."""
    ids = {q.id for q in questions}
    texts = {_normalised_text(q.text): q.id for q in questions}
    by_id = sorted(method.example_ids() & ids)
    by_text = sorted(texts[t] for t in {_normalised_text(t) for t in method.example_texts()} if t in texts)
    if by_id or by_text:
        parts = ([f"ids {', '.join(by_id[:5])}"] if by_id else []) + \
                ([f"texts of {', '.join(by_text[:5])}"] if by_text else [])
        raise ValueError(f"method {method.name!r} uses few-shot or training examples that are among the scored "
                         f"questions ({'; '.join(parts)}{' ...' if max(len(by_id), len(by_text)) > 5 else ''}); "
                         "take examples from another split")


class Runner:
    """One invocation of a run: resolves questions, KG and models, prepares the method, opens the results folder,
    answers, scores."""

    def __init__(self, method: Method, questions: Sequence[Question] | None, config: RunConfig, *,
                 kg: KnowledgeGraph | None = None, model: ChatModel | None = None):
        self.method = method
        config = config.resolved(model is None and needs_run_model(method, config))
        self.model = _resolve_model(config, model, method)  # before any work: a missing model fails at once
        self.roles = _resolve_roles(config, self.model, method)
        loaded, split = load_run_questions(questions, config)
        self.kg, kg_name = resolve_run_kg(config, kg, loaded)
        self.all_questions = _select_questions(loaded, config, self.kg)
        self.config = config.replace(kg=kg_name, split=split, model=self.model.name if self.model else None,
                                     model_url=(config.model_url or served_url(self.model)) if self.model else None,
                                     answer_match=resolve_mode(config.answer_match, self.kg))
        self.fingerprint = questions_fingerprint(self.all_questions)
        self.n_total = len(self.all_questions)
        self.evaluation_set = evaluation_set_note(config.dataset if questions is None else None, split,
                                                  len(loaded), config.select, config.limit, config.sample)
        if self.evaluation_set:  # the run says so, and manifest.json keeps it
            print(f"sparqlab run: note: this run {self.evaluation_set}", file=sys.stderr)
        self.questions = select_shard(self.all_questions, self.config.shard_index, self.config.num_shards)
        models = [self.model, *(r.model for r in self.roles.values())]
        self.models = list({id(m): m for m in models if m is not None}.values())
        training = training_source(self.config.dataset, self.config.split, self.kg.profile.train_dataset)
        bind_standins(self.models, RunBinding(self.kg, training))
        self._pool = ThreadPoolExecutor(max_workers=self.config.resources.runner_threads,
                                        thread_name_prefix="sparqlab-run")
        self._gold: dict[str, asyncio.Future] = {}
        self.gold_snapshot, self.gold_snapshot_note = self._gold_snapshot()
        self.prepare_stats: dict[str, Any] = {}
        self._kg_stats_start = self.kg.service.stats()
        self.method_config: dict[str, Any] = {}
        self.leakage: dict[str, Any] | None = None  # near-duplicates of the pools the method read, by pool
        self.endpoint_slots: dict[str, int] = {}
        self.question_workers = self.config.resources.question_workers
        self.run_id = ""
        self.identity: dict[str, Any] = {}
        self.run_dir = Path()

    def _gold_snapshot(self) -> tuple[GoldSnapshot | None, dict[str, Any] | None]:
        """The gold snapshot this run scores against (``RunConfig.gold_snapshot``) and what ``metrics.json`` says
        about it; none when no question lacks shipped gold answers. An explicit file that does not fit the run
        (another KG or answer rule) is an error; an automatically found one is then left unused, and said so."""
        choice = self.config.gold_snapshot
        needed = any(q.gold_answers is None and q.gold_sparql for q in self.all_questions)
        if choice == "off" or self.config.generate_only or not needed:
            return None, None
        path = find_snapshot(self.config.dataset, self.config.split, self.config.kg) if choice == "auto" \
            else Path(choice)
        if path is None:
            return None, None
        if not path.exists():
            raise FileNotFoundError(f"no gold snapshot at {path} (RunConfig.gold_snapshot); take one with "
                                    "`sparqlab data snapshot-gold`")
        snapshot = GoldSnapshot.load(path)
        problem = (f"it was taken on KG {snapshot.kg!r}, this run is on {self.config.kg!r}"
                   if snapshot.kg != self.config.kg else
                   f"its answers follow answer_match={snapshot.answer_match!r}, this run compares by "
                   f"{self.config.answer_match!r}" if snapshot.answer_match != self.config.answer_match else None)
        if problem and choice != "auto":
            raise ValueError(f"the gold snapshot {path} does not fit this run: {problem}")
        if problem:
            return None, {"file": str(path), "used": False, "reason": problem}
        return snapshot, {"file": str(path), "used": True, **snapshot.describe()}

    # -- preparation ----------------------------------------------------------------------------------------

    async def _sub_run(self, method: Method, questions: Sequence[Question], *, experiment: str,
                       role: str) -> RunResult:
        """A nested run for :meth:`PrepareContext.sub_run`: same KG and output root, the model of ``role`` with
        its sampling parameters, questions given (never the scored ones: the context's caller took them from
        ``train_questions``)."""
        target = self.roles[role]
        config = RunConfig(experiment=experiment, kg=self.kg.profile.name, model_params=dict(target.params),
                           output_root=self.config.output_root, progress=self.config.progress)
        return await arun(method, list(questions), config, kg=self.kg, model=target.model)

    async def prepare(self) -> None:
        """``method.prepare`` once, the example-overlap check, then the run id (which hashes the method's
        prompt and artifact digests, known only after preparation)."""
        started = time.perf_counter()
        ctx = PrepareContext(self.kg, self.roles, scored_dataset=self.config.dataset,
                             scored_split=self.config.split, scored_ids=frozenset(q.id for q in self.all_questions),
                             sub_runner=self._sub_run)
        try:
            await self.method.prepare(ctx)
        except BaseException:
            ctx.finish(succeeded=False)
            raise
        ctx.finish(succeeded=True)
        check_examples(self.method, self.all_questions)
        pools = {**ctx.pools, **model_pools(self.roles)}
        if pools:
            from sparqlab.runs.leakage import pool_reports

            self.leakage = await asyncio.to_thread(pool_reports, pools, self.all_questions)
        self.method_config = self.method.describe()
        self.prepare_stats = {
            "wall_s": round(time.perf_counter() - started, 6),
            "model_calls": ctx.usage.to_dict()["calls"],
            "tokens": token_counts(ctx.usage),
            "kg_calls": dict(ctx.kg_calls),
            "artifacts": self.method_config["artifacts"],
        }
        self.engine = self.kg.engine()
        self.identity = identity(self.config, self.method_config, self.fingerprint, self.kg.identity,
                                 self.kg.profile.digest(), self.gold_snapshot.digest if self.gold_snapshot else None,
                                 kg_engine=self.engine)
        self.run_id = make_run_id(self.config, self.identity)
        self.run_dir = (self.config.root() / self.config.experiment
                        / shard_folder_name(self.run_id, self.config.shard_index, self.config.num_shards))

    # -- folder ---------------------------------------------------------------------------------------------

    def _config_json(self) -> dict[str, Any]:
        return {
            "format": RUN_FORMAT,
            "run_id": self.run_id,
            "experiment": self.config.experiment,
            "run": self.config.to_dict(),
            "method": self.method_config,
            "method_class": f"{type(self.method).__module__}.{type(self.method).__qualname__}",
            "roles": {role: spec.model.name for role, spec in self.roles.items()},
            "questions": {"fingerprint": self.fingerprint, "n_total": self.n_total,
                          "dataset": self.config.dataset, "split": self.config.split, "limit": self.config.limit},
            "identity": self.identity,
            "sampling": self._sampling(),
        }

    def _sampling(self) -> dict[str, Any]:
        """Where each request parameter comes from: the explicit settings per role (the run's
        ``model_params``, a role's ``params``) win over the method's defaults per call kind (its
        config's ``{kind}_*`` fields); parameters an algorithm fixes (a validation vote's seed) win over both."""
        config = self.method.config
        return {"precedence": ["fixed by the method's algorithm", "explicit: run model_params / role params",
                               "method default per call kind: {kind}_* config fields"],
                "explicit": {role: dict(spec.params) for role, spec in self.roles.items()},
                "method_defaults": {kind: config.call_params(kind) for kind in config.call_kinds}}

    def _header(self) -> dict[str, Any]:
        """Identifying fields shared by ``manifest.json`` and ``metrics.json``."""
        return run_header(
            run_id=self.run_id, experiment=self.config.experiment, folder=self.run_dir.name,
            method=self.method.name, model=self.config.model, model_is_standin=self.model_is_standin,
            kg=self.config.kg, engine=self.engine.label, dataset=self.config.dataset, split=self.config.split,
            shard_index=self.config.shard_index, num_shards=self.config.num_shards,
            answer_match=self.config.answer_match)

    @property
    def model_is_standin(self) -> bool | None:
        """Whether a model of the run is a stand-in, read when recorded: asking a server what it serves can tell
        (a served tiny random decoder)."""
        return any(provenance.is_standin(m) for m in self.models) if self.models else None

    def _manifest(self, status: str, n_done: int) -> dict[str, Any]:
        document = manifest_document(self._header(), status, n_done, self.fingerprint, self.n_total,
                                     [q.id for q in self.questions])
        return {**document, "evaluation_set": self.evaluation_set} if self.evaluation_set else document

    def _write_provenance(self) -> None:
        config_path = self.run_dir / CONFIG
        if config_path.exists():
            document = read_json(config_path)
            check_format(document, str(config_path))
            stored = document.get("run_id")
            if stored != self.run_id:
                raise ValueError(f"{config_path} belongs to run {stored!r}, not {self.run_id!r}; "
                                 "refusing to mix two runs in one folder")
        write_json(config_path, self._config_json())
        env = provenance.environment(self.model, self.kg)
        env["roles"] = {role: provenance.describe_model(spec.model) for role, spec in self.roles.items()}
        warnings = sorted({warning for described in [env["model"], *env["roles"].values()] if described
                           for warning in described.get("warnings", ())})
        if warnings:  # e.g. a model name the endpoint does not list, accepted on request
            env["warnings"] = warnings
        env_path = self.run_dir / ENVIRONMENT
        if env_path.exists():
            first = read_json(env_path)
            first.setdefault("resumes", []).append(provenance.resume_entry(env))
            env = first
        write_json(env_path, env)

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

    def _execute(self, sparql: str) -> list[str]:
        """Blocking: run a query and turn its result into answers."""
        return self._answers(self.kg.query(sparql))

    async def _run_final_query(self, sparql: str) -> QueryResult:
        """The default final-query execution (:meth:`QuestionContext.final_query`): the runner's worker pool."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, self.kg.query, sparql)

    async def _final_answers(self, output: MethodOutput, ctx: QuestionContext, deadline: float | None = None
                             ) -> tuple[list[str] | None, str | None, QueryResult | None]:
        """Execute the final query through the method's hook; the answers (``None`` if there are none), an error
        category and the raw result (``None`` when there is none)."""
        if output.sparql is None:
            return None, None, None
        sparql = output.sparql
        scope = self._time_limit(deadline)
        try:
            async with scope:
                result = await self.method.execute_final(output, ctx)
            answers = await asyncio.get_running_loop().run_in_executor(self._pool, self._answers, result)
        except TimeoutError as error:
            if not scope.expired():
                return (*self._final_error(ctx, sparql, "answer_error", error), None)
            ctx.log("final_query", sparql=sparql, error="final_query_timeout",
                    message=f"final-query execution exceeded {self.config.question_timeout_s} s")
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
            return (*self._final_error(ctx, sparql, "answer_error", error), None)
        ctx.log("final_query", sparql=sparql, answers=answers, rows=len(result), truncated=result.truncated,
                cached=result.cached, elapsed_s=round(result.elapsed_s, 6))
        return answers, None, result

    @staticmethod
    def _final_error(ctx: QuestionContext, sparql: str, kind: str, error: Exception) -> tuple[None, str]:
        ctx.log("final_query", sparql=sparql, error=kind, message=str(error),
                traceback="".join(traceback.format_exception(error)))
        return None, kind

    async def _gold_answers(self, question: Question) -> tuple[list[str] | None, str | None]:
        """Gold answers and where they came from (``given``, ``gold_sparql``, or ``error: <kind>: <message>``)."""
        if question.gold_answers is not None:
            return list(question.gold_answers), "given"
        if not question.gold_sparql:
            return None, None
        entry = self.gold_snapshot.lookup(question) if self.gold_snapshot else None
        if entry is not None:
            if "error" in entry:
                return None, f"{entry['error']} {SNAPSHOT_ERROR_MARK}"
            return list(entry["answers"]), SNAPSHOT_SOURCE
        future = self._gold.get(question.gold_sparql)
        if future is None:
            loop = asyncio.get_running_loop()
            future = loop.run_in_executor(self._pool, self._execute, question.gold_sparql)
            self._gold[question.gold_sparql] = future
        try:
            answers = await asyncio.shield(future)
        except InfrastructureError:  # not the gold query's fault: the run stops
            raise
        except Exception as error:  # a broken gold query leaves the question unscored, not the run crashed
            stop_if_infrastructure(error, f"the gold query of question {question.id}")
            return None, gold_error_source(error)
        return answers, "gold_sparql"

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
        result = None
        if self.config.generate_only:  # queries only; sparqlab.runs.scoring executes and scores them later
            predicted, query_error = None, None
            gold, gold_source = question.gold_answers, GENERATED_ONLY
        else:
            predicted, query_error, result = await self._final_answers(output, ctx, deadline)
            gold, gold_source = await self._gold_answers(question)
            if self.config.answer_match == "either" and predicted and gold is not None:
                predicted = await asyncio.get_running_loop().run_in_executor(
                    self._pool, match_either, predicted, gold, self.kg)
        latency = time.perf_counter() - started
        error_category = output.error_category or query_error
        scores, error_type = None, None
        if not self.config.generate_only:
            with scoring(question, "sparqlab.eval.score_and_categorise"):
                scores, error_type = score_and_categorise(output.sparql, predicted, error_category, gold,
                                                          question.gold_sparql, gold_source)
        usage = ctx.usage
        with scoring(question, "sparqlab.eval.text2sparql.official_question_scores"):
            official = {} if self.config.generate_only else official_question_scores(question, result, gold)
        record = prediction_record(
            id=question.id,
            question=question.text,
            answer_form=question.answer_form,
            predicted_sparql=output.sparql,
            predicted_answers=predicted,
            gold_sparql=question.gold_sparql,
            gold_answers=gold,
            gold_source=gold_source,
            **score_values(scores),
            error_category=error_category,
            error_type=error_type,
            model_calls=dict(sorted(usage.calls.items())),
            model_calls_uncached=usage.total_calls - usage.cached_calls,
            role_usage=ctx.role_usage_dict(),
            reply_outcomes=ctx.reply_outcomes_dict(),
            tokens=token_counts(usage),
            tokens_estimated=usage.estimated,
            kg_calls=dict(sorted(ctx.kg_calls.items())),
            latency_s=round(latency, 6),
            model_latency_s=round(usage.latency_s, 6),
            scores={**self._method_scores(question, output, predicted, gold),
                    **official},
            extra=output.extra,
            metadata=scalar_metadata(question),
            gold_complexity=query_complexity(question.gold_sparql),
            predicted_complexity=query_complexity(output.sparql),
        )
        return record, ctx.trace.to_json()

    # -- the run --------------------------------------------------------------------------------------------

    async def check_gold(self) -> None:
        """Run the gold queries of this shard's questions (their answers are kept for scoring; a gold snapshot's
        entries are read instead) and list those that fail or return nothing on the run's KG, before any question
        is answered: a :class:`GoldQueriesFailed` unless ``allow_gold_errors``, then a note."""
        if self.config.generate_only:
            return
        asked = [q for q in self.questions if q.gold_answers is None and q.gold_sparql]
        found = await asyncio.gather(*(self._gold_answers(q) for q in asked))
        problems = [f"{q.id}: {problem}" for q, (answers, source) in zip(asked, found, strict=True)
                    if (problem := gold_problem(answers, source))]
        if not problems:
            return
        listed = "\n".join(f"  {line}" for line in problems[:SHOWN_GOLD_PROBLEMS])
        more = f"\n  ... and {len(problems) - SHOWN_GOLD_PROBLEMS} more" if len(problems) > SHOWN_GOLD_PROBLEMS else ""
        what = (f"{len(problems)} of {len(asked)} gold queries fail or return nothing on {self.kg.profile.name}"
                f":\n{listed}{more}\n")
        if not self.config.allow_gold_errors:
            raise GoldQueriesFailed(what + "their questions cannot be scored: fix the dataset or the KG, or pass "
                                    "--allow-gold-errors (RunConfig.allow_gold_errors) to run and count them as "
                                    "gold errors")
        print(f"sparqlab run: note: {what}they count as gold errors (allow_gold_errors)", file=sys.stderr)

    async def execute(self, redo_errors: set[str]) -> RunResult:
        started = time.perf_counter()
        self._kg_stats_start = self.kg.service.stats()
        try:
            await self._check_models()
            reason = self.method.cannot_answer([q.public() for q in self.questions])
            if reason:
                raise MethodCannotAnswer(f"{self.method.name} cannot answer these questions: {reason}")
            await self.check_gold()
            await self.prepare()
        except BaseException as error:  # an interruption too: the pool and the model are released either way
            self._pool.shutdown(wait=False)
            await self._release_model()
            cause = as_infrastructure(error, f"preparing method {self.method.name!r}")
            if cause is None:
                raise
            raise RunAborted(f"preparing the run stopped: {str(cause).rstrip('.')}; nothing was answered or written, "
                             "the same call starts again") from cause
        store = RunStore(self.run_dir)
        done = store.open(redo_errors)
        try:
            self._write_provenance()
            todo = [q for q in self.questions if q.id not in done]
            write_json(self.run_dir / MANIFEST, self._manifest("running", len(self.questions) - len(todo)))
        except BaseException:
            store.close()
            self._pool.shutdown(wait=False)
            raise
        # Appends (with their fsyncs) run on one writer thread, in completion order, off the event loop.
        writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sparqlab-writer")
        answered = 0
        try:
            answered = await self._answer_all(todo, store, writer)
        finally:
            writer.shutdown(wait=True)
            try:
                metrics = self._finish(store, time.perf_counter() - started)
            finally:
                store.close()
                self._pool.shutdown(wait=False, cancel_futures=True)
                await self._release_model()
        return RunResult(self.run_dir, self.run_id, self.config, metrics, answered)

    async def _check_models(self) -> None:
        """Before any work: ask each endpoint what it serves under the name (environment.json and the cache key);
        a name it does not serve stops the run (:class:`~sparqlab.llm.errors.UnknownModel`). Then fit the run to
        the endpoints' slots (:meth:`_fit_to_slots`)."""
        for model in self.models:
            if isinstance(model, CachedModel):
                await model.check_identity()
        self._fit_to_slots()

    def _fit_to_slots(self) -> None:
        """Each endpoint gets at most its slots of requests at once (``model_slots``, else what it announced),
        shared by every model calling it; and no more questions are in flight than the slots of any model of the
        run, so that no question spends its deadline queueing for one."""
        by_url: dict[str, list[Any]] = {}
        for model in self.models:
            for endpoint in model.endpoints():
                by_url.setdefault(endpoint.base_url, []).append(endpoint)
        for url, endpoints in by_url.items():
            slots = self.config.model_slots or next((e.slots for e in endpoints if e.slots), None)
            if slots:  # a nested run (GGC's gate data) keeps the limit its parent run shares with other roles
                limit = next((e.in_flight_limit for e in endpoints
                              if e.in_flight_limit and e.in_flight_limit.slots == slots), None) or InFlightLimit(slots)
                for endpoint in endpoints:
                    endpoint.in_flight_limit = limit
                self.endpoint_slots[url] = slots
        totals = [sum(self.endpoint_slots[url] for url in {e.base_url for e in model.endpoints()})
                  for model in self.models
                  if model.endpoints() and all(e.base_url in self.endpoint_slots for e in model.endpoints())]
        self.question_workers = min([self.config.resources.question_workers, *totals])
        if self.question_workers < self.config.concurrency:
            print(f"sparqlab run: note: {self.question_workers} question(s) in flight, not {self.config.concurrency}:"
                  f" the model endpoint serves {min(totals)} request(s) at once (--model-slots, or its /props "
                  "total_slots)", file=sys.stderr)

    async def _release_model(self) -> None:
        """Close the models' connections of this event loop (a sync ``run`` closes its loop afterwards)."""
        for model in self.models:
            await model.aclose()

    async def _answer_all(self, todo: list[Question], store: RunStore, writer: ThreadPoolExecutor) -> int:
        from tqdm.auto import tqdm

        loop = asyncio.get_running_loop()
        pending = iter(todo)
        answered = 0
        bar = tqdm(total=len(self.questions), initial=len(self.questions) - len(todo), unit="q",
                   desc=f"{self.config.experiment}/{self.run_dir.name}", disable=not self.config.progress)

        async def worker() -> None:
            nonlocal answered
            for question in pending:
                record, trace = await self.answer(question)
                await loop.run_in_executor(writer, store.append, record, trace)
                answered += 1
                bar.update(1)

        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(min(self.question_workers, len(todo))):
                    group.create_task(worker())
        except BaseExceptionGroup as failures:
            first = failures.exceptions[0]
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            cause = as_infrastructure(first)
            if cause is not None:
                raise RunAborted(f"run {self.run_id} stopped: {cause} — the questions answered so far are saved "
                                 f"in {self.run_dir}; the same call resumes") from cause
            raise first from None
        finally:
            bar.close()
        return answered

    def _kg_client_metrics(self, metrics_path: Path) -> dict[str, Any]:
        """``kg_requests``, ``kg_retries``, ``kg_throttled``, ``kg_wait_s`` … of this run: what the KG's service
        client counted during this call (:meth:`~sparqlab.kg.service.ServiceClient.stats`), added to the
        counts an earlier call of the same run wrote (a resumed run keeps its totals)."""
        previous = read_json(metrics_path) if metrics_path.exists() else {}
        session = {f"{KG_CLIENT_PREFIX}{name}": value - self._kg_stats_start[name]
                   for name, value in self.kg.service.stats().items()}
        return kg_client_totals([{k: 0 for k in session}, previous, session])

    def _finish(self, store: RunStore, wall_time_s: float) -> dict[str, Any]:
        """Recompute ``metrics.json`` from every prediction of this folder; update the manifest."""
        wanted = {q.id for q in self.questions}
        records = [r for r in store.predictions() if r["id"] in wanted]
        metrics_path = self.run_dir / METRICS
        previous = read_json(metrics_path).get("wall_time_s", 0.0) if metrics_path.exists() else 0.0
        metrics = metrics_document(self._header(), records, len(self.questions), previous + wall_time_s,
                                   prepare=self.prepare_stats)
        if self.leakage is not None:
            metrics["leakage"] = self.leakage
        metrics.update(self._kg_client_metrics(metrics_path))
        metrics["gold_snapshot"] = gold_snapshot_entry(self.gold_snapshot_note, records)
        if self.model is not None:
            metrics["model_cache_last_session"] = self.model.stats()
        if self.endpoint_slots:  # what the last session fitted its concurrency to
            metrics["model_slots_last_session"] = {"slots": dict(self.endpoint_slots),
                                                   "questions_in_flight": self.question_workers}
        role_stats = {role: spec.model.stats() for role, spec in self.roles.items() if spec.model is not self.model}
        if role_stats:
            metrics["role_cache_last_session"] = role_stats
        write_json(metrics_path, metrics)
        write_json(self.run_dir / MANIFEST, self._manifest("complete" if metrics["complete"] else "incomplete",
                                                           metrics["n_done"]))
        return metrics
