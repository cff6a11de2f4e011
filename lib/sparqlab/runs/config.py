"""What a run is: its configuration, its identity (the run id) and its shard of the questions.

The run id is a hash of everything that changes a run's *results*: the method's own config, the KG and model
names, sampling parameters, dataset selection, seed, per-question timeout and the questions themselves. Knobs
that only change *how* or *where* a run executes (concurrency, progress bar, experiment and output folder,
endpoint locations, cache mode) are left out, so a rerun with more concurrency or against the same model on
another host resumes the same folder, and one configuration has one id in every experiment. Shard fields are
left out of the id too but go into the shard folder's name, so every shard of one configuration shares the id
of the unsharded run and merges into its folder.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from sparqlab.core.hashing import stable_hash
from sparqlab.core.paths import runs_dir
from sparqlab.data.question import Question
from sparqlab.eval.matching import ANSWER_MATCH_MODES
from sparqlab.llm.cache import CACHE_MODES

NOT_IN_RUN_ID = frozenset({"experiment", "output_root", "concurrency", "progress", "model_url", "kg_url", "cache",
                           "cache_path", "shard_index", "num_shards"})
"""RunConfig fields that do not enter the run id: where the folder lives (experiment, root), execution knobs,
endpoint locations and shard fields (see the module docstring)."""


@dataclass
class RunConfig:
    """Everything needed to (re)run a method over a question set; saved as ``config.json`` in the run folder.

    - ``experiment``: folder under the runs root that groups related runs (``runs/<experiment>/<run_id>/``).
    - ``kg`` / ``kg_url`` / ``kg_options``: what :func:`sparqlab.kg.open_kg` opens — a KG name (``movies``,
      ``wikidata``), endpoint URL, RDF file or store folder; an optional endpoint URL serving that KG instead of
      the profile's default (e.g. a QLever mirror of Wikidata); and ``open_kg`` options (``timeout_s`` and
      ``max_rows`` of every query, ``workers``). ``kg=None`` takes the KG the questions name (or the name of a
      KG object passed to ``run``).
    - ``model`` / ``model_url`` / ``model_options``: model name (a registered ``standin-*`` or the name an
      OpenAI-compatible server knows), its endpoint (``None``: the llm layer's default / environment) and
      backend options passed to the llm layer's factory (e.g. a stand-in's delay). ``model=None`` takes
      ``SPARQLAB_MODEL`` for methods that need a model (the resolved name goes into the run id and
      ``config.json``); methods that need none ignore it.
    - ``model_params``: sampling parameters of every request (temperature, top_p, max_tokens, stop ...).
    - ``model_roles``: models by role for methods that call several (``{"corrector": {"model": NAME, "url": URL,
      "params": {...}, "options": {...}}}``); a role not named here uses the run's model. ``params`` override
      ``model_params`` for that role's requests; ``options`` go to the llm factory; ``url`` (like ``model_url``)
      is a location and stays out of the run id.
    - ``dataset`` / ``split`` / ``limit``: which questions, when ``run`` is not given them directly. ``limit``
      keeps the first N in dataset order (it also applies to questions passed in).
    - ``language``: one language of a multilingual dataset (TEXT2SPARQL's ``ck26`` en/de, ``db25``/``db26``
      en/es); ``None`` runs every language's questions. It enters the run id and the folder name.
    - ``sample`` / ``sample_seed``: draw ``sample`` questions reproducibly, stratified by question type
      (:func:`sparqlab.data.sampling.sample_questions`), from the questions ``limit`` kept; ``None`` keeps all.
    - ``select``: a rule-defined subset applied before ``limit`` and ``sample`` (:data:`SELECTIONS`):
      ``"answerable"`` keeps the questions whose gold query returns an answer on the run's KG (``kg_url``: the
      endpoint the run uses) — the rule behind the smaller evaluation sets of the SAGA paper
      (docs/fidelity.md); a question without a gold query is kept when it has gold answers. ``None``: all.
    - ``seed``: the requests' sampling seed unless ``model_params`` sets one.
    - ``concurrency``: questions in flight at once (asyncio tasks).
    - ``question_timeout_s``: per-question limit on the method's work (``answer``) and, separately, on its
      final-query execution; hitting it records ``error_category="question_timeout"`` (a final query that hits
      the KG's own query timeout is ``final_query_timeout``).
    - ``shard_index`` / ``num_shards``: this process handles questions whose position ``i`` in the (limited)
      question list has ``i % num_shards == shard_index``; see :func:`select_shard`.
    - ``output_root``: the runs root (default :func:`sparqlab.core.paths.runs_dir`).
    - ``cache`` / ``cache_path``: the model response cache's mode, ``read_write``, ``replay`` (hits only; a miss
      aborts the run) or ``off``, and file (default :func:`sparqlab.llm.default_cache_path`; point it into a
      results folder to ship the cache with the results).
    - ``progress``: show a tqdm progress bar.
    - ``answer_match``: how predicted answers are compared with gold ones, ``iri``, ``label`` or ``either``
      (:mod:`sparqlab.eval.matching`); ``None`` takes the KG profile's rule. The resolved rule is saved in
      ``config.json``, enters the run id and is reported in ``metrics.json``.
    - ``generate_only``: write each question's final query without executing it (no answers, no scores, gold
      queries not run): for executing on an offline dump later; :func:`sparqlab.runs.scoring.score_generated`
      then scores the folder against any KG or endpoint.
    """

    experiment: str = "default"
    kg: str | None = None
    kg_url: str | None = None
    kg_options: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    model_url: str | None = None
    model_options: dict[str, Any] = field(default_factory=dict)
    model_params: dict[str, Any] = field(default_factory=dict)
    model_roles: dict[str, dict[str, Any]] = field(default_factory=dict)
    dataset: str | None = None
    split: str | None = None
    language: str | None = None
    limit: int | None = None
    sample: int | None = None
    sample_seed: int = 0
    select: str | None = None
    seed: int = 0
    concurrency: int = 8
    question_timeout_s: float | None = 300.0
    shard_index: int = 0
    num_shards: int = 1
    output_root: str | None = None
    cache: str = "read_write"
    cache_path: str | None = None
    progress: bool = True
    generate_only: bool = False
    answer_match: str | None = None

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9._-]+", self.experiment or ""):
            raise ValueError(f"experiment name {self.experiment!r} must be non-empty and use only letters, "
                             "digits, '.', '_' and '-' (it becomes a folder name)")
        if self.num_shards < 1 or not 0 <= self.shard_index < self.num_shards:
            raise ValueError(f"shard_index must be in 0..num_shards-1; got shard_index={self.shard_index}, "
                             f"num_shards={self.num_shards}")
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1; got {self.concurrency}")
        if self.cache not in CACHE_MODES:
            raise ValueError(f"cache must be one of {', '.join(CACHE_MODES)}; got {self.cache!r}")
        if self.limit is not None and self.limit < 0:
            raise ValueError(f"limit must be >= 0 or None; got {self.limit}")
        if self.answer_match not in (None, *ANSWER_MATCH_MODES):
            raise ValueError(f"answer_match must be one of {', '.join(ANSWER_MATCH_MODES)} or None; "
                             f"got {self.answer_match!r}")
        if self.select not in (None, *SELECTIONS):
            raise ValueError(f"select must be one of {', '.join(SELECTIONS)} or None; got {self.select!r}")
        if self.sample is not None and self.sample < 0:
            raise ValueError(f"sample must be >= 0 or None; got {self.sample}")
        for role, spec in self.model_roles.items():
            unknown = sorted(set(spec) - ROLE_KEYS) if isinstance(spec, dict) else None
            if unknown is None or unknown or not spec.get("model"):
                raise ValueError(f"model_roles[{role!r}] must be a dict with 'model' and optionally "
                                 f"{', '.join(sorted(ROLE_KEYS - {'model'}))}; got {spec!r}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        """From ``config.json``'s ``run`` section; unknown keys are an error (they would be silently lost)."""
        known = {f.name for f in fields(cls)}
        data = dict(data)
        if "timeout_s" in data and "question_timeout_s" not in data:  # config.json of runs before the rename
            data["question_timeout_s"] = data.pop("timeout_s")
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown RunConfig fields: {', '.join(unknown)}")
        return cls(**data)

    @property
    def sharded(self) -> bool:
        return self.num_shards > 1

    def root(self) -> Path:
        return Path(self.output_root) if self.output_root else runs_dir()

    def sampling_params(self) -> dict[str, Any]:
        """The request parameters every model call of the run starts from."""
        return {"seed": self.seed, **self.model_params}


