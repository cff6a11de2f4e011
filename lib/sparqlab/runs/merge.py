"""Combine the shards of one run into the run's own folder.

Shards of a run live next to each other as ``<run_id>-shard<i>of<n>/`` and hold positions ``i, i+n, ...`` of the
question list (:func:`sparqlab.runs.config.select_shard`). :func:`merge_shards` checks that they belong together
(same run id, question fingerprint and shard count, and the same configuration in each ``config.json``: run
identity and method), that every line of a shard is sound (the checks resume applies: a damaged line is refused
naming its file and line, to be set aside by resuming that shard), that no question appears in two shards, and
that every shard is present and finished; it
then writes ``<run_id>/`` with predictions and traces in question order and
metrics recomputed from the merged predictions, exactly as an unsharded run would have them (``wall_time_s`` is
the shards' sum, i.e. compute time). Missing shards or questions are an error listing what is missing, unless
``allow_incomplete`` (then the merge says so in its metrics: ``complete: false``, ``n_missing``).

The merged folder is written whole in a scratch folder beside it (``.<run_id>.merging``) and renamed into place,
so a merge killed midway leaves no half-written run folder (which listings would skip for want of a manifest):
only the scratch folder, which ``sparqlab runs list`` names in a warning and the next merge removes before
starting again.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparqlab.core.jsonl import scan_jsonl, write_jsonl
from sparqlab.core.paths import runs_dir
from sparqlab.runs.config import check_format
from sparqlab.runs.manifest import manifest_document, now_iso
from sparqlab.runs.metrics import gold_snapshot_entry, kg_client_totals, metrics_document
from sparqlab.runs.records import header_from, prediction_problem, trace_problem
from sparqlab.runs.store import (
    CONFIG,
    ENVIRONMENT,
    MANIFEST,
    METRICS,
    PREDICTIONS,
    TRACES,
    is_locked,
    read_json,
    write_json,
)

MERGING_SUFFIX = ".merging"
"""The scratch folder a merge writes before renaming it into place is ``.<run_id>.merging``."""

_SHARD = re.compile(r"^(?P<run_id>.+)-shard(?P<index>\d+)of(?P<count>\d+)$")


class MergeError(ValueError):
    """The shards cannot be merged as asked; the message lists what is wrong or missing."""


@dataclass
class MergeReport:
    """What a merge found and wrote."""

    target: Path
    run_id: str
    num_shards: int
    shards: dict[int, Path]
    missing_shards: list[int] = field(default_factory=list)
    missing_ids: dict[int, list[str]] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return not self.missing_shards and not any(self.missing_ids.values())

    def problems(self) -> list[str]:
        lines = [f"shard {i} of {self.num_shards} is missing (no folder {self.run_id}-shard{i}of{self.num_shards})"
                 for i in self.missing_shards]
        for index, ids in sorted(self.missing_ids.items()):
            if ids:
                shown = ", ".join(ids[:10]) + (" ..." if len(ids) > 10 else "")
                lines.append(f"shard {index} has not finished {len(ids)} questions: {shown}")
        return lines

    def summary(self) -> str:
        head = (f"merged {len(self.shards)} of {self.num_shards} shards of {self.run_id} into {self.target}: "
                f"{self.metrics.get('n_done')} of {self.metrics.get('n_questions')} questions")
        return "\n".join([head, *self.problems()])


def parse_shard_folder(name: str) -> tuple[str, int, int] | None:
    """``(run_id, shard_index, num_shards)`` of a shard folder name, ``None`` for any other name."""
    match = _SHARD.match(name)
    return None if match is None else (match["run_id"], int(match["index"]), int(match["count"]))


def find_shards(experiment_dir: Path, run_id: str) -> tuple[int, dict[int, Path]]:
    """The shard count and the shard folders of ``run_id`` under ``experiment_dir``."""
    found: dict[int, dict[int, Path]] = {}
    for path in sorted(experiment_dir.iterdir()) if experiment_dir.is_dir() else []:
        parsed = parse_shard_folder(path.name)
        if parsed and parsed[0] == run_id and path.is_dir():
            found.setdefault(parsed[2], {})[parsed[1]] = path
    if not found:
        raise MergeError(f"no shard folders {run_id}-shard<i>of<n> in {experiment_dir}")
    if len(found) > 1:
        counts = ", ".join(str(n) for n in sorted(found))
        raise MergeError(f"{run_id} was sharded in more than one way (num_shards {counts}) in {experiment_dir}; "
                         "move the folders of the split you do not want elsewhere")
    (count, shards), = found.items()
    return count, shards


def _run_folder(path: Path) -> Path:
    """The run's own folder for a path to it or to one of its shards."""
    parsed = parse_shard_folder(path.name)
    return path.with_name(parsed[0]) if parsed else path


