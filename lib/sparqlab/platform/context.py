"""What a method gets from the runner: a per-question context and a once-per-run preparation context.

Every model call and every KG access of a method goes through these objects, so cost is counted per model role,
per call kind and per KG tool, and every step lands in the typed trace (:mod:`sparqlab.platform.trace`). The
question a method sees is :meth:`~sparqlab.data.Question.public` — no gold query, no gold answers, no gold-derived
metadata; only the runner's scoring sees the full question.
"""

from __future__ import annotations

import asyncio
import fcntl
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparqlab.core.hashing import stable_hash
from sparqlab.core.paths import cache_dir
from sparqlab.kg.errors import KGError
from sparqlab.kg.neighbourhood import VALUES_PER_PROPERTY, Neighbourhood, lookup, property_examples
from sparqlab.kg.results import QueryResult
from sparqlab.llm.accounting import UsageTotals
from sparqlab.llm.base import ChatModel, ChatRequest, ChatResponse, Message
from sparqlab.llm.errors import ContextOverflow
from sparqlab.llm.replies import reply_outcome
from sparqlab.platform.trace import Trace

if TYPE_CHECKING:
    from sparqlab.data.question import Question
    from sparqlab.kg.base import KnowledgeGraph
    from sparqlab.kg.results import SearchHit

KG_TOOLS = ("query", "search", "lookup", "examples")
"""The KG calls a context counts (``kg_calls`` keys)."""


def token_counts(usage: UsageTotals) -> dict[str, int]:
    """``{"prompt", "completion", "total", "prompt_recomputed"}`` tokens of ``usage``, plus ``prompt_cached``
    when a server reported it: the ``tokens`` shape of records and metrics (``prompt_recomputed``: the prompt
    tokens a vLLM server with automatic prefix caching would compute, simulated by
    :mod:`sparqlab.llm.prefix_cache`; ``prompt_cached``: the prompt tokens the servers said they took from their
    cache)."""
    counts = {"prompt": usage.prompt_tokens, "completion": usage.completion_tokens, "total": usage.total_tokens,
              "prompt_recomputed": usage.prompt_recomputed}
    return counts if usage.prompt_cached is None else {**counts, "prompt_cached": usage.prompt_cached}


@dataclass
class RoleModel:
    """The model behind one role of a run, with the sampling parameters of that role's requests."""

    role: str
    model: ChatModel
    params: dict[str, Any] = field(default_factory=dict)


