"""The Generator–Gate–Corrector method (paper, section 3.2 and Algorithm 1), registered as ``ggc``.

Per question: s(0) ← G(q) (role ``generator``); with ``mode="gated"``, g ← 1[P(g=1 | q, s(0) [, KG feedback])
≥ τ]; if g = 1, s(c) ← C(q, s(0) [, feedback]) (role ``corrector``) and ŝ = s(c), else ŝ = s(0). ``mode="none"``
is the generator-only setting and ``mode="all"`` corrects every query (the paper's Gen. + Corr.). A reply with no
readable query is still s(0) (its text) for the gate and the corrector, as in Algorithm 1, which skips nothing
(``skip_unparseable=True`` stops there instead, without correction). The runner then executes ŝ and scores it like
any method's query.

A gated run scores each question's gate decision (:meth:`GGC.score`: ``gate_label`` = s(0) is wrong,
``gate_decision`` = the corrector was triggered), so its ``metrics.json`` carries the gate's accuracy, precision,
recall, F1, FPR and trigger rate at the run's τ (``method_scores.gate_*``). A question whose gold query fails or
returns nothing counts as a generator error (label 1), as the paper's Table 3 counts ground-truth errors.

Every prediction's ``extra`` keeps what a sweep or an analysis needs without rerunning anything: the initial
query, the gate probability and decision, the corrected query, the KG feedback, and the wall time of each stage
(``t_generator_s``, ``t_feedback_s``, ``t_gate_s``, ``t_corrector_s``; ``cached_stages`` names the stages whose
model reply came from the response cache, which the metrics leave out of the time) — see
:func:`sparqlab.methods.ggc.metrics.sweep` and :func:`sparqlab.experiments.ggc.threshold_sweep`.

The gate is an artifact: loaded from ``gate_path``, or trained in :meth:`GGC.prepare` on the generator's own
output over ``train_dataset``/``train_split`` (by default the run's own training split: the scored dataset's
``train``, else the KG profile's ``train_dataset``; the first ``train_limit`` questions of its gate portion, GGC
§4.1, :mod:`sparqlab.methods.ggc.split`; the run folder of that
generator pass is an ordinary run under the experiment ``ggc-gate-data-<generator digest>``) and cached under
``cache_dir()/artifacts``. Its content digest enters the run id. The prompts describe the run's KG with its
profile's conventions (``variant``), notes and schema.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from sparqlab.core.hashing import file_digest, stable_hash
from sparqlab.data.question import Question
from sparqlab.llm.replies import reply_error
from sparqlab.methods.ggc.data import gate_from_runs
from sparqlab.methods.ggc.feedback import KGFeedback
from sparqlab.methods.ggc.gate import Gate, GateExample, GateSettings, decide, folder_digest
from sparqlab.methods.ggc.prompts import (
    PROMPTS,
    PromptAdditions,
    conventions_for,
    corrector_messages,
    generator_messages,
    prompt_prefixes,
    variant_profile,
)
from sparqlab.methods.ggc.split import GENERATOR_SHARE, SPLIT_SEED, check_generator_share, gate_questions
from sparqlab.platform.base import Method, MethodOutput
from sparqlab.platform.config import RESPONSE_CAP_TOKENS, MethodConfig
from sparqlab.platform.context import PrepareContext, QuestionContext
from sparqlab.platform.parsing import extract_sparql
from sparqlab.platform.registry import register_method

if TYPE_CHECKING:
    from sparqlab.kg.profiles import PromptConventions

LOCATION_KEYS = frozenset({"cache", "base_url", "max_retries", "timeout_s"})
"""Parts of a model's description that say where it runs, not what it answers; left out of its identity."""


