"""A sweep as data: the grid file (YAML) and its expansion into cells, each an ordinary run.

A grid names the table's rows (``methods``: a method with its options and run settings), its column groups
(``datasets``: the questions and the KG they run on), and optional named ``axes`` whose values multiply the rows
(a seed, a model, a sample size, a method option)::

    name: all_methods                # default: the file's stem
    experiment: all_methods          # runs/<experiment>/<run_id>/ (default: the name)
    run: {sample: 6, concurrency: 4} # RunConfig settings shared by every cell
    methods:                         # rows: label -> method, options, RunConfig settings of that row
      direct: {method: direct, model: standin-keyword-rules}
      spinach: {method: spinach, shards: 4}   # each cell of the row split over 4 jobs, then merged
      ggc-gated: {method: ggc, options: {mode: gated}, model: standin-knn,
                  model_roles: {corrector: {model: standin-corrector}}}
    datasets:                        # column groups: label -> RunConfig settings (+ options, methods, metrics)
      metaqa-1hop: {dataset: metaqa-1hop}
      ck25: {dataset: ck25, kg: ck25, methods: {direct: {model: standin-schema-rules}}}
      wikidata-test: {dataset: ../data/wikidata_test/questions.jsonl, kg: wikidata,
                      kg_url: ../data/wikidata_test/wikidata_test.ttl, kg_options: {search: local},
                      options: {ggc: {train_dataset: qald7}}, metrics: [text2sparql]}
    axes:                            # NAME: [values]; NAME is a RunConfig setting or options.FIELD
      seed: [0, 1]
    engines: [embedded, oxigraph-server, virtuoso]   # the store as an axis (default: the KG as it is given)
    exclude:                         # cells left out: every given label must match
      - {method: genop, dataset: wikidata-test}
    executor:
      local: {workers: 2}
      slurm: {partition: gpu, timeout_min: 120, gpus_per_node: 1, cpus_per_task: 4, mem_gb: 32,
              array_parallelism: 16}

``engines`` multiplies the rows like an axis: each row runs on each SPARQL engine (``engine=virtuoso`` in its
label), a bundled, file or folder KG served on 127.0.0.1 for the run (``kg_options: {engine: ...}``,
:func:`sparqlab.kg.open_kg`), and ``sparqlab table`` adds how much each method's score depends on the store
(:func:`sparqlab.experiments.table.store_dependence`).

``repeats: N`` (the grid's, or the run setting ``repeats`` of a row or dataset) runs each cell N times with
sampling seeds seed, seed+1, ...: N cells of one row and dataset (:attr:`Cell.repeat`), each an ordinary run; the
last to finish writes the cell's run group (:mod:`sparqlab.runs.groups`), and ``sparqlab table`` shows the cell
as mean ± sd with the interval over questions and repeats. Repeats and shards do not combine.

``shards: N`` (a row's or a dataset's; the row's wins) splits each of its cells into N shards of the questions
(:class:`~sparqlab.runs.config.ExecutionSettings` ``shard_index``/``num_shards``), run as separate tasks by the
executor and merged into the cell's run (:func:`sparqlab.runs.merge_shards`) when the last one finishes.

A run setting is named as in :class:`~sparqlab.runs.config.RunConfig`: by its own name (``sample``), its dotted
path (``questions.sample``) or as a whole group (``questions: {sample: 6}``). Settings apply in this order, later
winning: ``run``, the dataset's, the method's, the dataset's for that row (its ``methods``, by row label: e.g.
the stand-in that fits the dataset's KG), the axes' values, then the caller's ``overrides`` (e.g. a real model
endpoint for every cell). Relative paths in ``dataset``, ``kg``,
``kg_url`` and ``cache_path`` are resolved against the grid file's folder when they exist there.
"""

from __future__ import annotations

import copy
import itertools
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sparqlab.core.paths import find_input
from sparqlab.engines import ENGINES
from sparqlab.experiments.model_launcher import ServeSpec
from sparqlab.runs.config import RoleSpec, RunConfig
from sparqlab.runs.groups import repeat_configs

