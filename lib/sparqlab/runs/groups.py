"""Run groups: one configuration run several times with sampling seeds ``seed, seed+1, …`` as one experiment.

Each repeat is an ordinary run (:func:`sparqlab.runs.run` with ``repeats=1`` and its own seed, which is part of
its run id), so resume, the response cache, replay, shards and merges work per repeat, and a repeat replayed from
the cache is the same run, never a new sample. The group is a folder ``runs/<experiment>/<group>/`` beside its
members holding ``group.json`` (its name, seeds and member folders) and ``metrics.json``
(:func:`group_metrics`: the members' header, then :func:`sparqlab.eval.repeats.summarise_repeats` of their
predictions). The group's name is its first member's run id with ``-x<N>`` (N repeats), so the same command
finds the same group. Listings show a group as one row, its scores ``mean ± sd``
(:func:`group_row`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparqlab.core.paths import runs_dir
from sparqlab.eval.metrics import Metric, metric_list
from sparqlab.runs.config import RunConfig
from sparqlab.runs.manifest import now_iso
from sparqlab.runs.records import header_from
from sparqlab.runs.results import (
    UnreadableRunWarning,
    list_runs,
    model_label,
    run_dirs,
    run_records,
    run_status,
    selection_label,
    what_changed,
)
from sparqlab.runs.store import CONFIG, MANIFEST, METRICS, RunUnreadable, read_document, write_json

if TYPE_CHECKING:
    from sparqlab.runs.runner import RunResult

GROUP = "group.json"
"""The file that makes a folder a run group: its name, repeats, seeds and member run folders."""

GROUP_FORMAT = 1
"""The layout of ``group.json`` (its ``format`` key)."""

MEMBER_FIELDS = ("run_id", "folder", "shard_index", "num_shards")
"""Header fields of one member run, left out of the group's ``metrics.json``."""


def repeat_configs(config: RunConfig) -> list[RunConfig]:
    """The configuration of each repeat of ``config``: ``repeats=1`` and seeds ``seed, seed+1, …`` (a
    ``repeats=1`` config is itself, so its run is today's run)."""
    if config.repeats == 1:
        return [config]
    if config.seed is None:
        raise ValueError("repeats need a sampling seed to count from: give seed (the repeats use seed, seed+1, ...)")
    if config.sharded:
        raise ValueError("repeats and shards do not combine: run the repeats unsharded, or each seed's shards as "
                         "runs of their own")
    return [config.replace(seed=config.seed + index, repeats=1) for index in range(config.repeats)]


def group_name(first_run_id: str, repeats: int) -> str:
    """The group of ``repeats`` runs whose first (lowest seed) is ``first_run_id``."""
    return f"{first_run_id}-x{repeats}"


@dataclass
class GroupResult:
    """What :func:`run_repeats` returns: the group folder, its members' results and the group's metrics."""

    group_dir: Path
    runs: list[RunResult]
    metrics: dict[str, Any]


def run_repeats(run_one: Callable[[RunConfig], RunResult], config: RunConfig) -> GroupResult:
    """Run each repeat of ``config`` (:func:`repeat_configs`) with ``run_one`` (e.g. ``lambda c: run(method,
    config=c)``), one after the other, then write the group folder (:func:`write_group`)."""
    results = [run_one(repeat) for repeat in repeat_configs(config)]
    group_dir = results[0].run_dir.parent / group_name(results[0].run_id, len(results))
    return GroupResult(group_dir, results, write_group(group_dir, [result.run_dir for result in results]))


def write_group(group_dir: Path, members: Sequence[Path]) -> dict[str, Any]:
    """Write ``group.json`` and the group's ``metrics.json`` for the member run folders (seed order); returns
    the metrics."""
    group_dir.mkdir(parents=True, exist_ok=True)
    seeds = [RunConfig.from_saved(read_document(member / CONFIG), str(member / CONFIG)).seed for member in members]
    write_json(group_dir / GROUP, {"format": GROUP_FORMAT, "name": group_dir.name, "experiment": group_dir.parent.name,
                                   "repeats": len(members), "seeds": seeds,
                                   "members": [member.name for member in members]})
    metrics = group_metrics(group_dir)
    write_json(group_dir / METRICS, metrics)
    return metrics


def group_members(group_dir: Path) -> list[Path]:
    """The member run folders of a group, in seed order; a missing member is an error naming it."""
    document = read_document(group_dir / GROUP)
    members = [group_dir.parent / name for name in document["members"]]
    missing = [str(member) for member in members if not (member / MANIFEST).exists()]
    if missing:
        raise FileNotFoundError(f"run group {group_dir} lacks its members {', '.join(missing)}")
    return members