class _ModelAccess:
    """Shared by both contexts: role-routed chat calls with per-role and per-kind accounting."""

    def __init__(self, models: Mapping[str, RoleModel], trace: Trace):
        self.models = dict(models)
        self.trace = trace
        self.usage = UsageTotals()
        self.role_usage: dict[str, UsageTotals] = {}
        self.reply_outcomes: dict[str, Counter] = {}
        self.step: int | None = None

    @property
    def default_role(self) -> str | None:
        return next(iter(self.models), None)

    def _role_model(self, role: str | None) -> RoleModel:
        role = role or self.default_role
        if role is None:
            raise RuntimeError("this method declared no model roles, but it called the model")
        if role not in self.models:
            raise ValueError(f"model role {role!r} is not one of the method's roles "
                             f"({', '.join(self.models)}); declare it in the method's `roles`")
        return self.models[role]

    async def chat(self, messages: list[Message], role: str | None = None, kind: str = "generate",
                   defaults: Mapping[str, Any] | None = None, **params: Any) -> ChatResponse:
        """Call the model of ``role`` (default: the method's first role). Counted per role and per ``kind``; the
        trace gets the new messages, the finish reason and any reasoning.

        Sampling precedence, highest first: ``params``, fixed by the method's algorithm (a
        validation vote's seed); the explicit user settings of the role (the run's ``model_params``, the role's
        ``params``); the method's per-kind ``defaults`` (its config's ``{kind}_*`` fields,
        :meth:`~sparqlab.methods.MethodConfig.call_params`). ``None`` values in ``defaults`` are not sent."""
        target = self._role_model(role)
        chosen = {k: v for k, v in (defaults or {}).items() if v is not None}
        request = ChatRequest.build(target.model.name, messages, **{**chosen, **target.params, **params})
        try:
            response = await target.model.acomplete(request)
        except ContextOverflow:
            self.reply_outcomes.setdefault(kind, Counter())["context_overflow"] += 1
            self.trace.add("context_overflow", self.step, target.role, {"kind": kind})
            raise
        self.usage.add(response, kind)
        self.role_usage.setdefault(target.role, UsageTotals()).add(response, kind)
        outcome = reply_outcome(response.text, response.finish_reason, response.reasoning, response.tool_calls)
        if outcome is not None:
            self.reply_outcomes.setdefault(kind, Counter())[outcome] += 1
        if response.retries:
            self.reply_outcomes.setdefault(kind, Counter())["retries"] += response.retries
        extra: dict[str, Any] = {"outcome": outcome} if outcome is not None else {}
        if response.retries:
            extra["retries"] = response.retries
        if response.reasoning:
            extra["reasoning"] = response.reasoning
        if response.tool_calls:
            extra["tool_calls"] = response.tool_calls
        self.trace.model_call(request.message_dicts, response.text, step=self.step, role=target.role, kind=kind,
                              model=target.model.name,
                              usage={"prompt": response.usage.prompt_tokens,
                                     "completion": response.usage.completion_tokens},
                              cached=response.cached, finish_reason=response.finish_reason, **extra)
        return response

    def reply_outcomes_dict(self) -> dict[str, dict[str, int]]:
        """``{call kind: {outcome: n}}`` of the replies that did not end normally with text
        (:func:`sparqlab.llm.replies.reply_outcome`: ``truncated``, ``reasoning_exhausted``, ``empty`` ...), the
        client's ``retries`` and the calls refused as ``context_overflow``."""
        return {kind: dict(sorted(c.items())) for kind, c in sorted(self.reply_outcomes.items())}

    def role_usage_dict(self) -> dict[str, dict[str, Any]]:
        """``{role: {"calls": {kind: n}, "tokens": {"prompt", "completion", "total"}}}``."""
        return {role: {"calls": dict(sorted(u.calls.items())), "tokens": token_counts(u)}
                for role, u in sorted(self.role_usage.items())}


