"""A run's plan, resolved before any work: :func:`build_plan` and :class:`RunPlan`.

Building the plan names the run's model and one model per method role (a name the run cannot resolve fails here),
loads and selects the questions and this shard's part of them, opens the KG, fixes the answer rule and finds the
gold snapshot. It calls no model and sends the KG no query, except for ``select=answerable``, which runs the gold
queries to choose the questions (skipped, and said so, in a dry run). :meth:`RunPlan.check` asks the method whether
it can answer these questions; :meth:`RunPlan.describe` is what ``sparqlab run --dry-run`` prints. The runner
(:mod:`sparqlab.runs.runner`) then executes the plan.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparqlab.core.names import short_name
from sparqlab.data.gold_snapshot import GoldSnapshot, find_snapshot
from sparqlab.data.question import Question, check_id
from sparqlab.data.registry import evaluation_set_note, training_source
from sparqlab.eval.matching import resolve_mode
from sparqlab.kg.errors import KGError
from sparqlab.llm import CachedModel, ChatModel, RunBinding, bind_standins
from sparqlab.platform.base import Method
from sparqlab.platform.context import RoleModel
from sparqlab.runs.config import SERVED_PREFIX, RunConfig, apply_limit, questions_fingerprint, select_shard

if TYPE_CHECKING:
    from sparqlab.kg.base import KnowledgeGraph


class MethodCannotAnswer(ValueError):
    """The method, as configured, cannot answer the run's questions (:meth:`Method.cannot_answer`): said before
    any work instead of a run whose every question fails."""


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



def _gold_snapshot(config: RunConfig, questions: Sequence[Question]) -> tuple[GoldSnapshot | None,
                                                                              dict[str, Any] | None]:
    """The gold snapshot a run scores against (``RunConfig.gold_snapshot``) and what ``metrics.json`` says
    about it; none when no question lacks shipped gold answers. An explicit file that does not fit the run
    (another KG or answer rule) is an error; an automatically found one is then left unused, and said so."""
    choice = config.gold_snapshot
    needed = any(q.gold_answers is None and q.gold_sparql for q in questions)
    if choice == "off" or config.generate_only or not needed:
        return None, None
    path = find_snapshot(config.dataset, config.split, config.kg) if choice == "auto" else Path(choice)
    if path is None:
        return None, None
    if not path.exists():
        raise FileNotFoundError(f"no gold snapshot at {path} (RunConfig.gold_snapshot); take one with "
                                "`sparqlab data snapshot-gold`")
    snapshot = GoldSnapshot.load(path)
    problem = (f"it was taken on KG {snapshot.kg!r}, this run is on {config.kg!r}"
               if snapshot.kg != config.kg else
               f"its answers follow answer_match={snapshot.answer_match!r}, this run compares by "
               f"{config.answer_match!r}" if snapshot.answer_match != config.answer_match else None)
    if problem and choice != "auto":
        raise ValueError(f"the gold snapshot {path} does not fit this run: {problem}")
    if problem:
        return None, {"file": str(path), "used": False, "reason": problem}
    return snapshot, {"file": str(path), "used": True, **snapshot.describe()}


@dataclass
class RunPlan:
    """Everything a run resolves before any work (module docstring). ``config`` is resolved: its ``kg``,
    ``split``, ``model``, ``model_url`` and ``answer_match`` are what the run uses and records."""

    method: Method
    config: RunConfig
    model: ChatModel | None
    """The run's own model (with the response cache), ``None`` for a method that needs none."""
    roles: dict[str, RoleModel]
    kg: KnowledgeGraph
    owns_kg: bool
    """The plan opened the KG (not passed in), so the run closes it."""
    all_questions: list[Question]
    """The selected questions of every shard (the run id's fingerprint)."""
    questions: list[Question]
    """This shard's questions."""
    evaluation_set: str | None
    """Why these are not a dataset's whole split (:func:`sparqlab.data.registry.evaluation_set_note`)."""
    gold_snapshot: GoldSnapshot | None
    gold_snapshot_note: dict[str, Any] | None
    selection_deferred: bool = False
    """A dry run left ``select=answerable`` unchecked: it would run the gold queries."""

    @property
    def models(self) -> list[ChatModel]:
        """Every distinct model of the run: its own and each role's."""
        models = [self.model, *(role.model for role in self.roles.values())]
        return list({id(m): m for m in models if m is not None}.values())

    @functools.cached_property
    def fingerprint(self) -> str:
        """The selected questions' fingerprint (part of the run id)."""
        return questions_fingerprint(self.all_questions)

    def check(self) -> None:
        """:class:`MethodCannotAnswer` when the method, as configured, cannot answer these questions."""
        reason = self.method.cannot_answer([q.public() for q in self.questions])
        if reason:
            raise MethodCannotAnswer(f"{self.method.name} cannot answer these questions: {reason}")

    def describe(self) -> str:
        """The plan as ``sparqlab run --dry-run`` prints it."""
        config = self.config
        roles = ", ".join(f"{role}={spec.model.name}" for role, spec in self.roles.items()) or "(none)"
        shard = f" (shard {config.shard_index + 1} of {config.num_shards})" if config.num_shards > 1 else ""
        lines = [f"method     {self.method.name} ({type(self.method).__name__})",
                 f"model      {config.model or '(none)'}" + (f" at {config.model_url}" if config.model_url else ""),
                 f"roles      {roles}",
                 f"kg         {config.kg} ({self.kg.identity})",
                 f"questions  {len(self.questions)}{shard} of {len(self.all_questions)}, from "
                 f"{config.dataset or 'questions given'}" + (f" split {config.split}" if config.split else ""),
                 f"answers    compared by {config.answer_match}",
                 "gold       " + _gold_line(self),
                 f"output     {config.root() / config.experiment}/"]
        if self.evaluation_set:
            lines.append(f"note       this run {self.evaluation_set}")
        if self.selection_deferred:
            lines.append("note       select=answerable runs every gold query on the KG: not in a dry run, so the "
                         "questions are counted before it")
        return "\n".join(lines)

    def close(self) -> None:
        """Close the KG when the plan opened it (its query workers, or the server of an engine axis, stop)."""
        if self.owns_kg:
            self.kg.close()


