"""What a run is: its configuration, its identity (the run id) and its shard of the questions.

:class:`RunConfig` is declared once, in groups: the models (with their sampling parameters and roles), the KG,
the question selection, the evaluation and the execution. Every door to a run is derived from this declaration:
the flags of ``sparqlab run``, ``serve``, ``sweep``, ``train`` and ``ggc sweep`` (:mod:`sparqlab.cli.run_options`),
the keys of a grid file (:mod:`sparqlab.experiments.grid`); the run settings of the notebooks' parameter cells
mirror it (:func:`sparqlab.notebooks.mirror_problems`). Every leaf has a unique name, so ``RunConfig(kg="movies",
dataset="metaqa-1hop", limit=50, model="standin-keyword-rules")`` and ``config.limit`` name them directly
(:class:`~sparqlab.core.config.FlatConfig`); ``questions.limit`` is the same setting by its path.

The run id hashes everything the answers depend on: every group but :class:`ExecutionSettings` (the model's
endpoint included: an HTTP-served and an in-process model are two runs), the method's config with its prompt
and artifact digests, the KG's content (:attr:`~sparqlab.kg.base.KnowledgeGraph.identity`: a bundled store's
build hash, an RDF file's or store folder's content digest, an endpoint's URL), the digest of the KG's profile
(what the prompts say about the KG: a derived profile changes with its ``<name>.kg.yaml``) and the questions' full
content, and the digest of the gold snapshot the run scores against (:mod:`sparqlab.data.gold_snapshot`; none
when its gold queries run live). An edited KG, refinement, dataset or snapshot file is therefore a new run, never
a silent resume. The execution group (concurrency, progress bar, output folder, cache mode, shard fields), the KG
options that only change how queries reach the KG (``workers``, ``max_in_flight``, ``retry``), the
``gold_snapshot`` setting itself (its digest stands for it), ``allow_gold_errors`` and the experiment name are
left out (:data:`NOT_IN_RUN_ID`), so a rerun with more concurrency resumes the same folder, and one configuration
has one id in every experiment. Shard fields go into the shard folder's name, so every shard of one configuration
shares the id of the unsharded run.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sparqlab.core.config import CheckedConfig, FlatConfig
from sparqlab.core.environment import model_defaults
from sparqlab.core.hashing import stable_hash
from sparqlab.core.paths import runs_dir
from sparqlab.core.typed import bounded
from sparqlab.data.question import Question
from sparqlab.engines import Engine
from sparqlab.eval.matching import AnswerMatch
from sparqlab.kg import check_kg_options
from sparqlab.llm.base import SAMPLING_PARAMETERS
from sparqlab.llm.cache import CacheMode
from sparqlab.llm.factory import served_over_http
from sparqlab.runs.resources import ExecutionResources

RUN_FORMAT = 2
"""The layout of a run folder's ``config.json`` and ``manifest.json`` (their ``format`` key). Folders of another
format (1: before the typed, grouped run configuration; no ``format`` key) are not resumed or rerun."""

SERVED_PREFIX = "serve:"
"""The endpoint of a model served by the job itself (``serve:MODEL``, :mod:`sparqlab.experiments.model_launcher`); the
URL called is ``served_urls[MODEL]`` of the run's execution settings, so the run id does not depend on the port."""

Selection = Literal["answerable"]
"""Rule-defined question subsets (``RunConfig.select``)."""


@dataclass(frozen=True)
class SamplingParams(CheckedConfig):
    """Request parameters of model calls; ``None`` leaves a parameter to the method's default for the call kind
    (its ``{kind}_*`` config fields), else to the server. A parameter set here wins over the method's defaults.

    - ``temperature``: sampling temperature of every call.
    - ``top_p``: nucleus-sampling mass of every call.
    - ``max_tokens``: completion token limit of every call (wins over the method's ``{kind}_max_tokens``).
    - ``stop``: stop sequences of every call.
    - ``reasoning_effort``: a reasoning model's effort (low / medium / high) for every call (wins over the
      method's ``{kind}_reasoning_effort``).
    - ``seed``: the requests' sampling seed.
    - ``extra``: server-specific request fields, sent as they are.
    """

    temperature: float | None = bounded(None, ge=0)
    top_p: float | None = bounded(None, gt=0, le=1)
    max_tokens: int | None = bounded(None, ge=1)
    stop: tuple[str, ...] | None = None
    reasoning_effort: str | None = None
    seed: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def request_params(self) -> dict[str, Any]:
        """The parameters that are set, as ``ChatRequest.build`` takes them."""
        return {name: value for name, value in self.to_dict().items() if value is not None and value != {}}


