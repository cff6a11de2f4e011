"""Writes notebooks/00_quickstart.ipynb (kept as a script so the notebook's source is reviewable as text)."""

from nbformat.v4 import new_code_cell, new_markdown_cell

from sparqlab.notebooks import config_parameters, parameters_cell, write_generated_notebook
from sparqlab.runs import RunConfig

RUN_PARAMETERS = config_parameters(
    RunConfig, ["kg", "split", "sample", "sample_seed", "limit", "model", "model_url", "temperature", "max_tokens",
                "seed", "concurrency", "experiment", "cache"],
    defaults={"kg": "movies", "split": "test", "sample": 40, "model": "standin-keyword-rules", "temperature": 0.0,
              "max_tokens": 512, "experiment": "quickstart"},
    notes={"model_url": "None: in-process", "limit": "after the sample: a quick smoke test",
           "cache": '"replay": model calls from the response cache only'})

CELLS = [
    new_markdown_cell("""\
# sparqlab quickstart

Build the bundled movie KG, ask one question with a model, look at its trace, score a small run and draw a figure.

The defaults run offline with `standin-keyword-rules`, a deterministic keyword baseline (**not an LLM**; its
scores are labelled `[standin]`). To use a real model, serve it with vLLM and set `model` and `model_url`, e.g.
`sparqlab reproduce 00_quickstart -p model openai/gpt-oss-120b -p model_url http://gpu-node:8000/v1`."""),
    parameters_cell(f"""\
# Parameters (papermill overrides these; the defaults need no GPU and no network).
# `sparqlab reproduce 00_quickstart -p NAME VALUE` checks each override against the type declared here.
from typing import Optional  # noqa: UP045 - papermill --help-notebook shows Optional[int], not int | None

{RUN_PARAMETERS}
datasets: list[str] = ["metaqa-1hop", "metaqa-2hop", "mcqa-movies"]  # `sparqlab data list` names or JSONL paths
showcase_question: Optional[str] = "test_1032"  # id of the question asked alone (None: the first one)"""),
    new_code_cell("""\
import pandas as pd
from IPython.display import HTML, display

from sparqlab import plots
from sparqlab.plots import widgets
from sparqlab.data import load
from sparqlab.kg import open_kg
from sparqlab.methods import DirectSparql
from sparqlab.runs import RunConfig, load_runs, load_traces, model_label, run"""),
    new_markdown_cell("## The knowledge graph\nOpening `movies` builds the embedded store on first use (a few seconds)."),
    new_code_cell("""\
graph = open_kg(kg)
graph.query(\"\"\"
SELECT ?title ?year WHERE {
  ?director rdfs:label "Ridley Scott" .
  ?film mrel:directed_by ?director ; mrel:release_year ?y ; rdfs:label ?title .
  ?y rdfs:label ?year .
} ORDER BY ?year LIMIT 10\"\"\").to_frame()"""),
    new_markdown_cell("## Ask one question\nThe method writes a query; the runner executes it on the KG and scores the answers."),
    new_code_cell("""\
settings = dict(experiment=experiment, kg=kg, model=model, model_url=model_url, seed=seed, cache=cache,
                temperature=temperature, max_tokens=max_tokens, concurrency=concurrency)
method = DirectSparql()
pool = load(datasets[0], split=split)
question = ([q for q in pool if q.id == showcase_question] or pool)[0]
single = run(method, [question], RunConfig(**settings))
display(HTML(widgets.render_prediction(single.predictions().iloc[0].to_dict())))"""),
    new_code_cell("""\
trace = load_traces(single.run_dir)[question.id]
display(HTML("".join(widgets.render_event(event, i, len(trace)) for i, event in enumerate(trace))))"""),
    new_markdown_cell("## A small run\nFinished questions are saved as they complete; re-running this cell resumes "
                      "and makes no new model calls (the responses are cached)."),
    new_code_cell("""\
results = [run(method, config=RunConfig(**settings, dataset=name, split=split, limit=limit, sample=sample,
                                         sample_seed=sample_seed)) for name in datasets]
load_runs(experiment)"""),
    new_code_cell("""\
predictions = pd.concat([result.predictions() for result in results], ignore_index=True)
predictions[["dataset", "id", "question", "f1", "em", "error_category", "model_calls"]].sample(min(8, len(predictions)), random_state=seed)"""),
    new_markdown_cell("## A figure\nSaved as PNG and PDF under `figures/<experiment>/`, named by the parameters that "
                      "select the questions, with a JSON sidecar naming the runs it was drawn from."),
    new_code_cell("""\
fig, ax = plots.subplots(figsize=(5, 3))
plots.metric_bars(predictions, metric="f1", x="dataset", ax=ax)
ax.set_title(model_label(model, results[0].metrics["model_is_standin"]))
plots.save_figure(fig, "f1_by_dataset", experiment=experiment, runs=results,
                  params={"model": model, "sample": sample, "seed": sample_seed, "limit": limit})"""),
    new_markdown_cell("## By question type\nOne row per question type, sorted, with bootstrap intervals and n per "
                      "row (the same helper stays readable with 50+ groups)."),
    new_code_cell("""\
ax = plots.metric_by_field(predictions, "qtype", metric="f1")
ax.set_title(model_label(model, results[0].metrics["model_is_standin"]))
plots.save_figure(ax.figure, "f1_by_qtype", experiment=experiment, runs=results,
                  params={"model": model, "sample": sample, "seed": sample_seed, "limit": limit})"""),
    new_markdown_cell("## Browse traces\nInteractive: pick a run and a question, step through the trace."),
    new_code_cell("widgets.trace_browser()"),
]

write_generated_notebook(CELLS, "00_quickstart.ipynb")