def _gold_line(plan: RunPlan) -> str:
    if plan.config.generate_only:
        return "none: generation only, nothing is executed or scored"
    given = sum(q.gold_answers is not None for q in plan.questions)
    queried = sum(q.gold_answers is None and bool(q.gold_sparql) for q in plan.questions)
    note = plan.gold_snapshot_note
    snapshot = f", snapshot {note['file']}" + ("" if note["used"] else f" not used: {note['reason']}") if note else ""
    return f"{given} given, {queried} from gold queries{snapshot}"


def build_plan(method: Method, questions: Sequence[Question] | None, config: RunConfig, *,
               kg: KnowledgeGraph | None = None, model: ChatModel | None = None, dry_run: bool = False) -> RunPlan:
    """Resolve a run (module docstring): ``kg`` / ``model`` are ready objects to use instead of opening
    ``config.kg`` / ``config.model``. ``dry_run`` leaves ``select=answerable`` unchecked (it queries the KG)."""
    config = config.resolved(model is None and needs_run_model(method, config))
    run_model = _resolve_model(config, model, method)  # before any work: a missing model fails at once
    roles = _resolve_roles(config, run_model, method)
    loaded, split = load_run_questions(questions, config)
    run_kg, kg_name = resolve_run_kg(config, kg, loaded)
    try:
        deferred = dry_run and config.select == "answerable"
        selected = _select_questions(loaded, config.replace(select=None) if deferred else config, run_kg)
        config = config.replace(kg=kg_name, split=split, model=run_model.name if run_model else None,
                                model_url=(config.model_url or served_url(run_model)) if run_model else None,
                                answer_match=resolve_mode(config.answer_match, run_kg))
        note = evaluation_set_note(config.dataset if questions is None else None, split, len(loaded), config.select,
                                   config.limit, config.sample)
        snapshot, snapshot_note = _gold_snapshot(config, selected)
        plan = RunPlan(method, config, run_model, roles, run_kg, kg is None, selected,
                       select_shard(selected, config.shard_index, config.num_shards), note, snapshot, snapshot_note,
                       deferred)
    except BaseException:
        if kg is None:
            run_kg.close()
        raise
    bind_standins(plan.models, RunBinding(run_kg, training_source(config.dataset, config.split,
                                                                    run_kg.profile.train_dataset)))
    return plan