def group_metrics(group_dir: Path, k: int | None = None) -> dict[str, Any]:
    """The content of a group's ``metrics.json``, recomputed from its members' predictions: the first member's
    header (method, model, ``model_is_standin``, KG, dataset …), the group's name, seeds, members and their
    statuses, then :func:`~sparqlab.eval.repeats.summarise_repeats` (``k``: of the metrics @k, default all
    repeats)."""
    from sparqlab.eval.repeats import summarise_repeats  # numpy and scipy: only when a group is summarised

    document = read_document(group_dir / GROUP)
    members = group_members(group_dir)
    statuses = [run_status(member) for member in members]
    first = read_document(members[0] / MANIFEST)
    run = read_document(members[0] / CONFIG).get("run", {})
    header = {key: value for key, value in header_from(first).items() if key not in MEMBER_FIELDS}
    return {**header, "group": document["name"], "experiment": document["experiment"],
            "seeds": document["seeds"], "members": document["members"], "member_status": statuses,
            "complete": all(status == "complete" for status in statuses), "selection": selection_label(run),
            "n_questions": first.get("n_questions"),
            **summarise_repeats([run_records(member) for member in members], k), "updated": now_iso()}


def group_dirs(root: str | Path | None = None, experiment: str | None = None) -> list[Path]:
    """Every run group folder under ``root``, optionally of one experiment."""
    root = Path(root) if root else runs_dir()
    return sorted(path.parent for path in root.glob(f"{experiment or '*'}/*/{GROUP}"))


def find_group(ref: str | Path, root: str | Path | None = None) -> Path | None:
    """The group folder ``ref`` names: a path, or under the runs root ``experiment/group``, a group name, or
    ``experiment/prefix`` of a group name that one group of the experiment alone has; ``None`` when it names no
    group (it may name a run or an experiment)."""
    root = Path(root) if root else runs_dir()
    for candidate in (Path(ref), root / ref):
        if (candidate / GROUP).exists():
            return candidate
    if Path(ref).is_absolute():
        return None
    experiment, _, name = str(ref).rpartition("/")
    groups = group_dirs(root, experiment or None)
    matches = [d for d in groups if d.name == name] or [d for d in groups if experiment and d.name.startswith(name)]
    return matches[0] if len(matches) == 1 else None


def group_records(group_dir: Path) -> list[list[dict[str, Any]]]:
    """Each member's checked prediction records, in seed order."""
    return [run_records(member) for member in group_members(group_dir)]


def over_repeats(metrics: dict[str, Any]) -> list[tuple[Metric, str, dict[str, Any]]]:
    """The metrics over repeats in a group's metrics: each metric, its key with the group's k (``pass@5``) and
    its ``{"value", "interval"}``."""
    return [(metric, metric.at(metrics["k"]), metrics[metric.at(metrics["k"])])
            for metric in metric_list(over_repeats=True) if metric.at(metrics["k"]) in metrics]


def spread(metric: Metric, score: dict[str, Any] | None) -> str:
    """A group's score as the tables print it: ``mean ± sd`` in the metric's unit (``-`` without a value)."""
    if not score or score.get("mean") is None:
        return "-"
    return f"{metric.format(score['mean'])} ± {metric.format(score['sd'])}"


def interval_text(metric: Metric, score: dict[str, Any] | None) -> str:
    """``[low, high]`` of a group's two-level interval in the metric's unit, ``-`` without one."""
    if not score or not score.get("interval"):
        return "-"
    low, high = score["interval"]
    return f"[{metric.format(low)}, {metric.format(high)}]"


def group_row(group_dir: Path, metrics: dict[str, Any] | None = None) -> dict[str, Any]:
    """A group as one row of ``runs list``: its name, status, progress, every listed metric as ``mean ± sd``,
    the model (stand-ins labelled), and the number of repeats."""
    metrics = metrics or group_metrics(group_dir)
    scores = metrics["scores"]
    return {"experiment": metrics["experiment"], "run": metrics["group"],
            "date": str(metrics.get("updated") or "")[:16].replace("T", " "),
            "status": "complete" if metrics["complete"] else "incomplete",
            "done": f"{metrics['n_repeats']} repeats",
            **{metric.key: spread(metric, scores.get(metric.key)) for metric in metric_list()},
            "model": model_label(metrics.get("model"), metrics.get("model_is_standin")),
            "method": metrics.get("method"), "dataset": metrics.get("dataset"), "split": metrics.get("split"),
            "selection": metrics.get("selection"), "engine": metrics.get("engine"), "changed": "",
            "errors": ""}


def listing(root: str | Path | None = None, experiment: str | None = None) -> list[dict[str, Any]]:
    """The rows of ``runs list``: each run (with what changed since its family's previous run) that is no group's
    member, then each group as one row (:func:`group_row`)."""
    folders = run_dirs(root, experiment)
    changed = what_changed(folders)
    groups = group_dirs(root, experiment)
    members = {group.parent / name for group in groups for name in read_document(group / GROUP)["members"]}
    rows = [{**row, "changed": changed[folder]} for row, folder in zip(list_runs(root, experiment), folders,
                                                                         strict=True) if folder not in members]
    return rows + [listed_group(group) for group in groups]


def listed_group(group_dir: Path) -> dict[str, Any]:
    """:func:`group_row`, or for a group whose members cannot be read (a member folder deleted, a damaged line) a
    row ``unreadable`` naming the problem, with an :class:`UnreadableRunWarning`: one broken group never hides
    the other rows."""
    try:
        return group_row(group_dir)
    except (FileNotFoundError, RunUnreadable) as error:
        warnings.warn(f"{error} (the run group is listed as unreadable)", UnreadableRunWarning, stacklevel=3)
        return {"experiment": group_dir.parent.name, "run": group_dir.name, "status": "unreadable",
                "errors": str(error)}
