"""Writes notebooks/01_agent_runs.ipynb, 02_schema_coverage.ipynb and 03_ablations.ipynb, kept as a script
so the notebooks' source is reviewable as text. All logic lives in ``sparqlab.experiments.agents``."""

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell

from sparqlab.notebooks import config_parameters, parameters_cell, write_generated_notebook
from sparqlab.runs import RunConfig

STANDIN_NOTE = """\
The defaults run offline on the bundled movie KG with `standin-agent`, a deterministic lexical policy that answers
in the agents' action format (**not an LLM**; figures and tables are labelled `[standin]`). It is type-blind, so
SAGA changes only what it is shown; on the movie KG every relation is declared Film → X and every entity is typed,
so expect SAGA ≈ SPINACH in accuracy there, with fewer model calls (no pruning calls). For a real run serve
gpt-oss-120b or Llama-3.1-70B with vLLM and set `model` / `model_url`; for Wikidata set `kg="wikidata"` (and
`kg_url` for a mirror) with `datasets` from QALD-7 / QALD-10 / QALD-9-plus / WWQ / SPINACH / LC-QuAD 2.0; for
SAGA's Table 2 set `kg="freebase"`, `kg_url` to a Freebase Virtuoso / QLever endpoint and `datasets` to
`webqsp,cwq,grailqa` (docs/freebase.md; offline, the Freebase-shaped fixture: `sparqlab kg serve-fixture freebase`).
The Wikidata-shaped test KG shows the type-blind failure offline (paths absolute: notebooks run in `notebooks/`):
`sparqlab reproduce NAME -p kg wikidata -p kg_url $PWD/data/wikidata_test/wikidata_test.ttl -p kg_options "{search: local}"
-p datasets $PWD/data/wikidata_test/questions.jsonl -p sample None`."""

COMMON_PARAMETERS = """\
# Parameters (papermill overrides these; the defaults need no GPU and no network).
from typing import Optional  # noqa: UP045 - papermill --help-notebook shows Optional[int], not int | None

{run}
sampling: str = "greedy"             # controller sampling: greedy, 2,048 tokens (Implementation Details); "appendix_f2": T 1.0, top-p 0.9, 700
max_actions: int = 15                 # action budget per question"""

RUN_NAMES = ["kg", "kg_url", "kg_options", "split", "sample", "sample_seed", "limit", "select", "model", "model_url",
             "reasoning_effort", "concurrency", "cache"]
"""The run settings every agent notebook takes (lines generated from RunConfig)."""

IMPORTS = """\
from IPython.display import display

from sparqlab import plots
from sparqlab.experiments import agents as experiments
from sparqlab.runs import model_label"""

SETTINGS = """\
settings = dict(experiment=experiment, kg=kg, kg_url=kg_url, kg_options=kg_options, model=model, model_url=model_url,
                concurrency=concurrency, cache=cache, reasoning_effort=reasoning_effort)
selection = dict(split=split, sample=sample, sample_seed=sample_seed, limit=limit, select=select)
agent_options = dict(sampling=sampling, max_actions=max_actions)
figure_params = {"model": model, "kg": kg, "sample": sample, "limit": limit}"""


def parameters(sample: int, experiment: str, extra: str) -> nbformat.NotebookNode:
    """The parameters cell: the common run settings (``sample`` questions per dataset), the notebook's own
    ``extra`` lines and its ``experiment``."""
    run = config_parameters(RunConfig, RUN_NAMES, {"kg": "movies", "sample": sample, "model": "standin-agent",
                                                   "concurrency": 4},
                            notes={"kg_options": "e.g. {search: local}", "model_url": "None: in-process"})
    own = config_parameters(RunConfig, ["experiment"], {"experiment": experiment},
                            notes={"experiment": "figures go to figures/<experiment>/"})
    return parameters_cell(COMMON_PARAMETERS.format(run=run) + "\n" + extra + "\n" + own)


