"""Browsing results: find runs, summarise them, load them into pandas, and format tables for the CLI.

A run is referred to by its folder path, by ``<experiment>/<folder>``, or by its folder name (or a unique
prefix of it) under the runs root. Counts and scores are always recomputed from ``predictions.jsonl`` (cached by
its size and modification time), never taken from ``metrics.json``: a run in progress, killed, or whose
predictions were cut or edited is shown as its lines are, and a damaged line or an impossible value (F1 outside
[0, 1]) is an error naming the file and line. A run folder that cannot be read is listed as ``unreadable`` with
a warning naming the file, and the other runs are listed as usual.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sqlite3
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparqlab.core.cache import JsonCache
from sparqlab.core.errors import StorageFull
from sparqlab.core.hashing import stable_hash
from sparqlab.core.jsonl import JsonlScan, scan_jsonl
from sparqlab.core.names import short_name
from sparqlab.core.paths import cache_dir, runs_dir
from sparqlab.core.text import text_table
from sparqlab.eval.metrics import Metric, find_metric, metric_list
from sparqlab.platform.trace import TraceEvent
from sparqlab.runs.merge import MERGING_SUFFIX
from sparqlab.runs.metrics import compute_metrics
from sparqlab.runs.records import flatten_prediction, header_from, prediction_problem
from sparqlab.runs.store import (
    CONFIG,
    MANIFEST,
    METRICS,
    PREDICTIONS,
    TRACES,
    RunUnreadable,
    first_per_id,
    is_locked,
    read_document,
    read_records,
)

if TYPE_CHECKING:
    import pandas as pd

STANDIN_LABEL = "[standin]"
NO_MODEL_LABEL = "[no model]"


def model_label(model: str | None, is_standin: bool | None) -> str:
    """How a run's model is shown everywhere: stand-ins and model-free runs are labelled, never bare."""
    if model is None:
        return NO_MODEL_LABEL
    return f"{model} {STANDIN_LABEL}" if is_standin else model


def run_dirs(root: str | Path | None = None, experiment: str | None = None) -> list[Path]:
    """Every run folder (one holding ``manifest.json``) under ``root``, optionally of one experiment."""
    root = Path(root) if root else runs_dir()
    pattern = f"{experiment}/*/{MANIFEST}" if experiment else f"*/*/{MANIFEST}"
    return sorted(path.parent for path in root.glob(pattern) if not path.parent.name.endswith(MERGING_SUFFIX))


class InterruptedMergeWarning(UserWarning):
    """A merge was stopped before its folder was in place; merging again starts afresh."""


def warn_interrupted_merges(root: str | Path | None = None, experiment: str | None = None) -> None:
    """Name each scratch folder an interrupted ``runs merge`` left (:data:`~sparqlab.runs.merge.MERGING_SUFFIX`),
    so that a killed merge is never a silently missing run."""
    root = Path(root) if root else runs_dir()
    for leftover in sorted(root.glob(f"{experiment or '*'}/.*{MERGING_SUFFIX}")):
        run_id = leftover.name[1:].removesuffix(MERGING_SUFFIX)
        warnings.warn(f"{leftover} is what an interrupted merge of {leftover.parent.name}/{run_id} left; run "
                      f"`sparqlab runs merge {leftover.parent.name}/{run_id}` again (it starts afresh)",
                      InterruptedMergeWarning, stacklevel=3)