@dataclass(frozen=True)
class GGCConfig(MethodConfig):
    """Settings of the ``ggc`` method.

    - ``mode``: ``none`` (generator only), ``all`` (correct every query) or ``gated`` (Algorithm 1).
    - ``threshold``: τ; the corrector runs when the gate probability is ≥ τ (τ = 0: every query; τ > 1: none).
    - ``gate``: how the gate is trained (:class:`~sparqlab.methods.ggc.gate.GateSettings`, set as
      ``-o gate.backend=tfidf``); default the paper's fine-tuned ``encoder`` (needs ``gate.encoder_path``).
    - ``gate_path``: folder of a trained gate (``sparqlab train gate``) used instead of training one.
    - ``kg_feedback``: execute s(0) and give the gate and the corrector the execution feedback (Table 5b); the one
      place this is set: a gate trained here reads feedback exactly when the method does.
    - ``variant``: whose prompt conventions describe the KG (topic, relation word, rules for queries): ``None``
      the run KG's profile, else the name of a registered profile (``wikidata`` for a Wikidata mirror opened
      with a derived profile).
    - ``prompt``: the workbench's additions to the paper's prompts (appendix B), each off by default
      (:class:`~sparqlab.methods.ggc.prompts.PromptAdditions`: ``prompt.kg_rules``, ``prompt.schema_listing``,
      ``prompt.reply_fence``); a fine-tuned generator or corrector expects the prompts its data were built with.
    - ``train_dataset`` / ``train_split`` / ``train_limit``: questions the gate is trained on when no
      ``gate_path`` is given: the first ``train_limit`` of the split's gate portion; ``train_dataset`` ``None`` is
      the run's own training split (the scored dataset's ``train``, else the KG profile's ``train_dataset``; the
      trained gate's digest enters the run id).
    - ``generator_share``: the share of the training split that is the generator's (GGC §4.1,
      :func:`~sparqlab.methods.ggc.split.training_split`: a seeded draw, the rest is the gate's); ``train data
      --builder ggc-generator`` with the same share and seed writes the generator's part. ``0``: a generator not
      fine-tuned on this split (the whole split is the gate's).
    - ``split_seed``: the seed of that draw (a sorted training file still gives both portions every kind of
      question).
    - ``generator_data``: the generator's actual training file (records with an ``id``); a gate question in it is
      an error (the file's digest enters the gate's key).
    - ``allow_overlap``: label gate questions that are in ``generator_data`` anyway instead of refusing them.
      The gate's ``training["data_split"]`` records the share and count + digest of both portions.
    - ``allow_other_kg``: train on a dataset of another KG than the run's (refused otherwise).
    - ``skip_unparseable``: when s(0) has no readable query, stop there (no gate, no corrector) instead of
      passing its text on as Algorithm 1 does.
    - ``generate_max_tokens`` / ``generate_reasoning_effort`` / ``correct_max_tokens`` / ``correct_reasoning_effort``:
      per call kind, the completion budget (2,048: the GGC paper gives none, so SAGA's cap for every system it
      compares, :data:`RESPONSE_CAP_TOKENS`; ``None``: the server's default, up to the whole context) and a
      reasoning model's effort (``low`` / ``medium`` / ``high``; ``None``: the server's default). Method defaults:
      an explicit run or role setting wins (docs/replies.md).

    A loaded gate (``gate_path``) follows one rule (:func:`loaded_gate_settings`): its saved settings are the
    gate's settings. A ``gate`` field left at its default takes the saved value; a field set to anything else must
    equal the saved value, otherwise the run stops with an error naming the field; ``kg_feedback`` must equal the
    gate's. The run's config then records the saved settings, so fields that were not used never change the run
    id (the gate's content digest enters it as an artifact).
    """

    mode: Literal["none", "all", "gated"] = "gated"
    threshold: float = 0.5
    gate: GateSettings = GateSettings()
    gate_path: str | None = None
    kg_feedback: bool = False
    variant: str | None = None
    prompt: PromptAdditions = PromptAdditions()
    train_dataset: str | None = None
    train_split: str = "train"
    train_limit: int = 1000
    generator_share: float = GENERATOR_SHARE
    split_seed: int = SPLIT_SEED
    generator_data: str | None = None
    allow_overlap: bool = False
    allow_other_kg: bool = False
    skip_unparseable: bool = False
    generate_max_tokens: int | None = RESPONSE_CAP_TOKENS
    generate_reasoning_effort: str | None = None
    correct_max_tokens: int | None = RESPONSE_CAP_TOKENS
    correct_reasoning_effort: str | None = None

    call_kinds: ClassVar[tuple[str, ...]] = ("generate", "correct")

    def __post_init__(self) -> None:
        if self.threshold < 0:
            raise ValueError(f"threshold must be >= 0 (above 1 means never correct); got {self.threshold}")
        if self.train_limit < 2:
            raise ValueError(f"train_limit must be at least 2; got {self.train_limit}")
        check_generator_share(self.generator_share)