GRID_KEYS = frozenset({"name", "experiment", "description", "run", "methods", "datasets", "axes", "engines",
                       "exclude", "executor", "serve", "repeats"})
ENGINE_AXIS = "engine"
"""The axis name of a grid's ``engines`` (in row labels: ``engine=virtuoso``)."""
METHOD_KEYS = frozenset({"method", "options", "shards"})
DATASET_KEYS = frozenset({"options", "methods", "metrics", "shards"})
EXECUTOR_KEYS = {"local": frozenset({"workers"}),
                 "slurm": frozenset({"partition", "timeout_min", "gpus_per_node", "cpus_per_task", "mem_gb",
                                     "array_parallelism", "account", "qos", "constraint", "additional"})}
SWEEP_OWNED = frozenset({"experiment", "shard_index", "num_shards"})
"""Run settings a grid may not set per cell: the experiment is the grid's, shards are the executor's."""
PATH_FIELDS = ("dataset", "kg", "kg_url", "cache_path")


class GridError(ValueError):
    """A grid file that cannot be expanded; the message names the offending entry."""


@dataclass(frozen=True)
class Cell:
    """One run of a sweep: a row (method configuration) on a column group (dataset).

    ``run`` holds the :class:`RunConfig` fields (with the grid's experiment), ``options`` the method's config
    fields; ``axes`` the row's axis values in grid order. Plain data, so a cell pickles into a Slurm job.
    A cell of ``shards`` > 1 runs as its :meth:`units`, one per shard (``shard_index`` set): each an ordinary
    sharded run, the last to finish merging them into the cell's run. A cell of ``repeats`` > 1 is one
    ``repeat`` (0, 1, ...) of its row and dataset, run with its own seed (:meth:`repeat_cells`: all of them).
    """

    grid: str
    row: str
    dataset: str
    method: str
    options: dict[str, Any]
    run: dict[str, Any]
    axes: tuple[tuple[str, Any], ...] = ()
    metrics: tuple[str, ...] = ()
    shards: int = 1
    shard_index: int | None = None
    repeats: int = 1
    repeat: int = 0

    @property
    def key(self) -> str:
        """A file-name-safe id of the cell (or of one shard or repeat of it) within its grid."""
        shard = f".shard{self.shard_index}of{self.shards}" if self.shard_index is not None else ""
        repeat = f".repeat{self.repeat}of{self.repeats}" if self.repeats > 1 else ""
        return re.sub(r"[^A-Za-z0-9._=@-]+", "_", f"{self.row}@{self.dataset}{shard}{repeat}")

    def units(self) -> list[Cell]:
        """What an executor runs for this cell: the cell itself, or each of its shards (a shard: itself)."""
        if self.shards == 1 or self.shard_index is not None:
            return [self]
        return [replace(self, shard_index=index) for index in range(self.shards)]

    def repeat_cells(self) -> list[Cell]:
        """Every repeat of this cell's row and dataset (the cell itself for one run), in seed order."""
        first = (self.run_config().seed or 0) - self.repeat
        return [replace(self, run={**self.run, "seed": first + index}, repeat=index) for index in range(self.repeats)]

    @property
    def whole(self) -> Cell:
        """The cell a shard belongs to (the cell itself when it is not a shard)."""
        return replace(self, shard_index=None)

    @property
    def experiment(self) -> str:
        return self.run["experiment"]

    def run_config(self) -> RunConfig:
        run = copy.deepcopy(self.run)
        if self.shard_index is not None:
            run.update(shard_index=self.shard_index, num_shards=self.shards)
        return RunConfig(**run)

    def build_method(self):
        """The configured method object (a fresh one per call: methods keep state from ``prepare``)."""
        from sparqlab.methods import get_method

        method_class = get_method(self.method)
        return method_class(method_class.config_class.from_dict(copy.deepcopy(self.options)))


