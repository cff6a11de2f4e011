"""DeSQ as a platform method (``sparqlab run desq``): decomposition, structured output, URI correction against the
KB memory, deterministic assembly; execution-free scores per prediction through :meth:`Desq.score`."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from sparqlab.core.hashing import stable_hash
from sparqlab.data.question import Question
from sparqlab.eval.structural import query_em, structural_em
from sparqlab.llm.replies import reply_error
from sparqlab.methods.desq.correction import (
    STRATEGIES,
    Retriever,
    apply,
    check_strategy,
    correct_slots,
    cut_equivalent,
    unrelated_cosine,
)
from sparqlab.methods.desq.fragments import (
    AssemblyError,
    Decomposition,
    Fragment,
    Slot,
    assemble,
    decompose,
    scheme_for,
)
from sparqlab.methods.desq.generation import (
    Example,
    decompose_messages,
    gold_example,
    map_messages,
    masked_words,
    nearest,
    parse_constraints,
    write_finetune_jsonl,
)
from sparqlab.methods.desq.kb_memory import (
    HASHING_EMBEDDER,
    KBMemory,
    catalogue_entries,
    describer,
    kg_entries,
    limit_entries,
    main_kind,
)
from sparqlab.methods.desq.metrics import gold_sparql_for, score_output, slot_kinds
from sparqlab.methods.desq.prompts import PROMPTS
from sparqlab.methods.desq.structured import output_json, parse_output
from sparqlab.methods.desq.verbalise import verbalise_with_model, verbalise_with_templates
from sparqlab.platform.base import Method, MethodOutput
from sparqlab.platform.config import RESPONSE_CAP_TOKENS, MethodConfig
from sparqlab.platform.context import PrepareContext, QuestionContext
from sparqlab.platform.registry import register_method
from sparqlab.sparql.tree import SparqlParseError

MEMORY_FORMAT = 4
"""Bumped when the memory's entries, their text or its files change, so cached memories are rebuilt (4: an
integrity record in ``memory.json``)."""


@dataclass(frozen=True)
class DesqConfig(MethodConfig):
    """Settings of :class:`Desq`.

    - ``strategy``: URI correction strategy (appendix B): none, always-retrieve, roundtrip-exact (the paper's
      "Round-trip"), roundtrip-fuzzy, score-threshold, combined. ``oracle`` needs gold ids, so a run cannot answer
      with it; every run scores all seven strategies per question instead (``scores.<strategy>.*``).
    - ``threshold``: cosine threshold of score-threshold and combined. ``None``: the equivalent of the paper's
      0.85 — a BGE-Large cosine, 62.5 % of the way from BGE's unrelated-text level 0.6 to 1 — for this memory and
      embedder: as far from the median cosine of random memory pairs towards 1
      (:func:`~sparqlab.methods.desq.correction.cut_equivalent`; a number: that cosine, e.g. ``0.85`` with
      BGE-Large as in the paper).
    - ``jaccard``: word-level Jaccard a label must reach under roundtrip-fuzzy (paper: 0.5).
    - ``train_dataset`` / ``train_split`` / ``train_limit``: the training questions whose gold decompositions are
      the worked examples (0: all of the split); never the scored split. ``train_dataset`` ``None`` is the run's
      own training split (the scored dataset's ``train``, else the KG profile's ``train_dataset``; the worked
      examples' digest enters the run id).
    - ``allow_other_kg``: take worked examples from a dataset of another KG than the run's (refused otherwise).
    - ``shots``: worked examples (nearest by masked question words) per prompt.
    - ``memory``: ``kg`` (entities, relations and classes of the run's KG) or ``catalogue`` (the KG profile's
      element catalogue, for KGs too large to read: Wikidata's properties; Freebase's fb_roles relations and
      types and the entities its datasets name; :func:`~sparqlab.methods.desq.kb_memory.catalogue_entries`).
    - ``memory_limit``: at most this many entries of the memory's main kind (the most numerous: entities of a KG,
      properties of Wikidata's catalogue; every entry of another kind stays), in id order (0: all). A speed knob
      for smoke tests; it changes results (the missing elements cannot be retrieved).
    - ``embedder``: ``minilm`` (offline all-MiniLM-L6-v2), ``hashing`` (a model-free bag-of-words baseline, for
      smoke tests) or a sentence-transformers model name (paper: BGE-Large).
    - ``memory_dir``: a saved memory (``sparqlab desq memory build``) to load instead of building one; its content
      digest enters the run id, and ``memory`` / ``memory_limit`` / ``embedder`` are then not used.
    - ``verbaliser``: ``template`` (deterministic, KG labels) or ``model`` (the ``verbaliser`` role, prompt
      ``verbalise``) for the atomic constraints of the worked examples. Scoring aligns predicted and gold
      fragments by key (the atomic constraint) with ``template`` and by position with ``model``: the gold
      constraints are always template-verbalised, so a model's paraphrases would never match by key (the paper
      reports both alignments as equivalent, section 3.5); ``scores.fragment_alignment`` says which was used.
    - ``restrict_kind``: URI retrieval among memory entries of the slot's kind (entity / property / class) only;
      an extension, off as in the paper (retrieval over the whole memory).
    - ``decompose_max_tokens`` / ``map_max_tokens`` / ``verbalise_max_tokens``: the completion budget per call
      kind (2,048 each: the DeSQ paper gives none, so SAGA's cap for every system it compares,
      :data:`RESPONSE_CAP_TOKENS`; ``None``: the server's default, up to the whole context). Method defaults: an
      explicit run or role setting wins (docs/replies.md).
    - ``decompose_reasoning_effort`` / ``map_reasoning_effort`` / ``verbalise_reasoning_effort``: a reasoning
      model's effort per call kind (``low`` / ``medium`` / ``high``; ``None``: the server's default).
    """

    strategy: str = "roundtrip-exact"
    threshold: float | None = None
    jaccard: float = 0.5
    train_dataset: str | None = None
    train_split: str = "train"
    train_limit: int = 0
    allow_other_kg: bool = False
    shots: int = 3
    memory: Literal["kg", "catalogue"] = "kg"
    memory_limit: int = 0
    embedder: str = "minilm"
    memory_dir: str | None = None
    verbaliser: Literal["template", "model"] = "template"
    restrict_kind: bool = False
    decompose_max_tokens: int | None = RESPONSE_CAP_TOKENS
    decompose_reasoning_effort: str | None = None
    map_max_tokens: int | None = RESPONSE_CAP_TOKENS
    map_reasoning_effort: str | None = None
    verbalise_max_tokens: int | None = RESPONSE_CAP_TOKENS
    verbalise_reasoning_effort: str | None = None

    call_kinds: ClassVar[tuple[str, ...]] = ("decompose", "map", "verbalise")

    def __post_init__(self) -> None:
        check_strategy(self.strategy)
        if self.strategy == "oracle":
            raise ValueError("strategy 'oracle' needs the gold ids, so it cannot answer questions; every run "
                             "reports it in its per-question scores (scores.oracle.*)")
        if not 0 <= (self.threshold if self.threshold is not None else 0) <= 1 or not 0 <= self.jaccard <= 1:
            raise ValueError("threshold and jaccard must lie in [0, 1]")
        if self.shots < 1 or self.train_limit < 0 or self.memory_limit < 0:
            raise ValueError("shots must be >= 1, train_limit and memory_limit >= 0")


def _example_dict(example: Example) -> dict[str, Any]:
    d = example.decomposition
    return {"id": example.id, "question": example.question, "sparql": example.sparql,
            "fragments": [asdict(f) for f in d.fragments], "slots": [asdict(s) for s in d.slots], "kinds": d.kinds,
            "unknown": d.unknown}


def _example_from(data: dict[str, Any]) -> Example:
    decomposition = Decomposition([Fragment(**f) for f in data["fragments"]], [Slot(**s) for s in data["slots"]],
                                  data["kinds"], data.get("unknown", []))
    return Example(data["id"], data["question"], data["sparql"], decomposition)


@register_method("desq")
class Desq(Method):
    """DeSQ (decomposition → structured output → URI correction → assembly) over any KG with an id scheme."""

    config_class = DesqConfig
    roles = ("generator", "verbaliser")
    prompts = PROMPTS

    def __init__(self, config: DesqConfig | None = None, **overrides: Any):
        super().__init__(config, **overrides)
        self.memory: KBMemory | None = None
        self.examples: list[Example] = []
        self._words: list[frozenset[str]] = []
        self._kg = None
        self._retriever: Retriever | None = None
        self.threshold = self.config.threshold  # resolved for the memory's embedder by prepare()

    def required_extras(self) -> tuple[str, ...]:
        """igraph for the structural scores; the embedding stack unless the model-free ``hashing`` embedder."""
        return ("desq",) if self.config.embedder == HASHING_EMBEDDER else ("desq", "embed")

    def artifacts(self) -> dict[str, str]:
        found = {}
        if self.memory is not None:
            found["kb_memory"] = self.memory.digest
        if self.examples:
            found["examples"] = stable_hash([_example_dict(e) for e in self.examples], 16)
        if self.threshold is not None:
            found["threshold"] = str(self.threshold)
        return found

    def example_ids(self) -> set[str]:
        return {e.id for e in self.examples}

    def example_texts(self) -> set[str]:
        return {e.question for e in self.examples}

    # -- preparation ----------------------------------------------------------------------------------------------

    async def prepare(self, ctx: PrepareContext) -> None:
        config, kg = self.config, ctx.kg
        self._kg = kg
        scheme = scheme_for(kg.profile)
        key = [MEMORY_FORMAT, config.memory, config.embedder, config.memory_limit,
               kg.identity if config.memory == "kg" else kg.profile.name]
        folder, built = (Path(config.memory_dir), True) if config.memory_dir else ctx.artifact_dir("desq-memory", key)
        if built:
            self.memory = await asyncio.to_thread(KBMemory.load, folder)
        else:
            def entries():
                found = catalogue_entries(kg.profile) if config.memory == "catalogue" else kg_entries(kg)
                return limit_entries(found, main_kind(found), config.memory_limit)

            self.memory = await asyncio.to_thread(lambda: KBMemory.build(entries(), config.embedder))
            await asyncio.to_thread(self.memory.save, folder)
        unrelated = unrelated_cosine(self.memory.vectors)
        self.threshold = config.threshold if config.threshold is not None else round(cut_equivalent(unrelated), 4)
        ctx.log("kb_memory", entries=len(self.memory), build_s=self.memory.info.get("build_s"), cached=built,
                threshold=self.threshold, unrelated_cosine=round(unrelated, 4))
        self._retriever = Retriever(self.memory)

        train_dataset = config.train_dataset
        if train_dataset is None and ctx.training_source() is not None:
            train_dataset = ctx.training_source()[0]
        questions = ctx.train_questions(train_dataset, config.train_split, allow_other_kg=config.allow_other_kg)
        questions = questions[:config.train_limit] if config.train_limit else questions
        key = [train_dataset, config.train_split, [q.id for q in questions], kg.identity, self.memory.digest,
               config.verbaliser, PROMPTS["verbalise"].digest]
        folder, built = ctx.artifact_dir("desq-examples", key)
        if built:
            lines = (folder / "examples.jsonl").read_text(encoding="utf-8").splitlines()
            self.examples = [_example_from(json.loads(line)) for line in lines if line]
        else:
            self.examples = await self._build_examples(questions, ctx, scheme)
            (folder / "examples.jsonl").write_text(
                "".join(json.dumps(_example_dict(e), ensure_ascii=False) + "\n" for e in self.examples), "utf-8")
            write_finetune_jsonl(folder / "finetune.jsonl", self.examples, scheme)
        if not self.examples:
            raise ValueError(f"no usable training examples in {train_dataset}/{config.train_split}")
        self._words = [masked_words(e.question) for e in self.examples]
        ctx.log("desq_examples", n=len(self.examples), folder=str(folder), cached=built)

    async def _build_examples(self, questions: list[Question], ctx: PrepareContext, scheme) -> list[Example]:
        from tqdm.auto import tqdm

        examples, skipped = [], 0
        for question in tqdm(questions, desc="DeSQ gold decompositions", unit="q"):
            try:
                sparql = await asyncio.to_thread(gold_sparql_for, question, ctx.kg)
                example = gold_example(question, scheme, describer(self.memory, ctx.kg), sparql)
            except (ValueError, SparqlParseError) as error:
                skipped += 1
                ctx.log("skipped_example", id=question.id, error=str(error))
                continue
            if self.config.verbaliser == "model":
                async def chat(messages):
                    return (await ctx.chat(messages, role="verbaliser", kind="verbalise",
                                             defaults=self.config.call_params("verbalise"))).text

                await verbalise_with_model(example.decomposition, question.text, chat)
            examples.append(example)
        ctx.log("desq_examples_built", n=len(examples), skipped=skipped)
        return examples

    # -- answering ------------------------------------------------------------------------------------------------

    async def answer(self, question: Question, ctx: QuestionContext) -> MethodOutput:
        if self.memory is None:
            raise RuntimeError("Desq.prepare() must run before answer() (the runner calls it)")
        kg_name = ctx.kg.profile.name
        scheme = scheme_for(ctx.kg.profile)
        shown = nearest(question.text, self.examples, self.config.shots, self._words)
        reply = await ctx.chat(decompose_messages(question.text, shown, kg_name), role="generator", kind="decompose",
                               defaults=self.config.call_params("decompose"))
        constraints = parse_constraints(reply.text)
        if not constraints:
            error = reply_error(reply.text, reply.finish_reason, reply.reasoning)
            ctx.log("parse_failure", step_name="decompose", response=reply.text, finish_reason=reply.finish_reason,
                    failure=error)
            return MethodOutput(None, error)
        reply = await ctx.chat(map_messages(question.text, constraints, shown, scheme), role="generator",
                               kind="map", defaults=self.config.call_params("map"))
        parsed = parse_output(reply.text)
        extra: dict[str, Any] = {"constraints": len(constraints), "output_problems": len(parsed.problems),
                                 "structured_output": output_json(parsed.fragments, parsed.slots)}
        if parsed.problems:
            ctx.log("output_problems", problems=parsed.problems)
        if not parsed.usable:
            error = reply_error(reply.text, reply.finish_reason, reply.reasoning)
            ctx.log("parse_failure", step_name="map", response=reply.text, finish_reason=reply.finish_reason,
                    failure=error)
            return MethodOutput(None, error, extra)
        corrections = await asyncio.to_thread(
            correct_slots, parsed.slots, self.memory, self.config.strategy, kinds=slot_kinds(parsed, scheme),
            threshold=self.threshold, jaccard=self.config.jaccard, retrieve=self._retriever,
            restrict_kind=self.config.restrict_kind)
        ctx.log("uri_correction", strategy=self.config.strategy, corrections=[asdict(c) for c in corrections])
        extra["ids_changed"] = sum(c.changed for c in corrections)
        try:
            sparql = assemble(parsed.fragments, apply(parsed.slots, corrections), scheme)
        except AssemblyError as error:
            ctx.log("assembly_error", problems=error.problems)
            return MethodOutput(None, "assembly_error", extra)
        ctx.log("final_query", sparql=sparql)
        return MethodOutput(sparql, None, extra)

    # -- scoring --------------------------------------------------------------------------------------------------

    def score(self, question: Question, output: MethodOutput, predicted: list[str] | None,
              gold: list[str] | None) -> dict[str, Any]:
        """Structural EM of the final query, fragment / URI EM of the structured output, and every correction
        strategy's id EM, final EM, fixed and broken ids (execution-free, section 3.5); ``empty_pair`` marks a
        question whose predicted and gold answers are both empty (execution F1 would count it as correct);
        ``gold_output`` is the gold structured output, for corpus BLEU against ``extra.structured_output``."""
        if not question.gold_sparql or self.memory is None:
            return {}
        scheme = scheme_for(self._kg.profile if self._kg is not None else question.kg)
        try:
            gold_sparql = gold_sparql_for(question, self._kg)
            gold_decomposition = verbalise_with_templates(
                decompose(gold_sparql, scheme, describer(self.memory, self._kg)))
        except (ValueError, SparqlParseError):  # a gold query DeSQ cannot decompose is not scored
            return {"gold_decomposition_error": 1}
        parsed = parse_output(output.extra.get("structured_output", ""))
        scores = score_output(parsed, gold_decomposition, gold_sparql, self.memory, scheme,
                              threshold=self.threshold, jaccard=self.config.jaccard, strategies=STRATEGIES,
                              retrieve=self._retriever, restrict_kind=self.config.restrict_kind,
                              alignment="position" if self.config.verbaliser == "model" else "key")
        scores["query_em"] = query_em(output.sparql, gold_sparql)
        scores["structural_em"] = structural_em(output.sparql, gold_sparql) if output.sparql else 0
        scores["gold_output"] = output_json(gold_decomposition.fragments, gold_decomposition.slots,
                                            gold_decomposition.unknown)  # for BLEU
        scores["empty_pair"] = int(predicted is not None and not predicted and gold is not None and not gold)
        return scores


def evaluate_offline(method: Desq, questions: list[Question], kg, model: str, progress: bool = True) -> list[dict]:
    """Prepare, answer and score ``questions`` without executing any query on the KG — DeSQ's execution-free
    evaluation (section 3.5) for KGs not reachable offline (Wikidata). The same ``prepare`` / ``answer`` /
    ``score`` code a run uses; returns one record per question (``id``, ``question``, ``predicted_sparql``,
    ``error_category`` and the scores as ``scores.<key>``). Model calls go through the response cache."""
    from tqdm.auto import tqdm

    from sparqlab.core.event_loops import run_sync
    from sparqlab.llm import RunBinding, bind_standins
    from sparqlab.llm.factory import make_model
    from sparqlab.platform.context import PrepareContext, QuestionContext, RoleModel

    chat_model = make_model(model)
    bind_standins([chat_model], RunBinding(kg, None))
    models = {role: RoleModel(role, chat_model, {"temperature": 0.0}) for role in method.roles}

    async def go() -> list[dict]:
        prepare = PrepareContext(kg, models)
        try:
            await method.prepare(prepare)
        except BaseException:
            prepare.finish(succeeded=False)
            raise
        prepare.finish(succeeded=True)
        shared = method.example_texts() & {q.text for q in questions}
        if shared:  # ids of different benchmarks collide ("1", "2" ...), so overlap is checked by text
            raise ValueError(f"{len(shared)} scored questions are also training examples, e.g. {sorted(shared)[0]!r}")
        records = []
        for question in tqdm(questions, desc="DeSQ (no execution)", unit="q", disable=not progress):
            output = await method.answer(question.public(), QuestionContext(question.public(), kg, models))
            scores = method.score(question, output, None, None)
            records.append({"id": question.id, "question": question.text, "predicted_sparql": output.sparql,
                            "error_category": output.error_category,
                            **{f"extra.{k}": v for k, v in output.extra.items()},
                            **{f"scores.{k}": v for k, v in scores.items()}})
        return records

    return run_sync(go())


TABLE2_COLUMNS = {"mapping_em": "fragment EM", "uri_id_em": "URI id EM", "uri_label_em": "URI label EM",
                  "uri_description_em": "URI description EM"}
"""Table 2's per-dataset columns (Mapping, URIs Grounding ID / Label / Desc.) and the :func:`micro_scores` rows they
come from."""


def offline_records(datasets: list[str], kg, model: str, limit: int | None = None, split: str | None = None,
                    **options: Any) -> dict[str, Any]:
    """Dataset name → the :func:`evaluate_offline` records (a DataFrame) of a :class:`Desq` built from ``options``
    (memory, strategy, worked examples ...) on that dataset's ``split`` (its default when ``None``)."""
    import pandas as pd

    from sparqlab.data.registry import load

    return {name: pd.DataFrame(evaluate_offline(Desq(**options), load(name, split=split, limit=limit), kg, model))
            for name in datasets}


