"""The comparison table of a grid: one row per method configuration, one column group per dataset.

Every number is recomputed from the cell's ``predictions.jsonl`` as ``sparqlab runs list`` shows it
(:func:`sparqlab.runs.results.run_summary`, so the table equals what each run reports, even for a predictions
file cut or edited after the run), and so are the intervals and the significance tests; a cell whose run folder
cannot be read (a damaged line, an F1 outside [0, 1]) is left empty with a note naming the file and line:

- scores: the metrics of the ``table`` view (:data:`sparqlab.eval.metrics.METRICS`: F1, EM, any registered metric
  shown there), then each metric a dataset declares in the grid (``metrics: [text2sparql]``: a registered metric,
  read as registered, e.g. the TEXT2SPARQL challenge's official set_F; or another key of ``metrics.json``, dotted
  for nested ones such as ``method_scores.x``), each with a 95 % percentile bootstrap interval over the questions
  (:func:`sparqlab.eval.paired.bootstrap_ci`; for an unregistered key when its per-question value is in the
  records' ``scores``);
- failure rates: ``empty`` (no answer) and ``no_query`` (no final query) of the questions done;
- cost per question: model calls, prompt and completion tokens, KG calls, seconds (mean question latency), and
  the ``prepare`` step apart (wall seconds and model calls of the run's last session);
- against a ``baseline`` row, per dataset: the F1 difference with its paired bootstrap interval, McNemar's exact
  p on EM and the number of questions whose EM flipped (:func:`sparqlab.eval.paired.paired_comparison`).

A cell of a grid with ``repeats`` (its row and dataset run with seeds seed, seed+1, …) shows each score as the
mean over its repeats ± the sd between runs with the 95 % two-level bootstrap interval over questions and repeats
(:func:`sparqlab.eval.repeats.summarise_repeats`) and its number of repeats; against the baseline its ΔF1 interval
is the paired two-level one (:func:`sparqlab.eval.repeats.paired_repeats`), and ``significant`` is 1 only when the
ΔF1 interval excludes 0.

A grid with ``engines`` (the store as an axis) gets, per method row and dataset, how much its F1 depends on the
store (:func:`store_dependence`: the score on each engine and the spread), as notes under the table.

Rows whose runs used a stand-in model are labelled ``[standin]``. Exports: CSV (long: one line per row, dataset
and measure, with the interval bounds), Markdown and LaTeX (booktabs, best value per column bold, intervals as
± half-widths).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from sparqlab.core.labels import merged, provenance_line
from sparqlab.eval.metrics import (
    EMPTY_RATE_KEY,
    F1_KEY,
    PRIMARY_METRIC,
    RATE,
    Metric,
    find_metric,
    judged_records,
    metric_list,
)
from sparqlab.eval.metrics import METRICS as METRIC_REGISTRY
from sparqlab.eval.paired import bootstrap_ci, paired_comparison
from sparqlab.eval.repeats import paired_repeats, summarise_repeats
from sparqlab.experiments.grid import ENGINE_AXIS, Cell, Grid
from sparqlab.experiments.sweep import find_cell_run
from sparqlab.runs.gold_check import gold_agreement, run_identity
from sparqlab.runs.results import run_records, run_summary
from sparqlab.runs.store import METRICS, RunUnreadable

STANDIN_MARK = " [standin]"


@dataclass(frozen=True)
class Measure:
    """A column: its key, header, where its value comes from, which way is better, and its display."""

    key: str
    label: str
    better: str | None  # "high", "low" or None (not ranked)
    percent: bool = False
    digits: int = 1




def score_measure(metric: Metric) -> Measure:
    """The column of a registered metric: its label, direction and unit as declared."""
    better = {True: "high", False: "low", None: None}[metric.higher_is_better]
    return Measure(metric.key, metric.label, better, metric.unit == RATE)


RATES = (Measure("empty", "empty", "low", True), Measure("no_query", "no query", "low", True))
COSTS = (Measure("model_calls", "calls/q", "low", digits=2), Measure("prompt_tokens", "prompt tok/q", "low", digits=0),
         Measure("completion_tokens", "compl. tok/q", "low", digits=0), Measure("kg_calls", "KG calls/q", "low",
                                                                               digits=2),
         Measure("seconds", "s/q", "low", digits=2), Measure("prepare_s", "prepare s", "low", digits=1),
         Measure("prepare_calls", "prepare calls", "low", digits=0))
SIGNIFICANCE = (Measure("f1_diff", "ΔF1", None, True), Measure("p_mcnemar", "p (EM)", None, digits=3),
                Measure("flips", "flips", None, digits=0), Measure("significant", "sig.", None, digits=0))
REPEATS = Measure("repeats", "repeats", None, digits=0)
"""The number of repeats of a cell, a column when a cell of the table has several."""


def _dig(document: dict[str, Any], dotted: str) -> Any:
    value: Any = document
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _per_question(total: Any, n: int) -> float | None:
    return None if not n or total is None else float(total) / n


def cost_values(metrics: dict[str, Any]) -> dict[str, float | None]:
    """The rate and cost measures of one run, from its summary (:func:`sparqlab.runs.results.run_summary`). A run
    without a model of its own (an external system, a peer's imported outputs) has no model calls or tokens we
    counted: unknown, not zero."""
    n = int(metrics.get("n_done") or 0)
    usage = metrics.get("usage") or {}
    if not metrics.get("model") and not (usage.get("per_question") or {}).get("model_calls"):
        usage = {}
    tokens = usage.get("tokens") or {}
    prepare = metrics.get("prepare") or {}
    return {
        "empty": metrics.get(EMPTY_RATE_KEY),
        "no_query": _per_question((metrics.get("error_types") or {}).get("no_query", 0), n),
        "model_calls": (usage.get("per_question") or {}).get("model_calls"),
        "prompt_tokens": _per_question(tokens.get("prompt"), n),
        "completion_tokens": _per_question(tokens.get("completion"), n),
        "kg_calls": _per_question((metrics.get("kg_calls") or {}).get("total"), n),
        "seconds": (metrics.get("latency_s") or {}).get("mean"),
        "prepare_s": prepare.get("wall_s"),
        "prepare_calls": (prepare.get("model_calls") or {}).get("total"),
    }


@dataclass
class ComparisonTable:
    """The table in long form (``frame``: row, dataset, measure, value, ci_low, ci_high, sd — the sd between the
    runs of a repeated cell — and run), its measures in column order, the row and dataset order, notes (missing
    cells, unpaired questions) and what its runs were ``made_from`` (:func:`sparqlab.core.labels.provenance_line`:
    the stand-in banner, or the models), which every rendering but CSV shows above or under the table."""

    frame: pd.DataFrame
    measures: list[Measure]
    rows: list[str]
    datasets: list[str]
    baseline: str | None = None
    notes: list[str] = field(default_factory=list)
    made_from: str | None = None

    def value(self, row: str, dataset: str, measure: str) -> float | None:
        hit = self.frame[(self.frame["row"] == row) & (self.frame["dataset"] == dataset)
                         & (self.frame["measure"] == measure)]
        return None if hit.empty or pd.isna(hit["value"].iloc[0]) else float(hit["value"].iloc[0])

    def points(self) -> pd.DataFrame:
        """One record per cell (row, dataset, every measure; ``tokens`` = prompt + completion per question), for
        :func:`sparqlab.plots.cost_quality`."""
        wide = self.frame.pivot_table(index=["row", "dataset"], columns="measure", values="value", aggfunc="first",
                                      dropna=False).reset_index()
        wide.columns.name = None
        if {"prompt_tokens", "completion_tokens"} <= set(wide.columns):
            wide["tokens"] = wide["prompt_tokens"] + wide["completion_tokens"]
        return wide

    def wide(self, columns: list[str] | None = None) -> pd.DataFrame:
        """Rows × (dataset, measure) values, in table order."""
        measures = [m.key for m in self.measures if columns is None or m.key in columns]
        wide = self.frame.pivot_table(index="row", columns=["dataset", "measure"], values="value", aggfunc="first",
                                      dropna=False)
        order = [(d, m) for d in self.datasets for m in measures if (d, m) in wide.columns]
        return wide.reindex(index=self.rows, columns=pd.MultiIndex.from_tuples(order, names=["dataset", "measure"]))


def _row_labels(grid: Grid, metrics_of: dict[str, dict[str, Any]], cells: list[Cell]) -> dict[str, str]:
    standin = {}
    for cell in cells:
        metrics = metrics_of.get(cell.key)
        if metrics is not None:
            standin[cell.row] = standin.get(cell.row, False) or bool(metrics.get("model_is_standin"))
    return {row: row + (STANDIN_MARK if standin.get(row) else "") for row in grid.rows}


def build_table(grid: Grid, cells: list[Cell] | None = None, baseline: str | None = None, ci: float = 95.0,
                resamples: int = 2000, seed: int = 0) -> ComparisonTable:
    """The table of ``cells`` (default: the whole grid) from their run folders; cells without a finished run
    are left empty and named in ``notes``."""
    cells = grid.cells if cells is None else cells
    if baseline is not None and baseline not in grid.rows:
        raise ValueError(f"baseline {baseline!r} is not a row of grid {grid.name!r}; rows: {', '.join(grid.rows)}")
    scores = {metric.key: metric for metric in metric_list("table")}
    declared = [m for m in dict.fromkeys(m for c in cells for m in c.metrics) if m not in scores]
    registered = {m: metric for m in declared if (metric := METRIC_REGISTRY.find(m)) is not None}
    extra = [m for m in declared if m not in registered]
    scores.update(registered)
    measures = [*(score_measure(metric) for metric in scores.values()), *(Measure(m, m, "high", True) for m in extra),
                *RATES, *COSTS, *(SIGNIFICANCE if baseline else ())]
    notes: list[str] = []
    runs, metrics_of, records_of = {}, {}, {}
    for cell in cells:
        run_dir = find_cell_run(cell)
        if run_dir is None or not (run_dir / METRICS).exists():
            notes.append(f"{cell.key}: no finished run yet (sparqlab sweep)")
            continue
        try:
            summary, records = run_summary(run_dir), run_records(run_dir)
        except RunUnreadable as error:
            notes.append(f"{cell.key}: left out, its run folder cannot be read: {error}")
            continue
        runs[cell.key], metrics_of[cell.key] = run_dir, summary
        if not summary["complete"]:
            notes.append(f"{cell.key}: incomplete run ({summary['n_done']}/{summary['n_questions']} questions)")
        records_of[cell.key] = judged_records(records)
    labels = _row_labels(grid, metrics_of, cells)
    by_position = {(c.row, c.dataset): c for c in cells if c.repeat == 0}
    lines = []
    for cell in cells:
        if cell.repeat or cell.key not in metrics_of:
            continue
        repeats = [repeat.key for repeat in cell.repeat_cells()]
        missing = [key for key in repeats if key not in metrics_of]
        if missing:
            notes.append(f"{cell.key}: {len(repeats) - len(missing)} of {len(repeats)} repeats finished; the cell "
                         "is shown once all are")
            continue
        metrics, records = metrics_of[cell.key], records_of[cell.key]
        values: dict[str, tuple[Any, ...]] = {}
        if cell.repeats > 1:
            summary = summarise_repeats([records_of[key] for key in repeats], ci=ci, resamples=resamples, seed=seed)
            for key in scores:
                score = summary["scores"].get(key) or {}
                values[key] = (score.get("mean"), *(score.get("interval") or (None, None)), score.get("sd"))
            costs = [cost_values(metrics_of[key]) for key in repeats]
            values.update({key: (_mean([c[key] for c in costs]), None, None) for key in costs[0]})
            values["repeats"] = (cell.repeats, None, None)
        else:
            for key in (*scores, *extra):
                value = _dig(metrics, key)
                per_question = [scores[key].per_question(r) for r in records] if key in scores else \
                    [(r.get("scores") or {}).get(key) for r in records]
                interval = bootstrap_ci(per_question, ci, resamples, seed) \
                    if per_question and all(isinstance(v, int | float) for v in per_question) else (None, None)
                values[key] = (value, *interval)
            values.update({key: (value, None, None) for key, value in cost_values(metrics).items()})
        base = by_position.get((baseline, cell.dataset)) if baseline else None
        if base is not None and base.key in records_of and base.key != cell.key:
            values.update(_against_baseline(base, cell, runs, records_of, notes, ci, resamples, seed))
        for key, (value, low, high, *sd) in values.items():
            lines.append({"row": labels[cell.row], "dataset": cell.dataset, "measure": key,
                          "value": None if value is None else float(value), "ci_low": low, "ci_high": high,
                          "sd": sd[0] if sd else None, "run": runs[cell.key].name})
    if any(cell.repeats > 1 for cell in cells):
        measures.insert(len(scores), REPEATS)
    frame = pd.DataFrame(lines, columns=["row", "dataset", "measure", "value", "ci_low", "ci_high", "sd", "run"])
    table = ComparisonTable(frame, measures, [labels[r] for r in grid.rows],
                            [d for d in grid.datasets if any(c.dataset == d for c in cells)],
                            labels.get(baseline) if baseline else None, notes,
                            provenance_line(merged((m.get("model"), m.get("model_is_standin"))
                                                   for m in metrics_of.values())))
    label = find_metric(PRIMARY_METRIC).label
    for (method, dataset), scores in store_dependence(table, PRIMARY_METRIC).iterrows():
        shown = ", ".join(f"{engine} {value:.3f}" for engine, value in scores.drop("spread").dropna().items())
        notes.append(f"{label} by store: {method} on {dataset}: {shown} (spread {scores['spread']:.3f})")
    return table


def _mean(values: list[Any]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _against_baseline(base: Cell, cell: Cell, runs: dict[str, Any], records_of: dict[str, list[dict[str, Any]]],
                      notes: list[str], ci: float, resamples: int, seed: int) -> dict[str, tuple[Any, ...]]:
    """The significance measures of ``cell`` against the baseline row's cell on its dataset: for two single runs
    the paired bootstrap of ΔF1 over questions, McNemar's p and the flips; when either has repeats the paired
    two-level bootstrap over questions and repeats (:func:`sparqlab.eval.repeats.paired_repeats`). ``significant``
    is 1 only when the ΔF1 interval excludes 0."""
    if any(repeat.key not in records_of for repeat in base.repeat_cells()):
        notes.append(f"{cell.key}: not compared with {base.row}: its repeats are not all finished")
        return {}
    sides = [[records_of[repeat.key] for repeat in side.repeat_cells()] for side in (base, cell)]
    agreement = gold_agreement(sides[0][0], sides[1][0], (run_identity(runs[base.key]), run_identity(runs[cell.key])))
    if agreement.differ:
        notes.append(f"{cell.key} against {base.row}: {agreement.warning()}")
    sides = [[agreement.comparable(records) for records in side] for side in sides]
    try:
        if base.repeats > 1 or cell.repeats > 1:
            compared = paired_repeats(sides[0], sides[1], base.row, cell.row, (F1_KEY,), ci, resamples, seed)
            low, high = compared.differences[F1_KEY]["interval"]
            return {"f1_diff": (compared.differences[F1_KEY]["mean"], low, high),
                    "significant": (float(compared.significant(F1_KEY)), None, None)}
        paired = paired_comparison(sides[0][0], sides[1][0], base.row, cell.row, ci, resamples, seed)
    except ValueError as error:
        notes.append(f"{cell.key}: not compared with {base.row}: {error}")
        return {}
    if paired.only_a or paired.only_b:
        notes.append(f"{cell.key}: {len(paired.only_a) + len(paired.only_b)} questions scored in one of the two "
                     "runs only (not paired)")
    low, high = paired.f1_diff_ci
    return {"f1_diff": (paired.f1_diff, low, high), "p_mcnemar": (paired.mcnemar_p, None, None),
            "flips": (len(paired.a_only) + len(paired.b_only), None, None),
            "significant": (float(low > 0 or high < 0), None, None)}


_ENGINE_LABEL = re.compile(rf" {ENGINE_AXIS}=(\S+)")


def store_dependence(table: ComparisonTable, measure: str = PRIMARY_METRIC) -> pd.DataFrame:
    """How much each method's score depends on the SPARQL engine, for a grid with ``engines``: one line per
    method row (its label without ``engine=...``) and dataset, the ``measure`` on each engine and the ``spread``
    (highest minus lowest); empty when no row names an engine."""
    scores: dict[tuple[str, str], dict[str, float]] = {}
    for line in table.frame[table.frame["measure"] == measure].itertuples():
        found = _ENGINE_LABEL.search(line.row)
        if found and line.value is not None and not pd.isna(line.value):
            method = _ENGINE_LABEL.sub("", line.row)
            scores.setdefault((method, line.dataset), {})[found.group(1)] = float(line.value)
    if not scores:
        return pd.DataFrame(columns=["spread"])
    frame = pd.DataFrame.from_dict(scores, orient="index")
    frame.index = pd.MultiIndex.from_tuples(frame.index, names=["method", "dataset"])
    frame["spread"] = frame.max(axis=1) - frame.min(axis=1)
    return frame


# -- rendering --------------------------------------------------------------------------------------------------


def _number(measure: Measure, value: float | None) -> str:
    if value is None or pd.isna(value):
        return "–"
    scaled = 100 * value if measure.percent else value
    return f"{scaled:.{measure.digits}f}"


def _half_width(measure: Measure, low: Any, high: Any) -> str | None:
    if low is None or high is None or pd.isna(low) or pd.isna(high) or measure.key == "f1_diff":
        return None
    return _number(measure, (high - low) / 2)


def _spread(measure: Measure, entry: Any) -> str | None:
    """A repeated cell's score as ``mean ± sd [low, high]`` (sd between runs, the two-level interval), ``None``
    for a cell of one run."""
    if pd.isna(entry.get("sd")):
        return None
    return (f"{_number(measure, entry['value'])} ± {_number(measure, entry['sd'])} "
            f"[{_number(measure, entry['ci_low'])}, {_number(measure, entry['ci_high'])}]")


def _text_cell(indexed: pd.DataFrame, measure: Measure, key: tuple[str, str, str], value: Any) -> str:
    """A cell of the text table: a repeated cell's spread (:func:`_spread`), else its value."""
    spread = _spread(measure, indexed.loc[key]) if key in indexed.index else None
    return spread or _number(measure, value)


def _best(table: ComparisonTable, measure: Measure, dataset: str) -> float | None:
    """The best value of a column (ties all bold); None for unranked measures and empty or constant columns."""
    if measure.better is None:
        return None
    column = table.frame[(table.frame["dataset"] == dataset) & (table.frame["measure"] == measure.key)]["value"]
    column = column.dropna()
    if column.nunique() < 2:  # nothing to single out in an empty or constant column
        return None
    return column.max() if measure.better == "high" else column.min()


def _check_columns(table: ComparisonTable, columns: list[str] | None) -> None:
    unknown = sorted(set(columns or ()) - {m.key for m in table.measures})
    if unknown:
        raise ValueError(f"unknown column(s) {', '.join(unknown)}; known: {', '.join(m.key for m in table.measures)}")


def _cells(table: ComparisonTable, columns: list[str] | None, bold, plus_minus) -> tuple[list, list[list[str]]]:
    """Header pairs (dataset, measure) and the formatted body, one list per row."""
    _check_columns(table, columns)
    measures = [m for m in table.measures if columns is None or m.key in columns]
    header = [(d, m) for d in table.datasets for m in measures]
    indexed = table.frame.set_index(["row", "dataset", "measure"])
    body = []
    for row in table.rows:
        cells = []
        for dataset, measure in header:
            key = (row, dataset, measure.key)
            if key not in indexed.index:
                cells.append("–")
                continue
            entry = indexed.loc[key]
            text = _number(measure, entry["value"])
            half = _half_width(measure, entry["ci_low"], entry["ci_high"])
            if (spread := _spread(measure, entry)) is not None:
                text = spread
            elif half is not None:
                text = plus_minus(text, half)
            best = _best(table, measure, dataset)
            if best is not None and entry["value"] is not None and not pd.isna(entry["value"]) \
                    and _number(measure, entry["value"]) == _number(measure, best):
                text = bold(text)
            cells.append(text)
        body.append(cells)
    return header, body


def to_markdown(table: ComparisonTable, columns: list[str] | None = None) -> str:
    header, body = _cells(table, columns, lambda t: f"**{t}**", lambda v, h: f"{v} ± {h}")
    heads = ["method"] + [f"{d}: {m.label}" + (" (%)" if m.percent else "") for d, m in header]
    lines = ["| " + " | ".join(heads) + " |", "|" + "|".join([":---"] + ["---:"] * len(header)) + "|"]
    lines += ["| " + " | ".join([row, *cells]) + " |" for row, cells in zip(table.rows, body, strict=True)]
    return (f"*{table.made_from}*\n\n" if table.made_from else "") + "\n".join(lines) + "\n"


LATEX_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "Δ": r"$\Delta$",
                  "–": "--", "—": "---"}