SELECTIONS = ("answerable",)
"""Rule-defined question subsets (``RunConfig.select``)."""

ROLE_KEYS = frozenset({"model", "url", "params", "options"})
"""Keys of one ``model_roles`` entry."""


def questions_fingerprint(questions: list[Question]) -> str:
    """Hash of the full question list in order (ids, texts, gold), so a changed question set is a new run."""
    return stable_hash([[q.id, q.text, q.gold_sparql, q.gold_answers] for q in questions], 16)


def identity(config: RunConfig, method_config: dict[str, Any], fingerprint: str) -> dict[str, Any]:
    """What the run id hashes: the result-relevant config fields, the method's config and the questions."""
    run = {k: v for k, v in config.to_dict().items() if k not in NOT_IN_RUN_ID}
    run["model_roles"] = {role: {k: v for k, v in spec.items() if k != "url"}
                          for role, spec in sorted(config.model_roles.items())}
    return {"run": run, "method": method_config, "questions": fingerprint}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:40] or "x"


def make_run_id(config: RunConfig, method_config: dict[str, Any], fingerprint: str) -> str:
    """``<method>-<dataset>[-<language>]-<model>-<hash>``: readable in a listing, unique through the hash (the dataset part is
    left out when the questions were passed in directly)."""
    method = str(method_config.get("method", "method"))
    digest = stable_hash(identity(config, method_config, fingerprint), 10)
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
    seen: set[str] = set()
    duplicates = sorted({q.id for q in selected if q.id in seen or seen.add(q.id)})
    if duplicates:
        raise ValueError(f"question ids must be unique within a run; duplicated: {', '.join(duplicates[:10])}")
    return selected


def select_shard(questions: list[Question], shard_index: int, num_shards: int) -> list[Question]:
    """Positions ``shard_index, shard_index + num_shards, ...`` of the list: deterministic for a given list,
    balanced to within one question, and every question lands in exactly one shard."""
    return questions[shard_index::num_shards]