def resolve_merge_target(ref: str | Path, root: str | Path | None = None) -> Path:
    """The folder a merge writes, from a path (of the run or one of its shards), ``experiment/run_id``, or a bare
    run id whose shards are found under the runs root."""
    path = _run_folder(Path(ref))
    if path.parent.is_dir() and path.parent != Path("."):
        return path
    root = Path(root) if root else runs_dir()
    if len(path.parts) == 2:
        return root / path
    experiments = sorted({d.parent for d in root.glob(f"*/{path.name}-shard*of*") if d.is_dir()})
    if len(experiments) != 1:
        where = ", ".join(e.name for e in experiments) or "no experiment"
        raise MergeError(f"cannot tell which run {str(ref)!r} means (shards found in {where} under {root}); "
                         "name it as experiment/run_id")
    return experiments[0] / path.name


def _sound_lines(path: Path, check) -> list[dict[str, Any]]:
    """The records of a shard's JSONL file, checked as resume checks them; a damaged line is a
    :class:`MergeError` naming every one (resuming the shard sets them aside and answers their questions again)."""
    scan = scan_jsonl(path, check)
    if scan.damaged:
        listed = "\n".join(f"  {line}" for line in scan.damaged[:10])
        raise MergeError(f"{len(scan.damaged)} damaged line(s) in {path}:\n{listed}\nresume that shard (it sets them "
                         "aside and answers their questions again), then merge")
    return scan.records


def merge_shards(target: str | Path, *, allow_incomplete: bool = False, overwrite: bool = False) -> MergeReport:
    """Merge the shards of the run whose folder is ``target`` (``runs/<experiment>/<run_id>``; a shard folder
    names its run too) and return a report. See the module docstring for the checks."""
    target = _run_folder(Path(target))
    run_id = target.name
    num_shards, shards = find_shards(target.parent, run_id)
    report = MergeReport(target, run_id, num_shards, shards,
                         missing_shards=[i for i in range(num_shards) if i not in shards])

    running = [i for i, path in sorted(shards.items()) if is_locked(path)]
    if running:
        raise MergeError(f"shard(s) {', '.join(map(str, running))} of {run_id} are still running; merge when "
                         "they have finished")
    manifests = {i: _manifest(path) for i, path in shards.items()}
    _check_same_run(run_id, manifests)
    configs = {i: read_json(path / CONFIG) for i, path in shards.items()}
    _check_same_config(run_id, configs, shards)
    predictions: dict[str, dict[str, Any]] = {}
    owner: dict[str, int] = {}
    for index, path in sorted(shards.items()):
        expected = manifests[index]["question_ids"]
        expected_set = set(expected)
        for record in _sound_lines(path / PREDICTIONS, prediction_problem):
            qid = record["id"]
            if qid in owner:
                raise MergeError(f"question {qid!r} is in shard {owner[qid]} and shard {index}: the shards overlap")
            if qid not in expected_set:
                raise MergeError(f"shard {index} holds question {qid!r}, which is not in its question list")
            owner[qid] = index
            predictions[qid] = record
        report.missing_ids[index] = [qid for qid in expected if qid not in predictions]
    if not report.complete and not allow_incomplete:
        raise MergeError("cannot merge an incomplete run:\n" + "\n".join(report.problems())
                         + "\nfinish the shards (rerun them; they resume) or pass allow_incomplete=True")
    if (target / PREDICTIONS).exists() and not overwrite:
        raise MergeError(f"{target} already holds predictions (an unsharded run or an earlier merge); "
                         "pass overwrite=True to replace them")

    order = [q for q in _question_order(manifests, num_shards) if q in predictions]
    merged = [predictions[q] for q in order]
    traces = {r["id"]: r for path in shards.values() for r in _sound_lines(path / TRACES, trace_problem)
              if r["id"] in predictions}
    final, target = target, target.with_name(f".{target.name}{MERGING_SUFFIX}")
    shutil.rmtree(target, ignore_errors=True)  # what a killed merge left
    target.mkdir(parents=True)
    write_jsonl(target / PREDICTIONS, merged)
    write_jsonl(target / TRACES, [traces[q] for q in order if q in traces])

    first = manifests[min(manifests)]
    header = {**header_from(first), "folder": final.name, "shard_index": 0, "num_shards": 1,
              "merged_from": num_shards}
    shard_metrics = [read_json(p / METRICS) for p in shards.values() if (p / METRICS).exists()]
    wall = sum(m.get("wall_time_s", 0.0) for m in shard_metrics)
    report.metrics = metrics_document(header, merged, first["n_total"], wall,
                                      prepare=_merged_prepare([m.get("prepare") or {} for m in shard_metrics]))
    report.metrics.update(kg_client_totals(shard_metrics))
    report.metrics["gold_snapshot"] = gold_snapshot_entry(
        next((m["gold_snapshot"] for m in shard_metrics if m.get("gold_snapshot")), None), merged)
    write_json(target / METRICS, report.metrics)
    config = configs[min(shards)]
    config["run"]["execution"].update(shard_index=0, num_shards=1)
    config["merged_from"] = {"num_shards": num_shards, "folders": [p.name for p in shards.values()]}
    write_json(target / CONFIG, config)
    write_json(target / ENVIRONMENT, {"merged": now_iso(), "shards": {
        p.name: read_json(p / ENVIRONMENT) for p in shards.values() if (p / ENVIRONMENT).exists()}})
    status = "complete" if report.metrics["complete"] else "incomplete"
    write_json(target / MANIFEST, manifest_document(header, status, len(merged), first["questions_fingerprint"],
                                                    first["n_total"], _question_order(manifests, num_shards)))
    _move_into_place(target, final)
    return report


