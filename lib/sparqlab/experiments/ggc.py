"""GGC experiments as library calls (the notebooks and ``sparqlab ggc`` are thin front ends over these).

* :func:`gate_data_run` — generator pass over the gate's questions of a training split (GGC §4.1,
  :mod:`sparqlab.methods.ggc.split`; an ordinary run);
* :func:`gate_from_generator_run` — that pass, labels, a trained gate saved as an artifact folder with its digest;
* :func:`gate_table` — gates compared on the labelled initial queries of a held-out generator-only run (Table 4);
* :func:`run_modes` — generator-only vs correct-all vs gated runs of one configuration (Table 2);
* :func:`threshold_sweep` — one gated run at the smallest τ, every τ's metrics from its records (Table 5a).

pandas and :mod:`sparqlab.methods.ggc.metrics` are imported by the functions that use them: the ``sparqlab``
parser reads :data:`GGC_RUN_DEFAULTS` at start-up.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparqlab.core.hashing import stable_hash
from sparqlab.core.paths import cache_dir
from sparqlab.methods.ggc.data import gate_from_runs, labelled_queries
from sparqlab.methods.ggc.gate import Gate, GateSettings, decide
from sparqlab.methods.ggc.method import GGC
from sparqlab.methods.ggc.split import GENERATOR_SHARE, SPLIT_SEED
from sparqlab.runs.config import RunConfig

if TYPE_CHECKING:
    import pandas as pd

MODE_LABELS = {"none": "generator only", "all": "correct all", "gated": "gated"}
"""Row labels of the settings in :func:`run_modes` tables (the paper's Table 1 names)."""


STANDIN_MEMORY_OPTIONS = ("standin-knn", "standin-corrector")
"""Stand-ins that take a memory slice (``start``, ``stop``)."""

GGC_RUN_DEFAULTS = {"model": "standin-knn", "dataset": "mcqa-movies", "kg": "movies", "experiment": "ggc",
                    "concurrency": 1, "cache": "off"}
"""Run settings of GGC experiments that differ from the declaration's: the GGC stand-in generator on the movie
data, one question in flight (the per-stage times are not interleaved) and no response cache (times measure the
models)."""


def with_memory_slice(config: RunConfig, start: int | None = None, stop: int | None = None,
                      **portion: Any) -> RunConfig:
    """``config`` with the GGC stand-ins' memory as model options of the run's model and of every role whose model
    is such a stand-in (other models are left as they are): the slice ``train[start:stop]`` when either is given,
    and ``portion`` (``generator_share``, ``split_seed``: which drawn portion they remember otherwise)."""
    memory = {k: v for k, v in (("start", start), ("stop", stop), *portion.items()) if v is not None}
    if not memory:
        return config
    roles = {role: spec.replace(options={**spec.options, **memory}) if spec.model in STANDIN_MEMORY_OPTIONS
             else spec for role, spec in config.model_roles.items()}
    options = {**config.model_options, **memory} if config.model in STANDIN_MEMORY_OPTIONS else config.model_options
    return config.replace(model_options=options, model_roles=roles)


def predictions_by_setting(results: Mapping[str, Any]) -> pd.DataFrame:
    """The predictions of several runs in one frame with a ``setting`` column (for per-question figures)."""
    import pandas as pd

    return pd.concat([r.predictions().assign(setting=label) for label, r in results.items()], ignore_index=True)


@dataclass
class TrainedGate:
    """A gate saved in ``folder`` with its content ``digest``, and the generator run its data came from."""

    gate: Gate
    folder: Path
    digest: str
    data_run: Path


def generator_config(base: RunConfig, **changes: Any) -> RunConfig:
    """``base`` for a generator-only pass: the corrector role is dropped (generator-only runs never call it),
    other ``changes`` applied."""
    roles = {k: v for k, v in base.model_roles.items() if k != "corrector"}
    return base.replace(model_roles=roles, **changes)


def gate_data_run(config: RunConfig, *, kg: Any = None, **options: Any) -> tuple[Any, dict[str, Any]]:
    """The generator-only pass over the gate's questions of ``config``'s training split: the first
    ``config.limit`` of its gate portion (:func:`~sparqlab.methods.ggc.split.gate_questions` with the
    :class:`GGCConfig` ``options`` ``generator_share``, ``split_seed``, ``generator_data``, ``allow_overlap``; further
    :class:`GGCConfig` options such as ``variant`` apply to the pass). A finished run is reused (the runner resumes
    it). Returns the run and the split's record (parameters, count + digest of the generator's
    portion and of the gate questions) for the gate's training record."""
    from sparqlab.data.registry import load
    from sparqlab.methods.ggc.split import gate_questions
    from sparqlab.runs import run

    method = GGC(mode="none", **options)
    questions = load(config.dataset, config.split)
    chosen, split = gate_questions(questions, config.limit, method.config.generator_share,
                                   method.config.generator_data, method.config.allow_overlap, method.config.split_seed)
    memory = {"dataset": str(config.dataset), "split": config.split,
              "generator_share": method.config.generator_share, "split_seed": method.config.split_seed}
    result = run(method, chosen, config=generator_config(with_standin_memory(config, memory)), kg=kg)
    failure = every_question_failed(result.run_dir)
    if failure:
        raise ValueError(f"the generator answered none of the {len(chosen)} gate questions of {config.split}: "
                         f"{failure}")
    return result, split.record(chosen)


def with_standin_memory(config: RunConfig, memory: Mapping[str, Any]) -> RunConfig:
    """``config`` whose GGC stand-in generator remembers ``memory`` (its ``dataset``, ``split``, ``generator_share``
    and ``split_seed``) where
    its options do not say otherwise: the generator's portion of the split the gate questions come from, which
    a run over that training split cannot find by itself (a run never learns from the split it scores)."""
    if config.model not in STANDIN_MEMORY_OPTIONS or "dataset" in config.model_options:
        return config
    return config.replace(model_options={**memory, **config.model_options})


def every_question_failed(run_dir: str | Path) -> str | None:
    """The error every question of a run stopped with, when none got an answer because the method failed (most
    common message first, e.g. a stand-in with nothing to remember); ``None`` when any question got further."""
    from collections import Counter

    from sparqlab.runs import load_traces

    traces = load_traces(run_dir)
    messages = Counter(str(event.data.get("message", event.data.get("error", "")))
                       for trace in traces.values() for event in trace if event.kind == "method_error")
    failed = {qid for qid, trace in traces.items() if any(event.kind == "method_error" for event in trace)}
    if not traces or failed != set(traces):
        return None
    return messages.most_common(1)[0][0]


def gate_from_generator_run(settings: GateSettings, config: RunConfig, *, kg_feedback: bool = False,
                            variant: str | None = None, folder: str | Path | None = None,
                            kg: Any = None, generator_share: float = GENERATOR_SHARE,
                            split_seed: int = SPLIT_SEED) -> TrainedGate:
    """Run the generator over the gate's questions of ``config``'s training split (:func:`gate_data_run`: the
    first ``limit`` of the gate portion that ``generator_share`` and ``split_seed`` leave), label the initial queries and train a
    gate on them (reading KG feedback when ``kg_feedback``); save it to ``folder`` (default: a content-keyed folder
    under ``cache_dir()/artifacts``) with the split in its ``training["data_split"]``. A finished generator run is
    reused (the runner resumes it)."""
    result, data_split = gate_data_run(config, kg=kg, variant=variant, generator_share=generator_share,
                                       split_seed=split_seed)
    graph = kg if kg is not None else _open(result.config.kg)
    gate = gate_from_runs([result.run_dir], graph, settings, kg_feedback=kg_feedback)
    gate.training["data_split"] = data_split
    key = [settings.to_dict(), kg_feedback, result.run_id, split_seed]
    folder = Path(folder) if folder else cache_dir() / "artifacts" / f"ggc-gate-{stable_hash(key, 16)}"
    digest = gate.save(folder)
    return TrainedGate(gate, folder, digest, result.run_dir)


def _open(kg_name: str) -> Any:
    from sparqlab.kg import open_kg

    return open_kg(kg_name)


def gate_table(gates: Mapping[str, Gate], run_dir: str | Path, kg: Any, threshold: float = 0.5) -> pd.DataFrame:
    """Table 4: each gate's accuracy / precision / recall / F1 / FPR / trigger rate at ``threshold`` on the
    initial queries of a generator-only run, on the question set and labels of the pipeline's gate metrics
    (:func:`~sparqlab.methods.ggc.metrics.pipeline_metrics`: a gold-error question needs correction)."""
    import pandas as pd

    from sparqlab.methods.ggc.metrics import gate_metrics

    rows = {}
    for name, gate in gates.items():
        examples = [q.gate_example() for q in labelled_queries([run_dir], kg, gate.kg_feedback, gold_errors=True)]
        probabilities = gate.probabilities(examples)
        decisions = [decide(p, threshold) for p in probabilities]
        rows[name] = gate_metrics([e.label for e in examples], decisions)
    return pd.DataFrame(rows).T


def run_modes(config: RunConfig, gate_path: str | Path | None, modes: Sequence[str] = ("none", "all", "gated"),
              kg: Any = None, **options: Any) -> dict[str, Any]:
    """One run per mode with otherwise equal settings; ``options`` are further :class:`GGCConfig` fields
    (``threshold``, ``kg_feedback``, ``variant`` ...). Returns ``{table label: RunResult}``."""
    from sparqlab.runs import run

    results = {}
    for mode in modes:
        method = GGC(mode=mode, gate_path=str(gate_path) if gate_path and mode == "gated" else None, **options)
        results[MODE_LABELS[mode]] = run(method, config=config, kg=kg)
    return results


def threshold_sweep(config: RunConfig, gate_path: str | Path, thresholds: Iterable[float], kg: Any = None,
                    **options: Any) -> tuple[Any, pd.DataFrame]:
    """Table 5a: one gated run at τ = min(thresholds) — generator outputs and gate probabilities computed once,
    the corrector called once per question any τ triggers — and every τ's metrics from its records."""
    from sparqlab.methods.ggc.metrics import stage_frame, sweep
    from sparqlab.runs import run

    thresholds = sorted(set(thresholds))
    if not thresholds:
        raise ValueError("give at least one threshold")
    result = run(GGC(mode="gated", gate_path=str(gate_path), threshold=thresholds[0], **options), config=config,
                 kg=kg)
    graph = kg if kg is not None else _open(result.config.kg)
    return result, sweep(stage_frame(result.run_dir, graph), thresholds)


def sweep_row(table: pd.DataFrame, threshold: float) -> pd.Series:
    """The row of a :func:`threshold_sweep` table at τ = ``threshold``; a ``ValueError`` naming the notebook
    parameters when the sweep has no such τ (a τ below the sweep's lowest would need corrector calls never made)."""
    rows = table.set_index("threshold")
    if threshold not in rows.index:
        raise ValueError(f"threshold={threshold} is not one of the sweep's thresholds {sorted(rows.index)}: give one "
                         "of them (e.g. -p threshold " f"{rows.index[0]}) or add it to thresholds")
    return rows.loc[threshold]