class QuestionContext(_ModelAccess):
    """Per-question access to the models and the KG.

    ``question`` is the public question; ``kg`` is there for reading the profile, but KG access goes through
    :meth:`query`, :meth:`search`, :meth:`lookup` and :meth:`examples`, counted per tool in ``kg_calls``.
    ``step`` (agents set it) is stamped on every event the context logs.
    """

    def __init__(self, question: Question, kg: KnowledgeGraph, models: Mapping[str, RoleModel] | None = None, *,
                 final_executor: Callable[[str], Awaitable[QueryResult]] | None = None):
        super().__init__(models or {}, Trace())
        self.question = question
        self.kg = kg
        self.kg_calls: Counter = Counter()
        self._final_executor = final_executor

    def log(self, kind: str, /, step: int | None = None, role: str | None = None, **data: Any) -> None:
        """Append one typed event (``step`` defaults to the context's current step)."""
        self.trace.add(kind, self.step if step is None else step, role, data)

    async def _tool(self, tool: str, call: Callable[[], Any]) -> Any:
        self.kg_calls[tool] += 1
        return await asyncio.to_thread(call)

    async def query(self, sparql: str, **options: Any) -> QueryResult | KGError:
        """Run a query; a KG error is returned (and traced), never raised, so a malformed query becomes an
        observation rather than a crash. ``options``: ``timeout_s``, ``max_rows``."""
        try:
            result = await self._tool("query", lambda: self.kg.query(sparql, **options))
        except KGError as error:
            self.log("query", sparql=sparql, error=error.kind, message=str(error))
            return error
        self.log("query", sparql=sparql, rows=len(result), truncated=result.truncated, cached=result.cached)
        return result

    async def search(self, text: str, kind: str = "entity", limit: int = 10,
                     types: list[str] | None = None) -> list[SearchHit]:
        """Entities (``kind="property"`` / ``"class"``) whose label matches ``text``, best first."""
        hits = await self._tool("search", lambda: self.kg.search(text, kind=kind, limit=limit, types=types))
        self.log("tool", tool="search", text=text, search_kind=kind, hits=[h.id for h in hits])
        return hits

    async def lookup(self, entity_id: str, incoming: bool | None = None,
                     values_per_property: int = VALUES_PER_PROPERTY) -> Neighbourhood:
        """An entity's label, description, types and edges with labels (:func:`sparqlab.kg.neighbourhood.lookup`:
        every property counted, at most ``values_per_property`` values of each read)."""
        hood = await self._tool("lookup", lambda: lookup(self.kg, entity_id, incoming=incoming,
                                                         values_per_property=values_per_property))
        self.log("tool", tool="lookup", entity=entity_id, outgoing=len(hood.outgoing), incoming=len(hood.incoming))
        return hood

    async def examples(self, property_id: str, limit: int = 3) -> list[dict[str, str]]:
        """A few real (subject, object) uses of a property, with labels."""
        rows = await self._tool("examples", lambda: property_examples(self.kg, property_id, limit))
        self.log("tool", tool="examples", property=property_id, rows=len(rows))
        return rows

    async def final_query(self, sparql: str) -> QueryResult:
        """Execute the final query the way the runner does (its worker pool and the KG's limits); raises
        :class:`~sparqlab.kg.errors.KGError`. Used by :meth:`Method.execute_final`."""
        if self._final_executor is None:
            return await asyncio.to_thread(self.kg.query, sparql)
        return await self._final_executor(sparql)


SubRunner = Callable[..., Awaitable[Any]]
"""``sub_runner(method, questions, *, experiment, role) -> result with run_dir``: the runner's nested run."""