AGENT_RUNS = [
    new_markdown_cell("# SPINACH vs SAGA\n\nThe SAGA paper's main comparison on any dataset: F1 / EM (Table 1 layout), "
                      "empty-result rate (Table 4), Boolean vs factoid questions (Table 3), and what each method "
                      "spends per question (actions, model calls by kind, tokens, properties shown and removed).\n\n"
                      + STANDIN_NOTE),
    parameters(12, "agents", """\
datasets: list[str] = ["metaqa-1hop", "metaqa-2hop"]  # `sparqlab data list` names or JSONL paths"""),
    new_code_cell(IMPORTS),
    new_code_cell(SETTINGS + """
variants = {"SPINACH": ("spinach", agent_options), "SAGA": ("saga", agent_options)}
frame, results = experiments.run_variants(variants, datasets, settings, **selection)
label = model_label(model, results[0].metrics["model_is_standin"])"""),
    new_markdown_cell("## F1 / EM (%), Table 1 layout\nOver the judged questions: a question whose gold query fails "
                      "or returns nothing is a gold error, counted below and left out of every mean; a question "
                      "without a final query scores 0."),
    new_code_cell("experiments.score_table(frame)"),
    new_code_cell("experiments.judged_counts(frame)"),
    new_markdown_cell("## Empty-result rate (%), Table 4 layout\nOver the generated queries, as the paper defines "
                      "it: the share of final queries that returned no answer. Questions that ended without a final "
                      "query are the separate no-query rate below (`empty_rate_table(frame, over=\"all\")` gives "
                      "the share of all questions without answers)."),
    new_code_cell("experiments.empty_rate_table(frame)"),
    new_code_cell("experiments.no_query_table(frame)"),
    new_markdown_cell("## Boolean vs factoid questions, Table 3 layout\nASK questions are Boolean (MetaQA has none)."),
    new_code_cell("experiments.boolean_factoid_table(frame)"),
    new_markdown_cell("## Cost per question\nActions, model calls by kind (controller, re-parse — after every "
                      "controller reply, as in appendix F.2 — pruning, answer type), tokens, [BLOCKED] observations, and per lookup the properties shown, removed by the "
                      "type filter and removed by LLM pruning."),
    new_code_cell("experiments.cost_table(frame)"),
    new_markdown_cell("## Figures\nSaved as PNG and PDF under `figures/<experiment>/`, named by model, KG and "
                      "question selection."),
    new_code_cell("""\
fig, axes = plots.subplots(1, 2, figsize=(8, 3))
plots.metric_bars(frame, metric="f1", x="dataset", hue="variant", ax=axes[0])
plots.metric_bars(frame, metric="model_calls_total", x="dataset", hue="variant", ax=axes[1])
axes[0].get_legend().remove()
axes[1].set_ylabel("model calls per question")
fig.suptitle(label)
plots.save_figure(fig, "agents_f1_and_calls", experiment=experiment, params=figure_params, runs=results)"""),
    new_code_cell("""\
display(frame[["variant", "dataset", "question", "f1", "actions", "model_calls_total", "error_category",
               "predicted_sparql"]].head(12))"""),
]

COVERAGE = [
    new_markdown_cell("# Robustness to incomplete schema\n\nSAGA keeping a fraction of the formal domain "
                      "declarations (P2302 on Wikidata, `rdfs:domain` on the movie KG), chosen by a seed; masked "
                      "properties fall back to sampled types, shown as hints that never remove a property, so 0 % "
                      "coverage filters nothing (Table 6 layout, with the spread across seeds).\n\n" + STANDIN_NOTE),
    parameters(8, "schema-coverage", """\
datasets: list[str] = ["metaqa-1hop"]  # `sparqlab data list` names or JSONL paths
coverages: list[float] = [0.0, 0.25, 0.5, 0.75, 1.0]  # fractions of formal domain declarations kept
seeds: list[int] = [0, 1, 2]          # coverage seeds: which declarations a fraction keeps
empirical_fallback: bool = True       # sampled subject types shown as hints for masked / missing declarations
empirical_filter: bool = False        # let those sampled types remove properties too (not the paper's reading)"""),
    new_code_cell(IMPORTS),
    new_code_cell(SETTINGS + """
frame, results = experiments.coverage_sweep(coverages, seeds, datasets, settings,
                                            {**agent_options, "features": {"empirical_fallback": empirical_fallback,
                                                                           "empirical_filter": empirical_filter}},
                                            **selection)
label = model_label(model, results[0].metrics["model_is_standin"])"""),
    new_markdown_cell("## F1 (%) by coverage, Table 6 layout\nMean over seeds; `seed sd` is the spread of the "
                      "average across seeds."),
    new_code_cell("experiments.coverage_table(frame)"),
    new_code_cell("experiments.cost_table(frame.assign(level=frame['coverage'].map('{:.0%}'.format)), by='level')"),
    new_code_cell("""\
ax = plots.metric_lines(frame, x="coverage", metric="f1", hue="dataset", units="coverage_seed")
ax.set_title(f"{label}, band: sd over {len(seeds)} seeds")
plots.save_figure(ax.figure, "coverage_f1", experiment=experiment,
                  params={**figure_params, "seeds": len(seeds), "fallback": empirical_fallback,
                          "hard": empirical_filter}, runs=results)"""),
]

ABLATION = [
    new_markdown_cell("# Component ablation\n\nFull SAGA against SAGA without type-constrained filtering, without "
                      "the persistent type state, and without the answer-type prior (Table 5 layout), with "
                      "SPINACH for reference.\n\n" + STANDIN_NOTE),
    parameters(12, "ablations", """\
datasets: list[str] = ["metaqa-1hop"]  # `sparqlab data list` names or JSONL paths
include_spinach: bool = True          # add SPINACH as a reference row"""),
    new_code_cell(IMPORTS),
    new_code_cell(SETTINGS + """
variants = {name: ("saga", {**agent_options, **options}) for name, options in experiments.ABLATIONS.items()}
if include_spinach:
    variants["SPINACH"] = ("spinach", agent_options)
frame, results = experiments.run_variants(variants, datasets, settings, **selection)
label = model_label(model, results[0].metrics["model_is_standin"])"""),
    new_markdown_cell("## F1 (%), Table 5 layout\nPer dataset and the unweighted macro average across them (`Avg`)."),
    new_code_cell("experiments.ablation_table(frame)"),
    new_code_cell("experiments.cost_table(frame)"),
    new_code_cell("""\
ax = plots.metric_bars(frame, metric="f1", x="variant", hue="dataset")
ax.set_title(label)
plots.save_figure(ax.figure, "ablation_f1", experiment=experiment, params=figure_params, runs=results)"""),
]

for name, cells in (("01_agent_runs", AGENT_RUNS), ("02_schema_coverage", COVERAGE), ("03_ablations", ABLATION)):
    write_generated_notebook(cells, f"{name}.ipynb")