@dataclass
class Grid:
    """A loaded grid file: its cells in row-major order (rows × datasets) and the executor settings."""

    name: str
    experiment: str
    path: Path | None
    rows: list[str]
    datasets: list[str]
    cells: list[Cell]
    executor: dict[str, dict[str, Any]] = field(default_factory=dict)
    description: str = ""
    serve: ServeSpec | None = None

    def root(self) -> Path:
        """The runs root of the grid's cells (they share it)."""
        return self.cells[0].run_config().root() if self.cells else RunConfig().root()

    def experiment_dir(self) -> Path:
        return self.root() / self.experiment

    def state_dir(self) -> Path:
        """Where the sweep keeps each cell's last failure and the executors' job folders."""
        return self.experiment_dir() / ".sweep" / self.name

    def select(self, rows: list[str] | None = None, datasets: list[str] | None = None) -> list[Cell]:
        for wanted, known, what in ((rows, self.rows, "row"), (datasets, self.datasets, "dataset")):
            unknown = sorted(set(wanted or ()) - set(known))
            if unknown:
                raise GridError(f"no {what} named {', '.join(unknown)} in grid {self.name!r}; known: "
                                f"{', '.join(known)}")
        return [c for c in self.cells if (not rows or c.row in rows) and (not datasets or c.dataset in datasets)]


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise GridError(f"{where} must be a mapping, got {type(value).__name__}: {value!r}")
    return value


def _check_keys(entry: dict[str, Any], allowed: frozenset[str], where: str) -> None:
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise GridError(f"{where}: unknown key(s) {', '.join(map(str, unknown))}; allowed: {', '.join(sorted(allowed))}")


def _run_fields(entry: dict[str, Any], where: str, extra: frozenset[str]) -> dict[str, Any]:
    """The run settings of a grid entry by their flat names (any key but ``extra`` is a RunConfig setting: a
    flat name, a dotted path or a whole group; a misspelt one is refused with a did-you-mean)."""
    try:
        settings = RunConfig.flatten({k: v for k, v in entry.items() if k not in extra})
    except ValueError as error:
        raise GridError(f"{where}: {error}") from None
    owned = sorted(set(settings) & SWEEP_OWNED)
    if owned:
        raise GridError(f"{where}: {', '.join(owned)} belong to the sweep (the grid's experiment, the executor's "
                        "shards), not to a cell")
    return settings


def _resolve_paths(run: dict[str, Any], base: Path | None) -> dict[str, Any]:
    if base is None:
        return run
    for name in PATH_FIELDS:
        value = run.get(name)
        if isinstance(value, str) and "/" in value and "://" not in value and not Path(value).is_absolute():
            candidate = (base / value).resolve()
            if candidate.exists():
                run[name] = str(candidate)
    return run