def loaded_gate_settings(requested: GateSettings, kg_feedback: bool, gate: Gate) -> GateSettings:
    """The rule for a loaded gate (:class:`GGCConfig`): the saved settings win; a requested field that differs
    both from its default and from the saved value, or a ``kg_feedback`` other than the gate's, is an error
    naming it. Returns the saved settings."""
    saved = gate.settings
    clashes = [f"gate.{name}={getattr(requested, name)!r} (the gate has {getattr(saved, name)!r})"
               for name in GateSettings.field_names()
               if getattr(requested, name) != GateSettings.default_of(name)
               and getattr(requested, name) != getattr(saved, name)]
    if gate.kg_feedback != kg_feedback:
        clashes.append(f"kg_feedback={kg_feedback!r} (the gate has {gate.kg_feedback!r})")
    if clashes:
        raise ValueError("the loaded gate was trained with other settings than requested: " + "; ".join(clashes)
                         + "; leave these options out or use the gate's values")
    return saved


class GateBatcher:
    """The gate calls of the questions in flight, answered by batched :meth:`Gate.probabilities` calls off the
    event loop, one at a time.

    A call joins the pending batch; the first one schedules a flush that runs when the batch before it is done
    (and after one loop turn, so that questions ready together share a batch). So the gate's torch / sklearn work
    runs in one worker thread with one call per batch instead of one thread per question contending for the
    GIL and the cores, and its cost per question falls with the concurrency. The probabilities are those of
    one-by-one calls (the same model on the same inputs)."""

    def __init__(self, gate: Gate):
        self.gate = gate
        self.batches: list[int] = []
        self._pending: list[tuple[GateExample, asyncio.Future]] = []
        self._flush: asyncio.Task | None = None
        self._lock = asyncio.Lock()

    async def probability(self, example: GateExample) -> float:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._pending.append((example, future))
        if self._flush is None:
            self._flush = loop.create_task(self._run())
        return await future

    async def _run(self) -> None:
        async with self._lock:
            await asyncio.sleep(0)
            batch, self._pending, self._flush = self._pending, [], None
            self.batches.append(len(batch))
            try:
                probabilities = await asyncio.to_thread(self.gate.probabilities, [e for e, _ in batch])
            except Exception as error:  # every waiting question gets the gate's error
                for _, future in batch:
                    if not future.done():
                        future.set_exception(error)
                return
            for (_, future), probability in zip(batch, probabilities, strict=True):
                if not future.done():
                    future.set_result(float(probability))


def model_identity(model: Any) -> dict[str, Any]:
    """What a model answers with (name, backend, stand-in options), without where it runs."""
    return {k: v for k, v in model.describe().items() if k not in LOCATION_KEYS}


