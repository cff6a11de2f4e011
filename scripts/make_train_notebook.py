"""Writes notebooks/09_corrector_data_composition.ipynb (kept as a script so the notebook's source is reviewable)."""

from nbformat.v4 import new_code_cell, new_markdown_cell

from sparqlab.notebooks import config_parameters, parameters_cell, write_generated_notebook
from sparqlab.runs import RunConfig

RUN_PARAMETERS = config_parameters(
    RunConfig, ["kg", "dataset", "split", "limit"],
    defaults={"kg": "movies", "dataset": "mcqa-movies", "split": "train", "limit": 40},
    notes={"kg": "the training questions are asked over", "dataset": "training questions: gold queries label "
           "the generator's output", "split": "never the scored split", "limit": "the paper: the whole split"})

CELLS = [
    new_markdown_cell("""\
# Corrector training-data composition (GGC, Table 6 layout)

GGC fine-tunes its generator and corrector (Llama-3.2-3B-Instruct, LoRA, loss on the response only) and a RoBERTa
gate. The corrector is trained on the generator's **wrong** initial queries (W) plus a share of **correct** ones (C):
`W1.0`, `W1.0+C0.2`, `W1.0+C0.5`, `W1.0+C0.8`, where C makes up 20 / 50 / 80 % of the composed set (section 4.3).
This notebook labels a generator-only run over training questions, builds the four corrector files with the GGC
data builders (the generator's training questions and the labelled ones are disjoint parts of the split, as in the
paper's section 4.1: the split's last `generator_share` is the generator's, its first `limit` questions train the
generator and the first `limit` of the questions before it are labelled by the generator-only run), trains one LoRA corrector per composition (plus the generator and the gates) with
`sparqlab.train`, and tabulates sizes, training times and losses in the layout of the paper's Table 6.

**Offline defaults are a pipeline check.** Without `base_model` the modules are a *tiny randomly initialised*
decoder and encoder built from a config, trained for a few steps on CPU: their losses and times only show that
the pipeline runs end to end and that the loss on the response tokens falls; they say nothing about the paper's
models. On a GPU machine: `sparqlab reproduce 09_corrector_data_composition -p base_model /models/Llama-3.2-3B-Instruct
-p encoder /models/roberta-base -p gpu true -p max_steps -1 -p learning_rate 2e-4 -p limit 2500`, with the
generator served by vLLM (`-p generator generator -p generator_url http://gpu-node:8000/v1`)."""),
    parameters_cell(f"""\
# Parameters (papermill overrides these; the defaults need no GPU and no network).
from typing import Optional  # noqa: UP045 - papermill --help-notebook shows Optional[str], not str | None

{RUN_PARAMETERS}
generator_share: float = 0.5             # the split's share that is the generator's (its last); the gate's comes first
generator: str = "standin-knn"           # generator of the labelled run: a stand-in, or a served model's name
generator_url: Optional[str] = None      # OpenAI-compatible endpoint of `generator` (vLLM), None for stand-ins
generator_options: dict = {{}}             # model factory options, e.g. {{"start": 2500, "stop": 2600}} (standin-knn memory)
compositions: list[str] = ["W1.0", "W1.0+C0.2", "W1.0+C0.5", "W1.0+C0.8"]  # corrector data compositions
base_model: Optional[str] = None         # local base chat model folder; None: tiny random decoder (pipeline check)
encoder: Optional[str] = None            # local gate encoder folder (roberta-base); None: tiny random encoder
gpu: bool = False                        # CUDA: 4-bit loading (bitsandbytes) and 8-bit AdamW as in the paper
train_generator: bool = True             # also fine-tune the generator (Table 6's first row)
max_steps: int = 8                       # optimiser steps per module; -1: by epochs (the paper: 1 epoch)
epochs: float = 1.0                      # epochs when max_steps is -1
learning_rate: float = 3e-3              # LoRA learning rate (paper: 2e-4; tiny models need more)
batch_size: int = 4                      # per-device batch (paper: 2)
grad_accum: int = 1                      # gradient accumulation (paper: 4)
lora_r: int = 16                         # LoRA rank (paper: 16)
lora_alpha: int = 16                     # LoRA alpha (paper: 16)
eval_fraction: float = 0.2               # held-out share for the evaluation loss
gate_epochs: int = 3                     # encoder gate epochs (paper: 3)
gate_learning_rate: float = 1e-3         # encoder gate learning rate (paper: 2e-5; tiny models need more)
threads: int = 1                         # PyTorch CPU threads (1 is fastest for tiny models on a shared machine)
evaluate: bool = False                   # Table 5c: a gated GGC run per trained corrector (served in process)
eval_split: str = "test"                 # questions of those runs
eval_limit: int = 20                     # first N of them
eval_max_tokens: int = 256               # completion budget of a correction
threshold: float = 0.5                   # gate threshold tau of those runs (paper: 0.5)
{config_parameters(RunConfig, ["experiment"], {"experiment": "train-composition"})}"""),
    new_code_cell("""\
import pandas as pd
from IPython.display import display

from sparqlab import plots
from sparqlab.core.paths import runs_dir
from sparqlab.methods.ggc.data import COMPOSITIONS
from sparqlab.experiments.train import composition_experiment, evaluate_correctors, table12
from sparqlab.methods.ggc.published import with_published

sft = {"max_steps": max_steps, "epochs": epochs, "learning_rate": learning_rate, "batch_size": batch_size,
       "grad_accum": grad_accum, "lora_r": lora_r, "lora_alpha": lora_alpha, "eval_fraction": eval_fraction,
       "eval_steps": max(1, max_steps // 3) if max_steps > 0 else 0, "threads": threads, "load_4bit": gpu,
       "optim": "adamw_8bit" if gpu else "adamw_torch"}
gate = {"epochs": gate_epochs, "learning_rate": gate_learning_rate}
model_label = base_model.rstrip("/").split("/")[-1] if base_model else "tiny-random"
out = runs_dir() / experiment / f"{model_label}-{dataset}-{split}-{limit}"
result = composition_experiment(out, kg_name=kg, dataset=dataset, split=split, limit=limit, generator=generator,
                                generator_url=generator_url, generator_options=generator_options,
                                compositions={name: COMPOSITIONS[name] for name in compositions},
                                base=base_model, encoder=encoder, sft=sft, gate=gate,
                                train_generator=train_generator, generator_share=generator_share)
if result.pipeline_check:
    print("PIPELINE CHECK: tiny randomly initialised models; these numbers are not results of the paper's models.")"""),
    new_markdown_cell("""\
## Training sizes, times and losses (Table 6 layout)

One row per trained module: training samples (wrong W / correct C for correctors and gates), optimiser steps,
training time, first and last training loss and the held-out loss before and after training (loss on the response
tokens only). Compositions that the labelled run cannot fill are listed below the table."""),
    new_code_cell("""\
with pd.option_context("display.precision", 3, "display.width", 200):
    display(result.table)
print("compositions not built:", result.skipped or "none")"""),
    new_markdown_cell("## Gates on the validation slice (Table 4 columns; positive class: correction required)"),
    new_code_cell("pd.DataFrame(result.gate_validation).T[['gate_precision', 'gate_recall', 'gate_f1', 'gate_fpr']]"),
    new_markdown_cell("## Loss curves (training solid, held-out dashed)"),
    new_code_cell("""\
fig, ax = plots.subplots(figsize=(5, 3))
plots.loss_curves(result.histories, hue="module", ax=ax)
ax.set_title(("[pipeline check] " if result.pipeline_check else "") + f"LoRA SFT on {model_label}")
plots.save_figure(fig, "loss_curves", experiment=experiment,
                  params={"model": model_label, "limit": limit, "steps": max_steps})"""),
    new_markdown_cell("""\
## Correctors in the gated pipeline (Table 5c layout, with `evaluate=True`)

One gated GGC run per trained corrector on the evaluation questions: the generator as above, the experiment's
encoder gate at τ, the corrector role served in process from its adapter. Query-level accuracy is the paper's
primary metric. With the tiny random models this only checks that trained adapters plug into the runner. The
second table is Table 12's layout (accuracy on the triggered, originally wrong and originally correct questions
per composition), with the paper's published values below it (empty where the paper copy has no cell)."""),
    new_code_cell("""\
if evaluate:
    corrected = evaluate_correctors(result, kg_name=kg, dataset=dataset, split=eval_split, limit=eval_limit,
                                    generator=generator, generator_url=generator_url,
                                    generator_options=generator_options, threshold=threshold,
                                    device="cuda" if gpu else "cpu", max_tokens=eval_max_tokens)
    display(corrected)
    display(with_published(table12(corrected), "table12").round(2))  # Table 12 layout, the paper's rows below"""),
    new_markdown_cell("""\
## Using a trained corrector

Each adapter is in `<out>/sft/<composition>/adapter`. Serve it with vLLM next to the generator
(`vllm serve BASE --enable-lora --lora-modules generator=DIR corrector=DIR`) and run the gated pipeline with it
as the corrector role: `sparqlab run ggc --model generator --model-url URL --model-roles corrector=corrector@URL`
(README, "Fine-tuning"). On CPU, `sparqlab train serve --base BASE --adapter DIR --name corrector` serves it
through the project's own server."""),
    new_code_cell("print(result.out)"),
]

write_generated_notebook(CELLS, "09_corrector_data_composition.ipynb")