@dataclass(frozen=True)
class RoleSpec(CheckedConfig):
    """The model of one method role (``--model-roles ROLE=NAME[@URL]``, or a mapping of these fields).

    - ``model``: model name (a ``standin-*`` or the name its server serves).
    - ``url``: its OpenAI-compatible endpoint (``None``: in process for a stand-in, else ``SPARQLAB_MODEL_URL``).
    - ``params``: request parameters of this role's calls, over the run's sampling parameters.
    - ``options``: options of the llm factory for this model.
    """

    model: str
    url: str | None = None
    params: SamplingParams = field(default_factory=SamplingParams)
    options: dict[str, Any] = field(default_factory=dict)

    def check(self) -> None:
        if not self.model:
            raise ValueError("a model role needs a model name")

    @classmethod
    def from_text(cls, text: str) -> RoleSpec:
        """``NAME`` or ``NAME@URL`` (the URL split at the last ``@http``)."""
        name, sep, url = text.rpartition("@http")
        return cls(name, "http" + url) if sep else cls(text)


@dataclass(frozen=True)
class ModelSettings(CheckedConfig):
    """Which models answer, where they run and how they are asked.

    - ``model``: model name: a registered ``standin-*`` or the name an OpenAI-compatible server serves
      (``None``: ``SPARQLAB_MODEL`` for a method that needs a model; the resolved name is saved and hashed).
    - ``model_url``: that server's OpenAI-compatible endpoint, e.g. http://gpu:8000/v1 (``None``: in process for a
      stand-in, else ``SPARQLAB_MODEL_URL``); several replicas of one model as URL,URL,... (calls spread over
      them, least in flight first; docs/runs.md); part of the run id.
    - ``model_options``: options of the llm factory as NAME=VALUE (e.g. a stand-in's ``delay_ms``).
    - ``model_params``: the request parameters of every call (:class:`SamplingParams`: temperature, max_tokens,
      seed ...).
    - ``model_roles``: models by role for methods that call several, as ROLE=NAME[@URL] (e.g.
      ``corrector=meta-llama/Llama-3.1-70B@http://gpu2:8000/v1``); a role not named uses the run's model.
    """

    model: str | None = None
    model_url: str | None = None
    model_options: dict[str, Any] = field(default_factory=dict)
    model_params: SamplingParams = field(default_factory=lambda: SamplingParams(seed=0))
    model_roles: dict[str, RoleSpec] = field(default_factory=dict)


@dataclass(frozen=True)
class KGSettings(CheckedConfig):
    """The knowledge graph the questions run on.

    - ``kg``: what :func:`sparqlab.kg.open_kg` opens: a KG name (movies, wikidata), an endpoint URL, an RDF file
      or a store folder (``None``: the KG the questions name).
    - ``kg_url``: a SPARQL endpoint serving that KG instead of the profile's default (e.g. a QLever mirror), or an
      RDF file or store folder holding it (``kg`` then names the profile).
    - ``kg_options``: ``open_kg`` options (NAME=VALUE on the command line): ``timeout_s`` and ``max_rows`` of every query,
      ``workers``, ``search`` (local: a label index built from the KG; api: wbsearchentities); ``max_in_flight``
      (queries at once on a remote service; default the profile's, Wikidata's 5) and ``retry`` (how long a
      throttling service is retried before the run stops: a mapping of :class:`~sparqlab.kg.service.RetryPolicy`
      fields). ``workers`` (queries at once on an embedded store), ``max_in_flight`` and ``retry`` stay out of the
      run id.
    """

    kg: str | None = None
    kg_url: str | None = None
    kg_options: dict[str, Any] = field(default_factory=dict)

    def check(self) -> None:
        check_kg_options(self.kg_options, "kg_options")