@register_method("ggc")
class GGC(Method):
    """Generator–Gate–Corrector (module docstring)."""

    config_class = GGCConfig
    roles = ("generator", "corrector")
    prompts = PROMPTS
    needs_model = True

    def __init__(self, config: GGCConfig | None = None, *, gate_batch: bool = True, **overrides: Any):
        """``gate_batch``: batch the gate calls of concurrent questions (:class:`GateBatcher`); ``False`` calls
        the gate once per question in its own thread. Not part of the identity: answers are the same."""
        super().__init__(config, **overrides)
        self.gate_batch = gate_batch
        self._batcher: tuple[Any, GateBatcher] | None = None
        self.gate: Gate | None = None
        self.gate_digest: str | None = None
        self.gate_folder: Path | None = None
        self._kg: Any = None
        self._notes: dict[str, str] = {}
        self._conventions: PromptConventions | None = None

    def required_extras(self) -> tuple[str, ...]:
        return ("embed",)  # the template memory embeds questions

    # -- identity ---------------------------------------------------------------------------------------------

    def artifacts(self) -> dict[str, str]:
        """The trained gate's digest and the digest of the KG conventions the prompts use."""
        found = {"gate": self.gate_digest} if self.gate_digest else {}
        if self._conventions is not None:
            found["conventions"] = self._conventions_digest()
        return found

    def _conventions_digest(self) -> str:
        return stable_hash(dataclasses.asdict(self._conventions), 16)

    def example_ids(self) -> set[str]:
        return set(self.gate.training.get("question_ids", [])) if self.gate else set()

    def use_gate(self, gate: Gate, digest: str) -> None:
        """Use an already trained gate (tests, sweeps over a gate trained in the same process), under the loaded
        gate rule of :class:`GGCConfig`."""
        self._adopt(gate)
        self.gate, self.gate_digest = gate, digest

    def _adopt(self, gate: Gate) -> None:
        """Check a loaded gate against the requested settings and record its saved settings in the config."""
        settings = loaded_gate_settings(self.config.gate, self.config.kg_feedback, gate)
        self.config = self.config.replace(gate=settings)

    # -- preparation ------------------------------------------------------------------------------------------

    async def prepare(self, ctx: PrepareContext) -> None:
        """Load the gate from ``gate_path``, or train it on the generator's output over the training split
        (cached as an artifact keyed by everything it depends on)."""
        self._kg = ctx.kg  # score() judges s(0) of corrected questions on it
        self._conventions = conventions_for(ctx.kg.profile, self.config.variant)
        if self.config.mode != "gated" or self.gate is not None:
            return
        if self.config.gate_path:
            folder = Path(self.config.gate_path)
            gate = await asyncio.to_thread(Gate.load, folder)
            self._adopt(gate)
            self.gate, self.gate_digest, self.gate_folder = gate, folder_digest(folder), folder
            ctx.log("gate_loaded", path=str(folder), digest=self.gate_digest)
            return
        generator = ctx.models["generator"]
        identity = model_identity(generator.model)
        settings = self.config.gate
        settings.check_trainable()
        train_dataset = self.config.train_dataset
        if train_dataset is None and ctx.training_source() is not None:
            train_dataset = ctx.training_source()[0]
        key = {"settings": settings.to_dict(), "kg_feedback": self.config.kg_feedback, "generator": identity, "params": generator.params,
               "prompts": {n: t.digest for n, t in sorted(PROMPTS.items())}, "conventions": self._conventions_digest(),
               "train": [train_dataset, self.config.train_split, self.config.train_limit, self.config.generator_share,
                         self.config.allow_overlap, self.config.split_seed],
               "kg": ctx.kg.identity}
        if self.config.generator_data:
            key["generator_data"] = file_digest(Path(self.config.generator_data))
        folder, built = ctx.artifact_dir("ggc-gate", key)
        if not built:
            questions = ctx.train_questions(train_dataset, self.config.train_split,
                                            allow_other_kg=self.config.allow_other_kg)
            questions, split = gate_questions(questions, self.config.train_limit, self.config.generator_share,
                                              self.config.generator_data, self.config.allow_overlap,
                                              self.config.split_seed)
            result = await ctx.sub_run(GGC(mode="none", variant=self.config.variant, prompt=self.config.prompt), questions,
                                       experiment=f"ggc-gate-data-{stable_hash(identity, 8)}", role="generator")
            gate = await asyncio.to_thread(gate_from_runs, [result.run_dir], ctx.kg, settings,
                                           kg_feedback=self.config.kg_feedback)
            gate.training["data_split"] = split.record(questions)
            await asyncio.to_thread(gate.save, folder)
            ctx.log("gate_trained", folder=str(folder), data_run=str(result.run_dir), n=gate.training["n"],
                    question_ids=[q.id for q in questions])
        gate = await asyncio.to_thread(Gate.load, folder)
        self.gate, self.gate_digest, self.gate_folder = gate, folder_digest(folder), folder

    # -- answering --------------------------------------------------------------------------------------------

    async def _kg_notes(self, ctx: QuestionContext) -> str:
        from sparqlab.kg.describe import kg_notes

        if ctx.kg.identity not in self._notes:
            self._notes[ctx.kg.identity] = await asyncio.to_thread(kg_notes, ctx.kg)
        return self._notes[ctx.kg.identity]

    async def _gate_probability(self, example: GateExample) -> float:
        assert self.gate is not None
        if not self.gate_batch:
            return await asyncio.to_thread(self.gate.probability, example)
        loop = asyncio.get_running_loop()
        if self._batcher is None or self._batcher[0] is not loop or self._batcher[1].gate is not self.gate:
            self._batcher = (loop, GateBatcher(self.gate))  # one per event loop (a run) and gate
        return await self._batcher[1].probability(example)

    async def answer(self, question: Question, ctx: QuestionContext) -> MethodOutput:
        """Algorithm 1; the stages' outputs and times go to ``extra``."""
        notes, kg_name = await self._kg_notes(ctx), ctx.kg.profile.name
        conventions = self._conventions or conventions_for(ctx.kg.profile, self.config.variant)
        extra: dict[str, Any] = {"mode": self.config.mode}
        started = time.perf_counter()
        additions, prefixes = self.config.prompt, prompt_prefixes(variant_profile(ctx.kg.profile, self.config.variant))
        reply = await ctx.chat(generator_messages(question.text, kg_name, notes, conventions, additions, prefixes),
                               role="generator",
                               kind="generate", defaults=self.config.call_params("generate"))
        initial = extract_sparql(reply.text)
        extra.update(initial_sparql=initial, t_generator_s=round(time.perf_counter() - started, 6))
        if reply.cached:
            extra["cached_stages"] = ["generator"]
        unread = None  # the typed failure of an unreadable s(0), kept as the error when nothing replaces it
        if initial is None:
            unread = reply_error(reply.text, reply.finish_reason, reply.reasoning)
            ctx.log("parse_failure", role="generator", response=reply.text, finish_reason=reply.finish_reason,
                    failure=unread)
            if self.config.mode == "none" or self.config.skip_unparseable:
                return MethodOutput(None, unread, {**extra, "triggered": False})
        elif self.config.mode == "none":
            return MethodOutput(initial, None, {**extra, "triggered": False})
        s0 = initial if initial is not None else reply.text.strip()  # Algorithm 1 passes any s(0) on

        feedback = None
        if self.config.kg_feedback:
            started = time.perf_counter()
            feedback = KGFeedback.from_outcome(await ctx.query(s0))
            extra.update(feedback=feedback.describe(), t_feedback_s=round(time.perf_counter() - started, 6))
        if self.config.mode == "gated":
            if self.gate is None:
                raise RuntimeError("mode='gated' needs a gate: prepare() was not called")
            started = time.perf_counter()
            probability = await self._gate_probability(GateExample(question.text, s0, feedback=feedback))
            triggered = decide(probability, self.config.threshold)
            extra.update(gate_prob=round(probability, 6), t_gate_s=round(time.perf_counter() - started, 6))
            ctx.log("gate", probability=probability, threshold=self.config.threshold, triggered=triggered)
        else:
            triggered = True
        extra["triggered"] = triggered
        if not triggered:
            return MethodOutput(initial, unread, extra)

        started = time.perf_counter()
        reply = await ctx.chat(corrector_messages(question.text, s0, kg_name, notes, conventions,
                                                  feedback.describe() if feedback else None, additions, prefixes),
                               role="corrector", kind="correct", defaults=self.config.call_params("correct"))
        corrected = extract_sparql(reply.text)
        extra.update(corrected_sparql=corrected, t_corrector_s=round(time.perf_counter() - started, 6))
        if reply.cached:
            extra["cached_stages"] = [*extra.get("cached_stages", []), "corrector"]
        if corrected is None:  # an unreadable correction keeps the initial query, as the corrector prompt asks
            error = reply_error(reply.text, reply.finish_reason, reply.reasoning)
            ctx.log("parse_failure", role="corrector", response=reply.text, finish_reason=reply.finish_reason,
                    failure=error)
            return MethodOutput(initial, unread, {**extra, "corrector_parse_failure": True,
                                                  "corrector_failure": error})
        return MethodOutput(corrected, None, extra)

    # -- scoring ----------------------------------------------------------------------------------------------

    def score(self, question: Question, output: MethodOutput, predicted: list[str] | None,
              gold: list[str] | None) -> dict[str, Any]:
        """The gate decision of a gated run against its label (module docstring): ``gate_label`` 1 when s(0) is
        wrong — its answers differ from the gold answers, it has none, or the gold query cannot be judged (Table
        3 counts ground-truth errors among generator errors) — and ``gate_decision`` 1 when the corrector ran.
        s(0) of a corrected question is executed on the KG (through its query cache)."""
        if "gate_prob" not in output.extra:
            return {}
        from sparqlab.eval.metrics import is_gold_error
        from sparqlab.methods.ggc.metrics import execute_answers, initial_correct

        triggered = bool(output.extra.get("triggered"))
        initial = predicted
        if triggered and not is_gold_error(gold):  # a gold error is wrong whatever s(0) returns: not executed
            initial = execute_answers(self._kg, output.extra.get("initial_sparql"))
        return {"gate_label": int(not initial_correct(initial, gold)), "gate_decision": int(triggered)}
