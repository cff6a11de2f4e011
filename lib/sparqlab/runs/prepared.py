"""A run after its method is prepared: its identity and folder, and the documents it writes there.

:meth:`PreparedRun.prepare` calls ``method.prepare`` once (its cost reported apart in ``metrics.json``), refuses
few-shot or training examples that overlap the scored questions, measures leakage from the pools the method read,
and only then computes the run id (the method's prompt and artifact digests are part of it). The documents of the
folder (``config.json``, ``environment.json``, ``manifest.json``, ``metrics.json``) are written from here; the
runner (:mod:`sparqlab.runs.runner`) answers the questions.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparqlab.data.question import Question
from sparqlab.llm.cache import CachedModel
from sparqlab.platform.base import Method
from sparqlab.platform.context import PrepareContext, SubRunner, token_counts
from sparqlab.runs import manifest as provenance
from sparqlab.runs.config import RUN_FORMAT, check_format, identity, make_run_id, shard_folder_name
from sparqlab.runs.manifest import manifest_document
from sparqlab.runs.metrics import KG_CLIENT_PREFIX, gold_snapshot_entry, kg_client_totals, metrics_document
from sparqlab.runs.plan import RunPlan
from sparqlab.runs.records import run_header
from sparqlab.runs.resources import InFlight
from sparqlab.runs.store import CONFIG, ENVIRONMENT, MANIFEST, METRICS, read_json, write_json

if TYPE_CHECKING:
    from sparqlab.engines import Engine


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


@dataclass
class PreparedRun:
    """A planned run whose method is prepared: its run id, folder and what it records (module docstring)."""

    plan: RunPlan
    method_config: dict[str, Any]
    identity: dict[str, Any]
    run_id: str
    run_dir: Path
    engine: Engine
    prepare_stats: dict[str, Any]
    leakage: dict[str, Any] | None = None
    """Near-duplicates of the scored questions in the pools the method read, by pool."""

    @classmethod
    async def prepare(cls, plan: RunPlan, sub_runner: SubRunner) -> PreparedRun:
        """``method.prepare`` once, the example-overlap check, then the run id (module docstring)."""
        started = time.perf_counter()
        config, kg = plan.config, plan.kg
        ctx = PrepareContext(kg, plan.roles, scored_dataset=config.dataset, scored_split=config.split,
                             scored_ids=frozenset(q.id for q in plan.all_questions), sub_runner=sub_runner)
        try:
            await plan.method.prepare(ctx)
        except BaseException:
            ctx.finish(succeeded=False)
            raise
        ctx.finish(succeeded=True)
        check_examples(plan.method, plan.all_questions)
        pools = {**ctx.pools, **model_pools(plan.roles)}
        leakage = None
        if pools:
            from sparqlab.runs.leakage import pool_reports

            leakage = await asyncio.to_thread(pool_reports, pools, plan.all_questions)
        method_config = plan.method.describe()
        prepare_stats = {"wall_s": round(time.perf_counter() - started, 6), "model_calls": ctx.usage.to_dict()["calls"],
                         "tokens": token_counts(ctx.usage), "kg_calls": dict(ctx.kg_calls),
                         "artifacts": method_config["artifacts"]}
        engine = kg.engine()
        run_identity = identity(config, method_config, plan.fingerprint, kg.identity, kg.profile.digest(),
                                plan.gold_snapshot.digest if plan.gold_snapshot else None, kg_engine=engine)
        run_id = make_run_id(config, run_identity)
        run_dir = config.root() / config.experiment / shard_folder_name(run_id, config.shard_index, config.num_shards)
        return cls(plan, method_config, run_identity, run_id, run_dir, engine, prepare_stats, leakage)

    def config_json(self) -> dict[str, Any]:
        """``config.json``: the run's settings, method, roles, questions and identity."""
        plan, config = self.plan, self.plan.config
        return {
            "format": RUN_FORMAT,
            "run_id": self.run_id,
            "experiment": config.experiment,
            "run": config.to_dict(),
            "method": self.method_config,
            "method_class": f"{type(plan.method).__module__}.{type(plan.method).__qualname__}",
            "roles": {role: spec.model.name for role, spec in plan.roles.items()},
            "questions": {"fingerprint": plan.fingerprint, "n_total": len(plan.all_questions),
                          "dataset": config.dataset, "split": config.split, "limit": config.limit},
            "identity": self.identity,
            "sampling": self.sampling(),
        }

    def sampling(self) -> dict[str, Any]:
        """Where each request parameter comes from: the explicit settings per role (the run's
        ``model_params``, a role's ``params``) win over the method's defaults per call kind (its
        config's ``{kind}_*`` fields); parameters an algorithm fixes (a validation vote's seed) win over both."""
        config = self.plan.method.config
        return {"precedence": ["fixed by the method's algorithm", "explicit: run model_params / role params",
                               "method default per call kind: {kind}_* config fields"],
                "explicit": {role: dict(spec.params) for role, spec in self.plan.roles.items()},
                "method_defaults": {kind: config.call_params(kind) for kind in config.call_kinds}}

    def header(self) -> dict[str, Any]:
        """Identifying fields shared by ``manifest.json`` and ``metrics.json``."""
        config = self.plan.config
        return run_header(
            run_id=self.run_id, experiment=config.experiment, folder=self.run_dir.name,
            method=self.plan.method.name, model=config.model, model_is_standin=self.model_is_standin,
            kg=config.kg, engine=self.engine.label, dataset=config.dataset, split=config.split,
            shard_index=config.shard_index, num_shards=config.num_shards, answer_match=config.answer_match)

    @property
    def model_is_standin(self) -> bool | None:
        """Whether a model of the run is a stand-in, read when recorded: asking a server what it serves can tell
        (a served tiny random decoder)."""
        models = self.plan.models
        return any(provenance.is_standin(m) for m in models) if models else None

    def manifest(self, status: str, n_done: int) -> dict[str, Any]:
        plan = self.plan
        document = manifest_document(self.header(), status, n_done, plan.fingerprint, len(plan.all_questions),
                                     [q.id for q in plan.questions])
        return {**document, "evaluation_set": plan.evaluation_set} if plan.evaluation_set else document

    def write_provenance(self) -> None:
        """``config.json`` (refusing a folder of another run) and ``environment.json`` (a resume appends)."""
        config_path = self.run_dir / CONFIG
        if config_path.exists():
            document = read_json(config_path)
            check_format(document, str(config_path))
            stored = document.get("run_id")
            if stored != self.run_id:
                raise ValueError(f"{config_path} belongs to run {stored!r}, not {self.run_id!r}; "
                                 "refusing to mix two runs in one folder")
        write_json(config_path, self.config_json())
        env = provenance.environment(self.plan.model, self.plan.kg)
        env["roles"] = {role: provenance.describe_model(spec.model) for role, spec in self.plan.roles.items()}
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

    def _kg_client_metrics(self, metrics_path: Path, kg_stats_start: Mapping[str, float]) -> dict[str, Any]:
        """``kg_requests``, ``kg_retries``, ``kg_throttled``, ``kg_wait_s`` … of this run: what the KG's service
        client counted during this call (:meth:`~sparqlab.kg.service.ServiceClient.stats`), added to the
        counts an earlier call of the same run wrote (a resumed run keeps its totals)."""
        previous = read_json(metrics_path) if metrics_path.exists() else {}
        session = {f"{KG_CLIENT_PREFIX}{name}": value - kg_stats_start[name]
                   for name, value in self.plan.kg.service.stats().items()}
        return kg_client_totals([{k: 0 for k in session}, previous, session])

    def finish(self, predictions: Sequence[Mapping[str, Any]], wall_time_s: float, kg_stats_start: Mapping[str, float],
               slots: InFlight) -> dict[str, Any]:
        """Recompute ``metrics.json`` from every prediction of this folder (``predictions``) and this session's
        counts (KG client, caches, the model ``slots`` it fitted to); update the manifest."""
        plan = self.plan
        wanted = {q.id for q in plan.questions}
        records = [r for r in predictions if r["id"] in wanted]
        metrics_path = self.run_dir / METRICS
        previous = read_json(metrics_path).get("wall_time_s", 0.0) if metrics_path.exists() else 0.0
        metrics = metrics_document(self.header(), records, len(plan.questions), previous + wall_time_s,
                                   prepare=self.prepare_stats)
        if self.leakage is not None:
            metrics["leakage"] = self.leakage
        metrics.update(self._kg_client_metrics(metrics_path, kg_stats_start))
        metrics["gold_snapshot"] = gold_snapshot_entry(plan.gold_snapshot_note, records)
        if isinstance(plan.model, CachedModel):  # a run's models come with the response cache (runs.plan)
            metrics["model_cache_last_session"] = plan.model.stats()
        if slots.endpoint_slots:  # what the last session fitted its concurrency to
            metrics["model_slots_last_session"] = {"slots": dict(slots.endpoint_slots),
                                                   "questions_in_flight": slots.question_workers}
        role_stats = {role: spec.model.stats() for role, spec in plan.roles.items()
                      if isinstance(spec.model, CachedModel) and spec.model is not plan.model}
        if role_stats:
            metrics["role_cache_last_session"] = role_stats
        write_json(metrics_path, metrics)
        write_json(self.run_dir / MANIFEST, self.manifest("complete" if metrics["complete"] else "incomplete",
                                                          metrics["n_done"]))
        return metrics