def find_run(ref: str | Path, root: str | Path | None = None) -> Path:
    """The run folder ``ref`` names: a path, or under the runs root ``experiment/folder``, ``experiment/prefix``,
    or a folder name or prefix unique across experiments (an exact name wins over longer names it prefixes)."""
    path = Path(ref)
    if (path / MANIFEST).exists():
        return path
    root = Path(root) if root else runs_dir()
    if (root / path / MANIFEST).exists():
        return root / path
    experiment, _, name = ("", "", str(ref)) if path.is_absolute() else str(ref).rpartition("/")
    candidates = run_dirs(root, experiment or None)
    matches = [d for d in candidates if d.name == name] or [d for d in candidates if d.name.startswith(name)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise FileNotFoundError(f"no run {str(ref)!r} under {root} (try `sparqlab runs list`)")
    shown = ", ".join(f"{d.parent.name}/{d.name}" for d in matches[:8])
    raise ValueError(f"{str(ref)!r} matches {len(matches)} runs ({shown}); name it as experiment/folder")


SERVED_STATUSES = {"running": "serving", "interrupted": "killed"}
"""How a served session (``sparqlab serve``) reads: ``serving`` while its server runs, ``complete`` once stopped,
``killed`` when its process died without stopping (every request answered until then is in the folder; a served
session is never resumed)."""


def run_status(run_dir: Path, manifest: Mapping[str, Any] | None = None) -> str:
    """``complete``, ``incomplete`` (stopped early), ``running`` (a process holds it) or ``interrupted`` (killed
    while running); a served session's own words are :data:`SERVED_STATUSES`."""
    manifest = read_document(run_dir / MANIFEST) if manifest is None else manifest
    status = manifest.get("status", "incomplete")
    if status == "running" and not is_locked(run_dir):
        status = "interrupted"
    return SERVED_STATUSES.get(status, status) if manifest.get("served") else status


def _damage_message(scan: JsonlScan) -> str:
    shown = "; ".join(str(line) for line in scan.damaged[:3])
    more = f" (and {len(scan.damaged) - 3} more damaged lines)" if len(scan.damaged) > 3 else ""
    return f"{shown}{more}. Resuming the run sets damaged lines aside and answers their questions again"


def run_records(run_dir: str | Path, manifest: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The prediction lines of a run folder that belong to it (the manifest's question ids; every line of a
    served session), each checked (:func:`sparqlab.runs.records.prediction_problem`); a torn last line (a run
    still writing) is left out, any damaged line is a :class:`RunUnreadable` naming the file and line."""
    run_dir = Path(run_dir)
    manifest = read_document(run_dir / MANIFEST) if manifest is None else manifest
    scan = scan_jsonl(run_dir / PREDICTIONS, prediction_problem)
    if scan.damaged:
        raise RunUnreadable(_damage_message(scan))
    records = first_per_id(scan.records)
    wanted = None if manifest.get("served") else manifest.get("question_ids")
    if wanted is not None:
        ids = set(wanted)
        records = [r for r in records if r["id"] in ids]
    return records


LISTING_CACHE = "listings.sqlite"
"""The cache (under ``cache_dir()``) of counts and scores recomputed for listings, keyed by the run folder, the
size and modification time of its predictions and manifest, and the version of the code that computes them."""


@functools.cache
def _code_version() -> str:
    """Sizes and modification times of the package's source files: a listing computed by other code is not
    reused."""
    package = Path(__file__).resolve().parents[1]
    return stable_hash(sorted((str(p.relative_to(package)), *_file_key(p)) for p in package.rglob("*.py")), 16)


@functools.cache
def _listing_cache(path: Path) -> JsonCache | None:
    try:
        return JsonCache(path, rebuild=True)
    except (OSError, sqlite3.Error, StorageFull):  # a read-only or full cache folder: recompute every time
        return None


def _file_key(path: Path) -> list[int]:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return [-1, -1]
    return [stat.st_size, stat.st_mtime_ns]


def recomputed_metrics(run_dir: Path, manifest: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`sparqlab.runs.metrics.compute_metrics` of the run's checked prediction lines (:func:`run_records`)
    out of its selected questions (a served session: the requests it answered), cached by the size and
    modification time of ``predictions.jsonl`` and ``manifest.json``."""
    cache = _listing_cache(cache_dir() / LISTING_CACHE)
    key = stable_hash([str(run_dir.resolve()), _file_key(run_dir / PREDICTIONS), _file_key(run_dir / MANIFEST),
                       _code_version(), [metric.key for metric in metric_list()]], 32)  # a plug-in metric: recompute
    if cache is not None and (hit := cache.get("run-metrics", key)) is not None:
        return hit
    records = run_records(run_dir, manifest)
    n_questions = len(records) if manifest.get("served") else int(manifest.get("n_questions") or 0)
    metrics = compute_metrics(records, n_questions)
    if cache is not None:
        with contextlib.suppress(StorageFull):  # a full disk: the listing is right, only not kept for next time
            cache.put("run-metrics", key, metrics)
    return metrics


def run_summary(run_dir: str | Path) -> dict[str, Any]:
    """A run's numbers as ``metrics.json`` holds them, with counts and scores recomputed from its prediction
    lines (so a cut, edited or still-growing ``predictions.jsonl`` is shown as it is: a finished run that lost
    lines reads ``incomplete``), plus ``status``,
    ``path``, ``selection`` and ``date``. Raises :class:`RunUnreadable` naming a file that cannot be read or a
    line that is damaged."""
    run_dir = Path(run_dir)
    manifest = read_document(run_dir / MANIFEST)
    status = run_status(run_dir, manifest)
    stored = read_document(run_dir / METRICS) if (run_dir / METRICS).exists() else {}
    run = read_document(run_dir / CONFIG).get("run", {}) if (run_dir / CONFIG).exists() else {}
    metrics = {**stored, **header_from(manifest), **recomputed_metrics(run_dir, manifest)}
    metrics.setdefault("wall_time_s", 0.0)
    if status == "complete" and not metrics["complete"]:  # lines were lost after the run finished
        status = "incomplete"
    return {**metrics, "status": status, "path": str(run_dir), "selection": selection_label(run),
            "date": str(manifest.get("updated") or "")[:16].replace("T", " ")}


def selection_label(run: Mapping[str, Any]) -> str:
    """Which questions a run used, from its config (``config.json``'s ``run`` or its ``questions`` group): ``all``,
    ``answerable``, ``sample 40 (seed 0)``, ``limit 10`` or several."""
    run = run.get("questions", run)
    parts = [run["select"]] if run.get("select") else []
    if run.get("sample") is not None:
        parts.append(f"sample {run['sample']} (seed {run.get('sample_seed', 0)})")
    if run.get("limit") is not None:
        parts.append(f"limit {run['limit']}")
    return ", ".join(parts) or "all"


def _table_row(summary: Mapping[str, Any]) -> dict[str, Any]:
    usage = summary.get("usage") or {}
    per_question = usage.get("per_question", {})
    return {
        "experiment": summary.get("experiment"),
        "run": summary.get("folder"),
        "date": summary.get("date"),
        "status": summary.get("status"),
        "done": f"{summary['n_done']}/{summary.get('n_questions')}" if "n_done" in summary else None,
        **{metric.key: summary.get(metric.key) for metric in metric_list()},
        "model": model_label(summary.get("model"), summary.get("model_is_standin")),
        "model_is_standin": summary.get("model_is_standin"),
        "method": summary.get("method"),
        "kg": short_name(summary.get("kg")),
        "engine": summary.get("engine"),
        "dataset": short_name(summary.get("dataset")),
        "split": summary.get("split"),
        "selection": summary.get("selection"),
        "calls_per_q": per_question.get("model_calls"),
        "tokens_per_q": per_question.get("tokens"),
        "latency_s": (summary.get("latency_s") or {}).get("mean"),
        "wall_time_s": summary.get("wall_time_s"),
        "errors": summary.get("problem") or ", ".join(
            f"{k}={v}" for k, v in (summary.get("error_categories") or {}).items() if k != "none"),
    }


class UnreadableRunWarning(UserWarning):
    """A listing met a run folder it cannot read; the run is listed as ``unreadable`` and the rest are shown."""


def summary_row(run_dir: Path) -> dict[str, Any]:
    """:func:`run_summary` as a table row; a run that cannot be read is a row with status ``unreadable`` (its
    problem in ``errors``) and an :class:`UnreadableRunWarning` naming the file, so one damaged folder never
    hides the others."""
    try:
        return _table_row(run_summary(run_dir))
    except RunUnreadable as error:
        warnings.warn(f"{error} (the run is listed as unreadable)", UnreadableRunWarning, stacklevel=3)
        return _table_row({"experiment": run_dir.parent.name, "folder": run_dir.name, "status": "unreadable",
                           "problem": str(error)})


def list_runs(root: str | Path | None = None, experiment: str | None = None) -> list[dict[str, Any]]:
    """One row per run folder: ids, status, progress, scores, model (stand-ins labelled), costs
    (:func:`summary_row`); an interrupted merge is named in a warning (:func:`warn_interrupted_merges`)."""
    warn_interrupted_merges(root, experiment)
    return [summary_row(d) for d in run_dirs(root, experiment)]


FAMILY_FIELDS = ("experiment", "method", "kg", "dataset", "model")
"""What makes two runs one config family in ``runs list`` (the readable part of the run id, and the KG)."""


def identity_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """What differs between the identities (``config.json``'s ``identity``) of two runs: ``kg content``,
    ``kg profile``, ``questions``, ``gold snapshot``, the method's ``config`` / ``prompts`` / ``artifacts``, and run settings by name."""
    from sparqlab.runs.config import RunConfig

    changes = [word for key, word in (("kg", "kg content"), ("kg_profile", "kg profile"), ("kg_engine", "kg engine"),
                                      ("questions", "questions"), ("gold_snapshot", "gold snapshot"))
               if before.get(key) != after.get(key)]
    methods = before.get("method") or {}, after.get("method") or {}
    changes += [f"method {key}" for key in ("config", "prompts", "artifacts") if methods[0].get(key) != methods[1].get(key)]
    settings = [RunConfig.flatten(side.get("run") or {}) for side in (before, after)]
    changes += [name for name in dict.fromkeys([*settings[0], *settings[1]])
                if settings[0].get(name) != settings[1].get(name)]
    return changes


def what_changed(run_folders: Sequence[Path]) -> dict[Path, str]:
    """For each run, what changed since the previous run (by last start) of its config family (:data:`FAMILY_FIELDS`),
    e.g. ``kg content`` after an edited KG file; empty for a family's first run. A folder of another format
    says so."""
    from sparqlab.runs.config import RUN_FORMAT

    described = []
    found: dict[Path, str] = {}
    for folder in run_folders:
        started = (folder / CONFIG).stat().st_mtime_ns if (folder / CONFIG).exists() else 0
        try:
            config = read_document(folder / CONFIG) if started else {}
            manifest = read_document(folder / MANIFEST)
        except RunUnreadable:  # the listing names the file (summary_row) and leaves the folder out of families
            found[folder] = ""
            continue
        family = json.dumps([manifest.get(key) for key in FAMILY_FIELDS], default=str)
        described.append((family, started, folder, config))
    previous: dict[str, dict[str, Any]] = {}
    for family, _, folder, config in sorted(described, key=lambda item: (item[0], item[1])):
        if config.get("format", 1) != RUN_FORMAT:
            found[folder] = f"format {config.get('format', 1)}"
            continue
        before = previous.get(family)
        found[folder] = ", ".join(identity_changes(before.get("identity") or {}, config.get("identity") or {})) \
            if before else ""
        previous[family] = config
    return {folder: found[folder] for folder in run_folders}


def load_runs(experiment: str | None = None, root: str | Path | None = None) -> pd.DataFrame:
    """:func:`list_runs` as a DataFrame, for notebooks."""
    import pandas as pd

    return pd.DataFrame(list_runs(root, experiment))


def load_predictions(run: str | Path, root: str | Path | None = None) -> pd.DataFrame:
    """``predictions.jsonl`` of a run as a DataFrame, one row per question, with ``experiment``, ``run``,
    ``model``, ``model_is_standin`` and ``dataset`` (its short name) columns so that several runs concatenate into one
    table.
    Scalar entries of ``extra`` and ``scores`` become ``extra.<key>`` / ``scores.<key>`` columns, and the
    questions' metadata (question type, hops ...) columns of their own unless a column has that name already
    (:func:`sparqlab.runs.records.flatten_prediction`; a metadata key named like one of the run columns becomes
    ``metadata.<key>``)."""
    import pandas as pd

    run_dir = find_run(run, root)
    manifest = read_document(run_dir / MANIFEST)
    frame = pd.DataFrame([flatten_prediction(r) for r in run_records(run_dir, manifest)])
    run_columns = ("experiment", "run", "model", "model_is_standin", "dataset")
    # a question metadata key of the same name (TEXT2SPARQL's dataset IRI) keeps its value as metadata.<key>
    frame = frame.rename(columns={c: f"metadata.{c}" for c in run_columns if c in frame.columns})
    frame.insert(0, "experiment", manifest.get("experiment"))
    frame.insert(1, "run", run_dir.name)
    frame.insert(2, "model", manifest.get("model"))
    frame.insert(3, "model_is_standin", manifest.get("model_is_standin"))
    frame.insert(4, "dataset", short_name(manifest.get("dataset")))
    return frame


def load_traces(run: str | Path, root: str | Path | None = None) -> dict[str, list[TraceEvent]]:
    """Question id → its typed trace events (the steps of the method, then the final query); untyped events of
    older runs are read too."""
    return {r["id"]: [TraceEvent.from_json(e) for e in r["trace"]]
            for r in read_records(find_run(run, root) / TRACES)}


def load_config(run: str | Path, root: str | Path | None = None) -> dict[str, Any]:
    """The run's ``config.json``."""
    return read_document(find_run(run, root) / CONFIG)


def compare_fields() -> list[str]:
    """The fields ``runs compare`` shows, one row each: what the run is, the metrics of the ``compare`` view
    (:data:`sparqlab.eval.metrics.METRICS`), then its costs."""
    return ["model", "method", "kg", "dataset", "split", "selection", "date", "status", "done",
            *(metric.key for metric in metric_list("compare")), "calls_per_q", "tokens_per_q", "latency_s",
            "wall_time_s", "errors"]


def compare_rows(runs: Sequence[str | Path], root: str | Path | None = None) -> list[dict[str, Any]]:
    """Side-by-side comparison: one row per field of :func:`compare_fields`, one column per run."""
    rows = [summary_row(find_run(ref, root)) for ref in runs]
    names = [f"{r['experiment']}/{r['run']}" for r in rows]
    return [{"field": field, **{name: row.get(field) for name, row in zip(names, rows, strict=True)}}
            for field in compare_fields()]


def _cell(value: Any, metric: Metric | None = None) -> str:
    if value is None:
        return "-"
    if metric is not None and isinstance(value, int | float) and not isinstance(value, bool):
        return metric.format(value)
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, Mapping | list):
        return json.dumps(value)
    return str(value)


def format_table(rows: Iterable[Mapping[str, Any]], columns: Sequence[str] | None = None) -> str:
    """A plain-text table with a header line; metrics (columns, or rows of a comparison, named by a registered
    metric) as the metric prints them (rates in percent with one decimal), other floats to three decimals, ``None``
    as ``-``."""
    rows = list(rows)
    if not rows:
        return "(no runs)"
    columns = list(columns or rows[0].keys())
    metric_of = {name: find_metric(name) for name in {*columns, *(str(row.get("field")) for row in rows)}}
    cells = [[_cell(row.get(c), metric_of[c] or metric_of[str(row.get("field"))]) for c in columns] for row in rows]
    return text_table(columns, cells, rule=False)