class PrepareContext(_ModelAccess):
    """Once-per-run setup access: the KG (direct use allowed here), counted model calls, content-keyed artifact
    folders, training questions from a split other than the scored one, and nested runs (:meth:`sub_run`)."""

    def __init__(self, kg: KnowledgeGraph, models: Mapping[str, RoleModel] | None = None, *,
                 scored_dataset: str | None = None, scored_split: str | None = None,
                 scored_ids: frozenset[str] = frozenset(), sub_runner: SubRunner | None = None):
        super().__init__(models or {}, Trace())
        self.kg = kg
        self._sub_runner = sub_runner
        self.kg_calls: Counter = Counter()
        self.scored_dataset = scored_dataset
        self.scored_split = scored_split
        self.scored_ids = scored_ids
        self.artifact_dirs: list[tuple[Path, Any]] = []  # (folder, open lock file) being built by this run
        self.pools: dict[str, list[Question]] = {}
        """Every ``dataset:split`` read through :meth:`train_questions`: the runner checks them for
        near-duplicates of the scored questions (:mod:`sparqlab.runs.leakage`)."""

    def log(self, kind: str, /, **data: Any) -> None:
        self.trace.add(kind, None, None, data)

    async def sub_run(self, method: Any, questions: list[Question], *, experiment: str, role: str) -> Any:
        """Run ``method`` over ``questions`` as an ordinary, resumable run folder on this run's KG, with the model
        (and sampling parameters) of this run's ``role`` as its model — e.g. GGC's generator-only pass whose
        labelled outputs train the gate. The runner injects the implementation, so a method never imports it;
        returns the nested run's result (``run_dir``, ``metrics``)."""
        if self._sub_runner is None:
            raise RuntimeError("this preparation context has no runner to start a nested run with")
        self._role_model(role)
        self.log("sub_run", experiment=experiment, role=role, n=len(questions))
        return await self._sub_runner(method, questions, experiment=experiment, role=role)

    def artifact_dir(self, name: str, key: Any) -> tuple[Path, bool]:
        """``(folder, built)``: a folder under ``cache_dir()/artifacts/`` named by ``name`` and a hash of ``key``
        (everything the artifact depends on). ``built`` is true when an earlier run finished building it. A folder
        to build is locked until ``prepare`` ends (another process asking for it, e.g. a second shard, waits and
        then finds it built); the runner marks it complete only when ``prepare`` returns, so a failed build is
        redone."""
        folder = cache_dir() / "artifacts" / f"{name}-{stable_hash(key, 16)}"
        if (folder / ".complete").exists():
            return folder, True
        folder.mkdir(parents=True, exist_ok=True)
        lock = (folder / ".lock").open("a")
        fcntl.flock(lock, fcntl.LOCK_EX)  # waits while another process builds the same artifact
        if (folder / ".complete").exists():
            lock.close()
            return folder, True
        self.artifact_dirs.append((folder, lock))
        return folder, False

    def finish(self, succeeded: bool) -> None:
        """Called by the runner when ``prepare`` ends: mark the folders built (if it succeeded) and unlock them."""
        for folder, lock in self.artifact_dirs:
            if succeeded:
                (folder / ".complete").write_text("ok\n", encoding="utf-8")
            lock.close()
        self.artifact_dirs.clear()

    def training_source(self) -> tuple[str, str] | None:
        """Where this run's methods learn from when not told (:func:`sparqlab.data.training_source`): the scored
        dataset's ``train`` split, else the ``train`` split of the KG profile's ``train_dataset``."""
        from sparqlab.data import training_source

        return training_source(self.scored_dataset, self.scored_split, self.kg.profile.train_dataset)

    def train_questions(self, dataset: str | None = None, split: str | None = None, *, option: str = "train_dataset",
                        allow_other_kg: bool = False) -> list[Question]:
        """Full questions (with gold) of ``dataset``/``split`` for training or memories; ``None`` takes
        :meth:`training_source` (``split`` ``None``: ``train``). Refused for the split being scored, for a set
        sharing a question id with the scored questions, and for a dataset of another KG than the run's unless
        ``allow_other_kg``. ``option`` is the method setting that chose ``dataset``, named in the errors."""
        from sparqlab.data import dataset_kg, load

        if dataset is None:
            source = self.training_source()
            if source is None:
                raise ValueError(
                    f"no training questions for this run: {self.scored_dataset or 'the scored questions'} has no "
                    f"train split and the {self.kg.profile.name} KG's profile names no train_dataset; set "
                    f"-o {option}=NAME (a dataset of the {self.kg.profile.name} KG with a train split)")
            dataset, split = source[0], split or source[1]
        split = split or "train"
        if dataset == self.scored_dataset and split == self.scored_split:
            raise ValueError(f"training questions must come from another split than the scored one "
                             f"({dataset}/{split} is being scored)")
        questions = load(dataset, split)
        other = dataset_kg(dataset, questions)
        if other is not None and other != self.kg.profile.name and not allow_other_kg:
            raise ValueError(f"{option}={dataset} is a dataset of the {other} KG but this run is on "
                             f"{self.kg.profile.name}: set -o {option}= to a dataset of {self.kg.profile.name}, or "
                             f"-o allow_other_kg=true to learn from {other} questions anyway")
        shared = sorted({q.id for q in questions} & self.scored_ids)
        if shared:
            raise ValueError(f"{dataset}/{split} shares {len(shared)} question ids with the scored questions "
                             f"(e.g. {', '.join(shared[:5])}); training data must not overlap the scored set")
        self.log("train_questions", dataset=str(dataset), split=split, n=len(questions), kg=other)
        self.pools[f"{dataset}:{split}"] = questions
        return questions
