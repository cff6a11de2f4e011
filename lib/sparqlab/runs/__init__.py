"""Running a method over a question set: one runner for every method, a results folder per run, resume,
sharding and merging, and loaders for browsing results.

Quick start::

    from sparqlab.runs import RunConfig, run
    result = run(method, questions, RunConfig(experiment="quickstart", kg="movies", model="standin-echo"))
    result.metrics, result.run_dir  # metrics.json (F1, EM, empty rate ...) and the results folder
    result.predictions()            # DataFrame

A results folder ``runs/<experiment>/<run_id>/`` holds ``config.json``, ``environment.json``, ``manifest.json``,
``predictions.jsonl``, ``traces.jsonl`` and ``metrics.json``. Calling ``run`` again with the same configuration
resumes it. ``run_repeats(lambda config: run(method, config=config), RunConfig(..., repeats=5))`` runs a
configuration with seeds seed … seed+4 as one run group (:mod:`sparqlab.runs.groups`).
"""

from sparqlab.runs.config import RunConfig, select_shard
from sparqlab.runs.groups import GroupResult, run_repeats
from sparqlab.runs.merge import MergeError, MergeReport, merge_shards
from sparqlab.runs.results import (
    find_run,
    list_runs,
    load_config,
    load_predictions,
    load_runs,
    load_traces,
    model_label,
    run_summary,
)
from sparqlab.runs.runner import RunAborted, RunResult, arun, run
from sparqlab.runs.store import RunInProgressError

__all__ = [
    "GroupResult",
    "MergeError",
    "MergeReport",
    "RunAborted",
    "RunConfig",
    "RunInProgressError",
    "RunResult",
    "arun",
    "find_run",
    "list_runs",
    "load_config",
    "load_predictions",
    "load_runs",
    "load_traces",
    "merge_shards",
    "model_label",
    "run",
    "run_repeats",
    "run_summary",
    "select_shard",
]