@dataclass(frozen=True)
class QuestionSelection(CheckedConfig):
    """Which questions run, when ``run`` is not given them directly.

    - ``dataset``: a dataset name (``sparqlab data list``) or a JSONL file of questions.
    - ``split``: its split (``None``: the dataset's test split).
    - ``language``: one language of a multilingual dataset, e.g. de of TEXT2SPARQL's ck26 (en, de) or es of db25
      and db26 (en, es); unset: all its languages. Part of the run id and of the run folder's name.
    - ``limit``: the first N questions in dataset order (after ``select``; also applies to questions passed in).
    - ``sample``: N questions drawn reproducibly from those, stratified by question type (``None``: all).
    - ``sample_seed``: the seed of ``sample``.
    - ``select``: a rule-defined subset before ``limit`` and ``sample``; answerable = the questions whose gold
      query answers on the run's KG (the SAGA paper's evaluation sets, docs/fidelity.md).
    """

    dataset: str | None = None
    split: str | None = None
    language: str | None = None
    limit: int | None = bounded(None, ge=0)
    sample: int | None = bounded(None, ge=0)
    sample_seed: int = 0
    select: Selection | None = None


@dataclass(frozen=True)
class EvaluationSettings(CheckedConfig):
    """How long a question may take and how its answer is judged.

    - ``question_timeout_s``: per-question limit in s on the method's work and, separately, on executing its
      final query (``question_timeout`` / ``final_query_timeout`` error categories); a served request's limit
      counts from its arrival, the wait for a free slot included.
    - ``answer_match``: how predicted answers are compared with gold ones: iri, label or either (``None``: the KG
      profile's rule; the rule used is saved, hashed and reported in metrics.json).
    - ``generate_only``: write each question's final query without executing or scoring it; score the folder
      later against any KG with ``sparqlab runs score RUN --kg KG``.
    - ``gold_snapshot``: where the gold answers of questions that ship none come from: auto = the dataset's
      snapshot in data/gold_snapshots when there is one (``sparqlab data snapshot-gold``; else the gold queries run
      live), off = run the gold queries live, or the path of a snapshot file. The snapshot used is named in
      metrics.json and its digest enters the run id.
    - ``allow_gold_errors``: run although gold queries fail or return nothing on the run's KG (listed before
      any question is answered; without it the run stops there); their questions count as gold errors.
    """

    question_timeout_s: float | None = bounded(300.0, gt=0)
    answer_match: AnswerMatch | None = None
    generate_only: bool = False
    gold_snapshot: str = "auto"
    allow_gold_errors: bool = False

    def check(self) -> None:
        if not self.gold_snapshot:
            raise ValueError('gold_snapshot must be "auto", "off" or the path of a snapshot file')


@dataclass(frozen=True)
class ExecutionSettings(CheckedConfig):
    """How and where a run executes; none of these enters the run id.

    - ``concurrency``: questions in flight at once.
    - ``model_slots``: requests a model endpoint serves at once (e.g. llama.cpp's ``--n_parallel``); ``None``:
      what the endpoint announces (llama.cpp's ``/props`` ``total_slots``), else no limit. The runner never has
      more requests in flight to one endpoint, nor more questions in flight than the slots of the run's model:
      more would only queue, their time counting against the question's deadline.
    - ``shard_index`` / ``num_shards``: this process answers the questions at positions i with i % num_shards ==
      shard_index (Slurm array jobs; ``sparqlab runs merge`` joins the shards).
    - ``cache``: the model response cache's mode: read_write, replay (cached responses only; a miss aborts) or off.
    - ``cache_path``: the response cache file (``None``: ``SPARQLAB_CACHE``/responses.sqlite).
    - ``progress``: show a progress bar.
    - ``output_root``: the runs root (``None``: ``SPARQLAB_RUNS`` or runs/).
    - ``served_urls``: where the models served by the job itself are reached, as MODEL=URL: the URL called for
      the endpoint ``serve:MODEL`` (the server a job with a ``serve:`` block started, on the port it got;
      docs/sweeps.md).
    - ``repeats``: run the configuration this many times, with sampling seeds seed, seed+1, ... (each an
      ordinary run, its seed in its id) as one run group with mean, sd and intervals over questions and repeats
      (docs/runs.md); 1: one run.
    """

    concurrency: int = bounded(8, ge=1)
    model_slots: int | None = bounded(None, ge=1)
    shard_index: int = bounded(0, ge=0)
    num_shards: int = bounded(1, ge=1)
    cache: CacheMode = "read_write"
    cache_path: str | None = None
    progress: bool = True
    output_root: str | None = None
    served_urls: dict[str, str] = field(default_factory=dict)
    repeats: int = bounded(1, ge=1)

    def check(self) -> None:
        if self.shard_index >= self.num_shards:
            raise ValueError(f"shard_index must be in 0..num_shards-1; got shard_index={self.shard_index}, "
                             f"num_shards={self.num_shards}")