def latex_escape(text: str) -> str:
    return "".join(LATEX_SPECIALS.get(ch, ch) for ch in text)


def to_latex(table: ComparisonTable, columns: list[str] | None = None, caption: str | None = None) -> str:
    """A booktabs ``table`` environment: datasets as column groups (``\\cmidrule``), best per column bold,
    intervals as ``± half-width`` of the 95 % bootstrap interval, rates in percent."""
    header, body = _cells(table, columns, lambda t: rf"\textbf{{{t}}}", lambda v, h: rf"{v}\,$\pm$\,{h}")
    per_dataset = len(header) // max(1, len(table.datasets))
    lines = [r"\begin{table}[t]", r"\centering", r"\small", r"\begin{tabular}{l" + "r" * len(header) + "}",
             r"\toprule"]
    groups = " & ".join(rf"\multicolumn{{{per_dataset}}}{{c}}{{{latex_escape(d)}}}" for d in table.datasets)
    lines.append(f" & {groups} \\\\")
    lines.append(" ".join(rf"\cmidrule(lr){{{2 + i * per_dataset}-{1 + (i + 1) * per_dataset}}}"
                          for i in range(len(table.datasets))))
    lines.append("Method & " + " & ".join(latex_escape(m.label + (" (%)" if m.percent else "")) for _, m in header)
                 + r" \\")
    lines.append(r"\midrule")
    for row, cells in zip(table.rows, body, strict=True):
        lines.append(" & ".join([latex_escape(row), *(c.replace("–", "--") for c in cells)]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    note = caption or ("Scores in percent with $\\pm$ the half-width of the 95\\,\\% bootstrap interval; "
                       "best value per column in bold; costs per question."
                       + (f" Significance against {latex_escape(table.baseline)}: McNemar's exact test on EM, "
                          "paired bootstrap on F1." if table.baseline else ""))
    if table.made_from:
        note += f" {latex_escape(table.made_from[0].upper() + table.made_from[1:])}."
    lines += [rf"\caption{{{note}}}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def to_csv(table: ComparisonTable, columns: list[str] | None = None) -> str:
    """Long CSV: one line per row, dataset and measure, with the interval bounds, the sd between runs (a table
    with repeated cells) and the run folder."""
    frame = table.frame if columns is None else table.frame[table.frame["measure"].isin(columns)]
    if "sd" in frame and frame["sd"].isna().all():
        frame = frame.drop(columns="sd")
    return frame.to_csv(index=False)


def render(table: ComparisonTable, fmt: str = "text", columns: list[str] | None = None) -> str:
    """The table as ``text`` (aligned, for a terminal), ``csv``, ``md`` or ``latex``."""
    _check_columns(table, columns)
    if fmt == "csv":
        return to_csv(table, columns)
    if fmt == "md":
        return to_markdown(table, columns)
    if fmt == "latex":
        return to_latex(table, columns)
    if fmt == "text":
        wide = table.wide(columns)
        shown = wide.copy().astype(object)
        measures = {m.key: m for m in table.measures}
        indexed = table.frame.set_index(["row", "dataset", "measure"])
        for column in wide.columns:
            measure = measures[column[1]]
            shown[column] = [_text_cell(indexed, measure, (row, *column), value) for row, value in wide[column].items()]
        return (f"{table.made_from}\n" if table.made_from else "") + shown.to_string()
    raise ValueError(f"unknown table format {fmt!r}; use text, csv, md or latex")


def emit(table: ComparisonTable, fmt: str = "text", columns: list[str] | None = None,
         output: str | None = None) -> None:
    """What ``sparqlab table`` and ``sparqlab leaderboard`` print: the rendered table to ``output`` (its path is
    printed) or to standard output, then the table's notes to standard error."""
    import sys
    from pathlib import Path

    text = render(table, fmt, columns=columns)
    if output:
        Path(output).write_text(text, encoding="utf-8")
        print(output)
    else:
        print(text, end="" if text.endswith("\n") else "\n", flush=True)
    if fmt == "csv" and table.made_from:  # the rows say [standin]; the file stays plain CSV
        print(table.made_from, file=sys.stderr)
    for note in table.notes:
        print(note, file=sys.stderr)