def offline_table(records: dict[str, Any]):
    """DeSQ's execution-free table over several benchmarks, one block per dataset: the
    :func:`~sparqlab.methods.desq.metrics.strategy_table` (the layout of Tables 4-7) with Table 2's dataset columns
    beside it — Mapping (fragment EM), URI id / label / description EM (micro, section 3.5), the EM of the answered
    query (``query_em``; ``structural_em`` the isomorphism-based one), corpus BLEU of the structured outputs, and
    ``unknown_slots`` (gold slots whose label no source knows, left out of label / description EM). ``records``:
    :func:`offline_records`. An empty frame for no dataset."""
    import pandas as pd

    from sparqlab.methods.desq.metrics import micro_scores, output_bleu, strategy_table

    tables = {}
    for name, frame in records.items():
        micro = micro_scores(frame)["micro"]
        unknown = frame["scores.uri_unknown"] if "scores.uri_unknown" in frame else pd.Series(dtype=float)
        tables[name] = strategy_table(frame).assign(
            **{column: micro[row] for column, row in TABLE2_COLUMNS.items()},
            query_em=frame["scores.query_em"].mean(), structural_em=frame["scores.structural_em"].mean(),
            bleu=output_bleu(frame), unknown_slots=int(unknown.sum()))
    return pd.concat(tables, names=["dataset"]) if tables else pd.DataFrame()


def offline_tables(datasets: list[str], kg, model: str, limit: int | None = None, **options: Any):
    """:func:`offline_table` of :func:`offline_records` (the datasets' default splits)."""
    return offline_table(offline_records(datasets, kg, model, limit, **options))