@dataclass(frozen=True, init=False)
class RunConfig(FlatConfig):
    """Everything needed to (re)run a method over a question set; saved as ``config.json`` in the run folder.

    - ``experiment``: folder under the runs root that groups related runs (``runs/<experiment>/<run_id>/``).
    - ``models``: the models, their endpoints, sampling parameters and roles (:class:`ModelSettings`).
    - ``graph``: the KG (:class:`KGSettings`).
    - ``questions``: the dataset and which of its questions (:class:`QuestionSelection`).
    - ``evaluation``: the per-question time limit and how answers are judged (:class:`EvaluationSettings`).
    - ``execution``: concurrency, shards, cache, progress bar, output folder (:class:`ExecutionSettings`).
    """

    experiment: str = "default"
    models: ModelSettings = field(default_factory=ModelSettings)
    graph: KGSettings = field(default_factory=KGSettings)
    questions: QuestionSelection = field(default_factory=QuestionSelection)
    evaluation: EvaluationSettings = field(default_factory=EvaluationSettings)
    execution: ExecutionSettings = field(default_factory=ExecutionSettings)

    def check(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9._-]+", self.experiment or "") or self.experiment in (".", ".."):
            raise ValueError(f"experiment name {self.experiment!r} must be non-empty, use only letters, digits, "
                             "'.', '_' and '-', and be neither '.' nor '..' (it becomes a folder name under the "
                             "runs folder)")

    @classmethod
    def from_saved(cls, document: dict[str, Any], where: str = "config.json") -> RunConfig:
        """The run configuration of a saved ``config.json`` document; another format is a clear error."""
        check_format(document, where)
        return cls.from_dict(document["run"])

    @property
    def sharded(self) -> bool:
        return self.num_shards > 1

    @property
    def resources(self) -> ExecutionResources:
        """The threads and workers of this run's ``concurrency`` (the one sizing policy)."""
        return ExecutionResources.from_concurrency(self.concurrency)

    def root(self) -> Path:
        return Path(self.output_root) if self.output_root else runs_dir()

    def sampling_params(self) -> dict[str, Any]:
        """The request parameters every model call of the run starts from."""
        return self.models.model_params.request_params()

    def resolved(self, needs_model: bool) -> RunConfig:
        """This config with the environment's defaults applied, once (:mod:`sparqlab.core.environment`): the
        model from ``SPARQLAB_MODEL`` when the method needs a model and none is named, and the endpoint of every
        served model (the run's, each role's) from ``SPARQLAB_MODEL_URL`` when it has none. A method that needs
        no model keeps none. The resolved values are saved in ``config.json`` and enter the run id."""
        model, url = model_defaults(self.model, self.model_url, served_over_http=served_over_http) \
            if self.model or needs_model else (None, None)
        roles = {role: spec.replace(url=model_defaults(spec.model, spec.url, served_over_http=served_over_http).url)
                 for role, spec in self.model_roles.items()}
        return self.replace(model=model, model_url=url if model else None, model_roles=roles)


if set(SamplingParams.field_names()) != set(SAMPLING_PARAMETERS):
    raise TypeError("SamplingParams must declare exactly the llm layer's SAMPLING_PARAMETERS")


def check_format(document: dict[str, Any], where: str) -> None:
    """Refuse a ``config.json`` / ``manifest.json`` of another run-folder format, saying what to do."""
    found = document.get("format", 1)
    if found != RUN_FORMAT:
        raise ValueError(f"{where} was written in run-folder format {found}; this sparqlab reads format {RUN_FORMAT}"
                         " (a typed, grouped run configuration and content-keyed run ids): it is not resumed or "
                         "rerun — run the same settings again for a new folder")