def _move_into_place(staged: Path, final: Path) -> None:
    """Rename the written folder to the run's folder; over an existing folder (``overwrite``), file by file with
    the manifest last, each replaced atomically, so a listing never sees a run without its manifest."""
    if not final.exists():
        staged.rename(final)
        return
    names = sorted((p.name for p in staged.iterdir()), key=lambda name: name == MANIFEST)
    for name in names:
        (staged / name).replace(final / name)
    staged.rmdir()


def _merged_prepare(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The shards' ``prepare`` costs summed (each shard prepares once); artifacts are the same in every shard."""
    if not any(parts):
        return {}

    def add(values: list[Any]) -> Any:
        if all(isinstance(v, dict) for v in values):
            keys = sorted({k for v in values for k in v})
            return {k: add([v[k] for v in values if k in v]) for k in keys}
        return round(sum(v for v in values if isinstance(v, int | float)), 6)

    summed = add([{k: v for k, v in p.items() if k != "artifacts"} for p in parts])
    return {**summed, "artifacts": next((p["artifacts"] for p in parts if p.get("artifacts")), {})}


def _manifest(path: Path) -> dict[str, Any]:
    if not (path / MANIFEST).exists():
        raise MergeError(f"{path} has no {MANIFEST}; it is not a run folder (or its run never started)")
    manifest = read_json(path / MANIFEST)
    try:
        check_format(manifest, str(path / MANIFEST))
    except ValueError as error:
        raise MergeError(str(error)) from None
    return manifest


def _check_same_run(run_id: str, manifests: dict[int, dict[str, Any]]) -> None:
    for index, manifest in manifests.items():
        if manifest["run_id"] != run_id or manifest["shard_index"] != index:
            raise MergeError(f"shard folder {index} holds run {manifest['run_id']!r} shard "
                             f"{manifest['shard_index']}, not {run_id!r} shard {index}")
    fingerprints = {m["questions_fingerprint"] for m in manifests.values()}
    if len(fingerprints) > 1:
        raise MergeError(f"the shards of {run_id} were run on different question lists")


CONFIG_GROUPS_TO_MATCH = ("identity", "method", "method_class", "questions")
"""The groups of ``config.json`` every shard of a run must share (the shard position differs, and so may the
execution settings such as concurrency)."""


def _check_same_config(run_id: str, configs: dict[int, dict[str, Any]], shards: dict[int, Path]) -> None:
    """Refuse shards whose ``config.json`` differ in what makes the run (identity, method, questions): merged,
    they would score two different runs as one."""
    first = min(configs)
    for index, config in sorted(configs.items()):
        differ = [group for group in CONFIG_GROUPS_TO_MATCH if config.get(group) != configs[first].get(group)]
        if differ:
            raise MergeError(f"the shards of {run_id} were run with different configurations: "
                             f"{shards[index] / CONFIG} differs from {shards[first] / CONFIG} in "
                             f"{', '.join(differ)}; rerun the odd shard with the run's settings")


def _question_order(manifests: dict[int, dict[str, Any]], num_shards: int) -> list[str]:
    """The full question order: position ``p`` is element ``p // n`` of shard ``p % n``'s list. Positions of a
    missing shard are unknown and left out."""
    n_total = next(iter(manifests.values()))["n_total"]
    return [manifests[p % num_shards]["question_ids"][p // num_shards]
            for p in range(n_total) if p % num_shards in manifests]
