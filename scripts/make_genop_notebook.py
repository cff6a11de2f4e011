"""Writes notebooks/08_generative_sparql.ipynb (kept as a script so the notebook's source is reviewable as text)."""

from nbformat.v4 import new_code_cell, new_markdown_cell

from sparqlab.notebooks import config_parameters, parameters_cell, write_generated_notebook
from sparqlab.runs import RunConfig

RUN_PARAMETERS = config_parameters(
    RunConfig, ["kg", "model", "model_url"], defaults={"kg": "movies", "model": "scripted"},
    notes={"kg": "of the movie demo", "model": '"scripted": the paper\'s assumed outputs'})

CELLS = [
    new_markdown_cell("""\
# Generative SPARQL (GenOp)

SPARQL with `GENOP("prompt with ?x" AS ?y, "model")` patterns whose evaluation calls a model and binds *typed*
values (`rdf` or `gen`), following *On the Semantics of Generative SPARQL* (grammar and policies:
`docs/genop.md`). This notebook runs the paper's worked examples step by step (Examples 1–6: dependency graph,
SCCs, candidates, validations, final typed mappings, model calls with and without memoisation), then a generative
query over the movie KG that joins generated genres back to the KG by similarity.

By default the oracle is the **scripted model** (`standin-genop-script`, the paper's *assumed* model outputs
written out, not an LLM). With a served model: `sparqlab reproduce 08_generative_sparql -p model
openai/gpt-oss-120b -p model_url http://gpu-node:8000/v1`."""),
    parameters_cell(f"""\
# Parameters (papermill overrides these; the defaults need no GPU and no network).
from typing import Optional  # noqa: UP045 - papermill --help-notebook shows Optional[str], not str | None

{RUN_PARAMETERS}
examples: list[str] = ["example1", "example2", "example3", "example3-minus", "example4-original",
                       "example4-unsafe", "example4-safe", "even-loop"]  # examples (sparqlab.methods.genop.examples)
k: int = 5                        # proposal bound K (tuples per model call)
b: int = 10                       # domain cap B per generated variable of a cycle
t: int = 1                        # repairs T per failing candidate
r: int = 1                        # validation repetitions R
aggregation: str = "majority"     # how the R validation votes combine: all, majority, any
similarity: str = "normalised"    # Str≃ for generated values: exact, normalised, jaccard, ratio
director: str = "Ridley Scott"    # the movie demo's director (the scripted outputs cover Ridley Scott's genres)
{config_parameters(RunConfig, ["experiment"], {"experiment": "genop"})}"""),
    new_code_cell("""\
from IPython.display import display

from sparqlab import plots
from sparqlab.core.paths import cache_dir
from sparqlab.methods.genop import EvalSettings, parse_genop_query, run_genop
from sparqlab.methods.genop.algebra import show
from sparqlab.methods.genop.examples import EXAMPLES, MOVIE_QUERY, MOVIE_SCRIPT, write_example_files
from sparqlab.methods.genop.report import events, memo_comparison, oracle_for, run_examples, summary, typed_rows
from sparqlab.kg import open_kg

settings = EvalSettings(k=k, b=b, t=t, r=r, similarity=similarity)
chosen = {name: EXAMPLES[name] for name in examples}
paths = write_example_files(cache_dir() / "genop-examples")
paper_kg = open_kg(paths["graph"], cache=False)
print(paths["graph"].read_text())"""),
    new_markdown_cell("""\
## Example 1 / 6 step by step

Two GenOps depend on each other: `g1` needs `?z` (from `g2`), `g2` needs `?y` (from `g1`). The query parses into
the paper's algebra; the dependency graph has one SCC `{g1, g2}` with positive edges, so the query is
*stratified* (cyclic, no negative edge) and the SCC is evaluated by EvalSCC (Algorithm 1)."""),
    new_code_cell("""\
example1 = EXAMPLES["example1"]
print(show(parse_genop_query(example1["query"]).pattern))
result1 = run_genop(example1["query"], paper_kg, oracle_for(model, example1["script"], model_url,
                                                          aggregation=aggregation), settings)
result1.dependencies.describe()"""),
    new_markdown_cell("**Propose** fills the domains `D[?y]`, `D[?z]`: unbound placeholders appear as the sentinel "
                      "`<unknown:?z>` in the first round, discovered values condition the next rounds."),
    new_code_cell("events(result1, 'propose')"),
    new_code_cell("events(result1, 'domains')"),
    new_markdown_cell("**Candidates** are the product of the domains; each is kept iff every GenOp of the SCC "
                      "validates it on its fully instantiated prompt (self-support, Def. 23), after up to T repairs."),
    new_code_cell("events(result1, 'candidate')"),
    new_code_cell("events(result1, 'validate').head(12)"),
    new_markdown_cell("The final typed mappings (`rdf` from the graph, `gen` generated) and the model calls:"),
    new_code_cell("""\
display(typed_rows(result1, paper_kg))
result1.oracle_stats"""),
    new_markdown_cell("""\
## All worked examples

Example 2: one GenOp with two outputs. Example 3: a positive edge `g1 → g2`; with `MINUS { ?x :hasTopic ?y }`
the edge turns negative and the stratification needs `σ(g1) < σ(g2)` (the generated `art` is compatible with
the graph's `:Art`, labelled "Art", so MINUS removes it). Examples 4/5: moving `g` into a group without `?x`
(unsafe) empties the result; the safe reordering of Proposition 6 keeps it."""),
    new_code_cell("""\
results = run_examples(chosen, paper_kg, model, model_url, settings, aggregation=aggregation)
summary(results)"""),
    new_code_cell("""\
for name in ["example3-minus", "example4-original", "example4-unsafe", "example4-safe"]:
    if name in results:
        print(name)
        display(typed_rows(results[name], paper_kg))"""),
    new_code_cell("""\
fig, axes = plots.subplots(1, len(results), figsize=(2.2 * len(results), 2.6), squeeze=False)
for ax, (name, result) in zip(axes[0], results.items()):
    plots.dependency_graph(*result.dependencies.graph_data(), ax=ax)
    ax.set_title(f"{name}\\n{result.query_class}", fontsize=8)
plots.save_figure(fig, "dependency_graphs", experiment=experiment, params={"model": model})"""),
    new_markdown_cell("""\
## A non-stratified query: well-founded semantics

In `even-loop` a place survives the MINUS unless the topic generated for a *surviving* row names it: Paris's topic
names Lyon and Lyon's names Paris, a cycle through a negative edge. The alternating fixpoint (Def. 21) leaves both
rows undefined; remove one of the two links from the script and the other place becomes true."""),
    new_code_cell("""\
if "even-loop" in results:
    display(events(results["even-loop"], "alternation"))
    display(typed_rows(results["even-loop"], paper_kg, undefined=True))"""),
    new_markdown_cell("## Memoisation\nThe proposal cache `(g, π^[S], K, decoding)` and the validation cache "
                      "`(g, π^[μ|X], μ|Y, R)` remove repeated model calls without changing any answer."),
    new_code_cell("""\
memo = memo_comparison(chosen, paper_kg, model, model_url, settings)
display(memo.pivot(index="example", columns="memoisation", values="model_calls"))
fig, ax = plots.subplots(figsize=(5, 2.6))
plots.metric_bars(memo, metric="model_calls", x="example", hue="memoisation", ax=ax)
plots.save_figure(fig, "memoisation_calls", experiment=experiment, params={"model": model, "k": k, "b": b})"""),
    new_markdown_cell("""\
## A generative query over the movie KG

For each genre of each film by the director, the model names a related genre; the nested group
`{ ?related a mclass:Genre }` joins the generated name back to the KG's genres by similarity (θ = 1 under the
normalised string similarity), so only names the KG knows survive, typed `rdf` after the canonical union."""),
    new_code_cell("""\
movies = open_kg(kg)
movie_query = MOVIE_QUERY.replace("Ridley Scott", director)
print(movie_query)
movie_result = run_genop(movie_query, movies, oracle_for(model, MOVIE_SCRIPT, model_url, aggregation=aggregation),
                         settings)
summary({"movies": movie_result})"""),
    new_code_cell("""\
table = typed_rows(movie_result, movies)
table.head(15)"""),
    new_code_cell("events(movie_result, 'propose').head(10)"),
]

write_generated_notebook(CELLS, "08_generative_sparql.ipynb")