def _axis_setting(name: str, value: Any, run: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(run settings, method options) that axis ``name`` at ``value`` sets in ``run``."""
    if name == ENGINE_AXIS:  # the embedded store is the KG as given: no option, so its runs keep their ids
        options = {k: v for k, v in (run.get("kg_options") or {}).items() if k != "engine"}
        return {"kg_options": options if value == "embedded" else {**options, "engine": value}}, {}
    if name.startswith("options."):
        return {}, {name.removeprefix("options."): value}
    return RunConfig.flatten({name: value}), {}


def _axis_label(name: str, value: Any) -> str:
    return f"{name.removeprefix('options.')}={value}"


def load_grid(path: str | Path, overrides: dict[str, Any] | None = None) -> Grid:
    """Read and expand a grid file (a relative path that does not exist here is looked up in the workspace, then
    in the bundled files, :func:`~sparqlab.core.paths.find_input`: ``experiments/all_methods.yaml`` from
    ``notebooks/``); ``overrides`` are RunConfig settings applied to every cell last."""
    path, document = _read_document(path)
    return expand_grid(document, name=path.stem, base=path.parent, overrides=overrides, path=path)


def _read_document(path: str | Path) -> tuple[Path, dict[str, Any]]:
    import yaml

    from sparqlab.core.yaml_loader import load_yaml

    path = find_input(path)
    try:
        document = load_yaml(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise GridError(f"{path} is not valid YAML: {error}") from None
    return path, _mapping(document, str(path))


def load_job_blocks(path: str | Path) -> tuple[dict[str, dict[str, Any]], ServeSpec | None]:
    """The checked ``executor:`` and ``serve:`` blocks of a YAML file: a grid file (its other keys ignored) or
    the job settings of ``sparqlab reproduce`` (only those two blocks)."""
    path, document = _read_document(path)
    _check_keys(document, GRID_KEYS, str(path))
    try:
        return executor_settings(document), serve_spec(document)
    except GridError as error:
        raise GridError(f"{path}: {error}") from None


def expand_grid(document: dict[str, Any], name: str = "grid", base: Path | None = None,
                overrides: dict[str, Any] | None = None, path: Path | None = None) -> Grid:
    """Expand a grid document into its cells: every row × axis value × dataset, minus ``exclude``."""
    _check_keys(document, GRID_KEYS, "grid")
    name = str(document.get("name") or name)
    experiment = str(document.get("experiment") or name)
    repeats = {"repeats": document["repeats"]} if "repeats" in document else {}
    shared = _run_fields({**repeats, **_mapping(document.get("run"), "run")}, "run", frozenset())
    overrides = _run_fields(dict(overrides or {}), "overrides", frozenset())
    methods = _mapping(document.get("methods"), "methods")
    datasets = _mapping(document.get("datasets"), "datasets")
    if not methods or not datasets:
        raise GridError("a grid needs at least one entry under 'methods' and one under 'datasets'")
    axes = dict(_mapping(document.get("axes"), "axes"))
    engines = document.get("engines")
    if engines is not None:
        if not isinstance(engines, list) or not engines or set(engines) - set(ENGINES):
            raise GridError(f"engines must be a non-empty list of {', '.join(ENGINES)}; got {engines!r}")
        if ENGINE_AXIS in axes:
            raise GridError(f"give the engines once: as 'engines', not also as axis {ENGINE_AXIS!r}")
        axes[ENGINE_AXIS] = engines
    for axis, values in axes.items():
        if not isinstance(values, list) or not values:
            raise GridError(f"axis {axis!r} must be a non-empty list of values")
        if not axis.startswith("options.") and axis != ENGINE_AXIS:
            _run_fields({axis: values[0]}, f"axis {axis!r} (a RunConfig setting or options.FIELD)", frozenset())
    excludes = document.get("exclude") or []
    if not isinstance(excludes, list) or not all(isinstance(e, dict) for e in excludes):
        raise GridError("exclude must be a list of mappings such as {method: LABEL, dataset: LABEL}")
    executor = executor_settings(document)
    serve = serve_spec(document)

    cells: list[Cell] = []
    rows: list[str] = []
    for label, entry in methods.items():
        entry = _mapping(entry, f"methods.{label}")
        if "method" not in entry:
            raise GridError(f"methods.{label} needs 'method: NAME' (`sparqlab methods list`)")
        method_run = _run_fields(entry, f"methods.{label}", METHOD_KEYS)
        for combo in itertools.product(*axes.values()):
            values = tuple(zip(axes, combo, strict=True))
            row = " ".join([str(label), *(_axis_label(a, v) for a, v in values)])
            rows.append(row)
            for dataset, spec in datasets.items():
                spec = _mapping(spec, f"datasets.{dataset}")
                data_run = _run_fields(spec, f"datasets.{dataset}", DATASET_KEYS)
                if _excluded(excludes, str(label), str(dataset)):
                    continue
                options = dict(_mapping(entry.get("options"), f"methods.{label}.options"))
                per_method = _mapping(spec.get("options"), f"datasets.{dataset}.options")
                options.update(_mapping(per_method.get(entry["method"]), f"datasets.{dataset}.options"))
                row_runs = _mapping(spec.get("methods"), f"datasets.{dataset}.methods")
                unknown = sorted(set(map(str, row_runs)) - set(map(str, methods)))
                if unknown:
                    raise GridError(f"datasets.{dataset}.methods: no row named {', '.join(unknown)}; rows: "
                                    f"{', '.join(map(str, methods))}")
                row_run = _run_fields(_mapping(row_runs.get(label), f"datasets.{dataset}.methods.{label}"),
                                      f"datasets.{dataset}.methods.{label}", frozenset())
                run = {**shared, **data_run, **method_run, **row_run}
                for axis, value in values:
                    run_part, option_part = _axis_setting(axis, value, run)
                    run.update(run_part)
                    options.update(option_part)
                if "model" in overrides and "model_roles" not in overrides:
                    run.pop("model_roles", None)  # one model for every role
                run.update(overrides)
                run.setdefault("progress", False)
                if serve is not None:
                    run = _to_served(run, serve)
                run = _resolve_paths(copy.deepcopy(run), base)
                run["experiment"] = experiment
                metrics = spec.get("metrics") or []
                if not isinstance(metrics, list):
                    raise GridError(f"datasets.{dataset}.metrics must be a list of metrics.json keys")
                shards = entry.get("shards", spec.get("shards", 1))
                if not isinstance(shards, int) or isinstance(shards, bool) or shards < 1:
                    raise GridError(f"methods.{label} / datasets.{dataset}: shards must be a whole number >= 1, "
                                    f"got {shards!r}")
                cell = Cell(grid=name, row=row, dataset=str(dataset), method=str(entry["method"]), options=options,
                            run=run, axes=values, metrics=tuple(map(str, metrics)), shards=shards)
                try:
                    cells += _repeats(cell, cell.run_config())
                except (TypeError, ValueError) as error:
                    raise GridError(f"cell {cell.key}: {error}") from None
    if not cells:
        raise GridError("the grid has no cells left after 'exclude'")
    return Grid(name=name, experiment=experiment, path=path, rows=rows, datasets=[str(d) for d in datasets],
                cells=cells, executor=executor, description=str(document.get("description") or ""), serve=serve)


def _repeats(cell: Cell, config: RunConfig) -> list[Cell]:
    """The cells of each repeat of ``cell`` (:func:`sparqlab.runs.groups.repeat_configs`): the cell itself for
    one run."""
    if config.repeats == 1:
        return [cell]
    if cell.shards > 1:
        raise ValueError("repeats and shards do not combine: give one of them")
    return [replace(cell, run={**cell.run, "seed": repeat.seed, "repeats": 1}, repeats=config.repeats, repeat=index)
            for index, repeat in enumerate(repeat_configs(config))]


def executor_settings(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The document's checked ``executor:`` block (a grid's, or the job settings of ``sparqlab reproduce``)."""
    executor = _mapping(document.get("executor"), "executor")
    _check_keys(executor, frozenset(EXECUTOR_KEYS), "executor")
    for kind, settings in executor.items():
        _check_keys(_mapping(settings, f"executor.{kind}"), EXECUTOR_KEYS[kind], f"executor.{kind}")
    return executor


def serve_spec(document: dict[str, Any]) -> ServeSpec | None:
    """The document's ``serve:`` block, checked, or ``None`` without one."""
    if document.get("serve") is None:
        return None
    try:
        return ServeSpec.from_dict(_mapping(document["serve"], "serve"))
    except (TypeError, ValueError) as error:
        raise GridError(f"serve: {error}") from None


def _to_served(run: dict[str, Any], serve: ServeSpec) -> dict[str, Any]:
    """Send the run's model and every role naming the served model (and no URL) to the job's server."""
    if run.get("model") == serve.model and not run.get("model_url"):
        run["model_url"] = serve.endpoint
    roles = {}
    for role, spec in (run.get("model_roles") or {}).items():
        if isinstance(spec, str):
            spec = RoleSpec.from_text(spec).to_dict()
        if isinstance(spec, dict) and spec.get("model") == serve.model and not spec.get("url"):
            spec = {**spec, "url": serve.endpoint}
        roles[role] = spec
    if roles:
        run["model_roles"] = roles
    return run


def _excluded(excludes: list[dict[str, Any]], row: str, dataset: str) -> bool:
    labels = {"method": row, "dataset": dataset}
    for rule in excludes:
        _check_keys(rule, frozenset(labels), "exclude entry")
        if all(labels[k] == str(v) for k, v in rule.items()):
            return True
    return False