NOT_IN_RUN_ID = frozenset({"experiment", "execution", "evaluation.gold_snapshot", "evaluation.allow_gold_errors",
                           "graph.kg_options.workers",
                           "graph.kg_options.max_in_flight", "graph.kg_options.retry"})
"""What of a RunConfig does not enter the run id, by path: the experiment (where the folder lives), the execution
group, the gold snapshot setting (the digest of the snapshot used enters instead), ``allow_gold_errors`` (it
decides whether a run starts, not its answers) and the KG options that only
change how queries reach the KG (see the module docstring)."""


def _without(tree: dict[str, Any], paths: frozenset[str], prefix: str = "") -> dict[str, Any]:
    """``tree`` (a config's ``to_dict``) without the entries at ``paths`` (dotted, into nested mappings)."""
    return {key: _without(value, paths, f"{prefix}{key}.") if isinstance(value, dict) else value
            for key, value in tree.items() if f"{prefix}{key}" not in paths}


def questions_fingerprint(questions: list[Question]) -> str:
    """Hash of the full question list in order (every field of every question), so an edited dataset file is a
    new run."""
    return stable_hash([q.to_dict() for q in questions], 16)


def identity(config: RunConfig, method_config: dict[str, Any], fingerprint: str,
             kg_content: str | None = None, kg_profile: str | None = None,
             gold_snapshot: str | None = None, kg_engine: Engine | None = None) -> dict[str, Any]:
    """What the run id hashes: the result-relevant config settings, the method's config, the KG's content and its
    profile's digest (:meth:`~sparqlab.kg.profiles.KGProfile.digest`), the questions and the digest of the gold
    snapshot the run scores against (``None``: gold queries run live), and the engine behind an endpoint
    (``kg_engine``: name and version, so one URL served by two engines gives two runs; an embedded store's
    content identity already names it, and its runs keep their ids, as do a KG's whose engine is unknown)."""
    run_identity = {"format": RUN_FORMAT, "run": _without(config.to_dict(), NOT_IN_RUN_ID), "kg": kg_content,
                    "kg_profile": kg_profile, "method": method_config, "questions": fingerprint,
                    "gold_snapshot": gold_snapshot}
    if kg_engine is not None and kg_engine.name not in ("embedded", "unknown"):
        run_identity["kg_engine"] = {"name": kg_engine.name, "version": kg_engine.version}
    return run_identity


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:40] or "x"


def make_run_id(config: RunConfig, run_identity: dict[str, Any]) -> str:
    """``<method>-<dataset>[-<language>]-<model>-<hash of run_identity>`` (:func:`identity`): readable in a
    listing, unique through the hash (the dataset part is left out when the questions were passed in directly)."""
    method = str(run_identity["method"].get("method", "method"))
    digest = stable_hash(run_identity, 10)
    dataset = f"{_slug(Path(config.dataset).stem if '/' in config.dataset else config.dataset)}-" \
        if config.dataset else ""
    if config.language:
        dataset += f"{_slug(config.language)}-"
    return f"{_slug(method)}-{dataset}{_slug(config.model or 'nomodel')}-{digest}"


def shard_folder_name(run_id: str, shard_index: int, num_shards: int) -> str:
    """The folder of one shard; the unsharded run (and a merge) uses ``run_id`` itself."""
    return run_id if num_shards == 1 else f"{run_id}-shard{shard_index}of{num_shards}"


def apply_limit(questions: list[Question], limit: int | None) -> list[Question]:
    """The first ``limit`` questions; duplicate ids are an error (a run keys everything by id)."""
    selected = list(questions if limit is None else questions[:limit])
    duplicates = sorted(id_ for id_, count in Counter(q.id for q in selected).items() if count > 1)
    if duplicates:
        raise ValueError(f"question ids must be unique within a run; duplicated: {', '.join(duplicates[:10])}")
    return selected


def select_shard(questions: list[Question], shard_index: int, num_shards: int) -> list[Question]:
    """Positions ``shard_index, shard_index + num_shards, ...`` of the list: deterministic for a given list,
    balanced to within one question, and every question lands in exactly one shard."""
    return questions[shard_index::num_shards]
