"""Writes notebooks/00_quickstart.ipynb (kept as a script so the notebook's source is reviewable as text)."""

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

CELLS = [
    new_markdown_cell("""\
# sparqlab quickstart

Build the bundled movie KG, ask one question with a model, look at its trace, score a small run and draw a figure.

The defaults run offline with `standin-keyword-rules`, a deterministic keyword baseline (**not an LLM**; its
scores are labelled `[standin]`). To use a real model, serve it with vLLM and set `model` and `model_url`, e.g.
`sparqlab reproduce 00_quickstart -p model openai/gpt-oss-120b -p model_url http://gpu-node:8000/v1`."""),
    new_code_cell("""\
# Parameters (papermill overrides these; the defaults need no GPU and no network)
kg = "movies"                     # KG name (movies, wikidata), SPARQL endpoint URL or RDF file
datasets = ["metaqa-1hop", "metaqa-2hop", "mcqa-movies"]  # names from `sparqlab data list`, or JSONL paths
split = "test"
limit = 40                        # questions per dataset in the small run
model = "standin-keyword-rules"   # a registered stand-in, or the model name your server serves
model_url = None                  # OpenAI-compatible endpoint, e.g. "http://gpu-node:8000/v1"; None: in-process
temperature = 0.0
max_tokens = 512
seed = 0
concurrency = 8                   # questions in flight at once
experiment = "quickstart"
cache = "read_write"              # "replay": serve model calls from the response cache only""",
                  metadata={"tags": ["parameters"]}),
    new_code_cell("""\
import pandas as pd
from IPython.display import HTML, display

from sparqlab import plots, widgets
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
                model_params={"temperature": temperature, "max_tokens": max_tokens}, concurrency=concurrency)
method = DirectSparql()
question = load(datasets[0], split=split, limit=1)[0]
single = run(method, [question], RunConfig(**settings))
display(HTML(widgets.render_prediction(single.predictions().iloc[0].to_dict())))"""),
    new_code_cell("""\
trace = load_traces(single.run_dir)[question.id]
display(HTML("".join(widgets.render_event(event, i, len(trace)) for i, event in enumerate(trace))))"""),
    new_markdown_cell("## A small run\nFinished questions are saved as they complete; re-running this cell resumes "
                      "and makes no new model calls (the responses are cached)."),
    new_code_cell("""\
results = [run(method, config=RunConfig(**settings, dataset=name, split=split, limit=limit)) for name in datasets]
load_runs(experiment)"""),
    new_code_cell("""\
predictions = pd.concat([result.predictions() for result in results], ignore_index=True)
predictions[["dataset", "id", "question", "f1", "em", "error_category", "model_calls"]].sample(8, random_state=seed)"""),
    new_markdown_cell("## A figure\nSaved as PNG and PDF under `figures/`."),
    new_code_cell("""\
fig, ax = plots.subplots(figsize=(5, 3))
plots.metric_bars(predictions, metric="f1", x="dataset", ax=ax)
ax.set_title(model_label(model, results[0].metrics["model_is_standin"]))
plots.save_figure(fig, "quickstart_f1_by_dataset")"""),
    new_markdown_cell("## Browse traces\nInteractive: pick a run and a question, step through the trace."),
    new_code_cell("widgets.trace_browser()"),
]

notebook = new_notebook(cells=CELLS, metadata={
    "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
    "language_info": {"name": "python"},
})
path = Path(__file__).resolve().parents[1] / "notebooks" / "00_quickstart.ipynb"
nbformat.write(notebook, path)
print(f"wrote {path}")
