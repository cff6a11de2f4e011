"""Writes notebooks/11_all_methods.ipynb, kept as a script so the notebook's source is reviewable as text.
All logic lives in ``sparqlab.experiments`` and ``sparqlab.plots``."""

from nbformat.v4 import new_code_cell, new_markdown_cell

from sparqlab.notebooks import config_parameters, parameters_cell, write_generated_notebook
from sparqlab.runs import RunConfig

RUN_PARAMETERS = config_parameters(
    RunConfig, ["model", "model_url", "cache"],
    notes={"model": "one for every cell and role; None: the grid's stand-ins", "cache": "for every cell"})

CELLS = [
    new_markdown_cell("""\
# All methods, one table

Every text-to-SPARQL method of the workbench — the one-shot `direct` baseline, SPINACH, SAGA, GGC and DeSQ — on
the same questions, scored by the same code, with the same cost accounting. The grid file
(`experiments/all_methods.yaml`, see `docs/sweeps.md`) names the methods with their options and the datasets;
each cell is an ordinary run in `runs/<experiment>/`, so re-running resumes and `sparqlab sweep` / `sparqlab
table` on the command line (or a Slurm cluster, `--executor slurm`) give the same table.

The defaults run offline with deterministic stand-ins (`standin-*`, **not LLMs**; their rows are labelled
`[standin]`): the numbers show that the pipeline works, not how the methods compare. For real results serve a
model (vLLM, SGLang, llama.cpp ...) and set `model` / `model_url`: every cell and every role then uses it."""),
    parameters_cell(f"""\
# Parameters (papermill overrides these; the defaults need no GPU and no network).
from typing import Optional  # noqa: UP045 - papermill --help-notebook shows Optional[str], not str | None

grid: str = "experiments/all_methods.yaml"  # grid file (relative paths: from here, else from the project root)
rows: Optional[list[str]] = None       # only these rows (method labels of the grid); None: all
datasets: Optional[list[str]] = ["metaqa-1hop", "wikidata-test"]  # only these datasets of the grid; None: all
{RUN_PARAMETERS}
executor: str = "local"                # "local" or "slurm" (submitit array job with the grid's resources)
workers: int = 0                       # local executor: cells run at once in processes; 0: one after another in this kernel
baseline: Optional[str] = "direct"     # row the others are tested against (McNemar on EM, paired bootstrap F1)
columns: list[str] = ["f1", "em", "empty", "no_query", "model_calls", "prompt_tokens", "kg_calls", "seconds"]"""),
    new_code_cell("""\
import pandas as pd
from IPython.display import Markdown, display

from sparqlab import plots
from sparqlab.experiments.executors import run_grid
from sparqlab.experiments.grid import load_grid
from sparqlab.experiments.sweep import grid_status
from sparqlab.experiments.table import build_table, to_latex, to_markdown"""),
    new_markdown_cell("## The grid\nOne cell per row × dataset; `status` says what is already done."),
    new_code_cell("""\
overrides = {key: value for key, value in {"model": model, "model_url": model_url, "cache": cache}.items()
             if value is not None}
sweep = load_grid(grid, overrides)
cells = sweep.select(rows, datasets)
pd.DataFrame([status.to_dict() for status in grid_status(sweep, cells)])"""),
    new_markdown_cell("## Run what is missing\nDone cells are skipped; an interrupted one resumes its run folder."),
    new_code_cell("""\
outcomes = run_grid(sweep, cells, executor, workers)
pd.DataFrame([{"cell": o.cell.key, "outcome": o.outcome, "reason": o.reason, **(o.detail or {})} for o in outcomes])"""),
    new_markdown_cell("## The table\nRates in percent with ± the half-width of the 95 % bootstrap interval, costs per "
                      "question, best value per column in bold; against the baseline: ΔF1, McNemar's p on EM and "
                      "the number of questions whose EM flipped."),
    new_code_cell("""\
table = build_table(sweep, cells, baseline=baseline)
shown = columns + (["f1_diff", "p_mcnemar", "flips"] if baseline else [])
for note in table.notes:
    print(note)
display(Markdown(to_markdown(table, columns=shown)))"""),
    new_markdown_cell("## Cost against quality\nF1 against model calls and against tokens per question; the circled "
                      "points of each dataset form its Pareto front (nothing else is both cheaper and better)."),
    new_code_cell("""\
points = table.points()
fig, axes = plots.subplots(1, 2, figsize=(9, 3.2))
plots.cost_quality(points, cost="model_calls", ax=axes[0])
plots.cost_quality(points, cost="tokens", ax=axes[1])
axes[0].get_legend().remove()
fig.suptitle(f"{sweep.name}: {model or 'stand-ins of the grid (not LLMs)'}")
plots.save_figure(fig, "cost_quality", experiment=sweep.experiment, runs=list(table.frame["run"].unique()),
                  params={"grid": sweep.name, "model": model or "standins"})"""),
    new_markdown_cell("## For the paper\nThe same table as LaTeX (booktabs); `sparqlab table GRID --format latex` "
                      "writes it from the command line."),
    new_code_cell("print(to_latex(table, columns=[\"f1\", \"em\", \"model_calls\"]))"),
]

write_generated_notebook(CELLS, "11_all_methods.ipynb")
