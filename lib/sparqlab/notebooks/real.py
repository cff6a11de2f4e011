"""``sparqlab reproduce --real``: every notebook against a real model served on this machine.

The bundled SmolLM2-135M (or any GGUF file) is started with llama.cpp's server
(:func:`sparqlab.serving.llama_cpp.start_llama_server`) and each notebook runs against it with the parameters of
:data:`REAL_PARAMETERS`: its model parameters pointed at the server, and limits that fit the whole reproduction in
about half an hour on two CPU cores. What it writes stays beside, never over, the stand-ins' outputs: the executed
notebooks in ``runs/notebooks-real/<model>/``, their runs under ``runs/real/<model>/``, their figures under
``figures/real/<model>/`` (each figure's name and footnote name the model). A notebook whose method cannot be
given the served model whole says what it used instead: :data:`REAL_NOTES`, printed as it starts; a stand-in it
used is named in its banner line (:mod:`sparqlab.core.labels`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sparqlab.core.environment import exported
from sparqlab.core.paths import figures_dir, runs_dir
from sparqlab.notebooks.execute import ReproduceReport, execute_all, find_notebooks
from sparqlab.notebooks.parameters import check_parameters

REAL_MODEL = "smollm2-135m"
"""The model ``--real`` serves unless told otherwise: the bundled SmolLM2-135M-Instruct (``sparqlab[real]``)."""

REAL_THREADS = 1
"""Threads of the served model unless ``--real-threads`` says otherwise. One: the notebook's kernel shares the
cores, and on a busy 2-core machine a two-thread llama.cpp waits on its own threads (measured here under load: 64
tokens in 6 s with one thread, 175 s with two); on otherwise idle cores two are faster."""

MODEL, URL = "{model}", "{url}"
"""Placeholders of :data:`REAL_PARAMETERS`: the served model's name and its ``/v1`` URL."""

AGENT = {"model": MODEL, "model_url": URL, "concurrency": 1, "max_actions": 4, "max_tokens": 128, "sample": None,
         "limit": 1}
"""The agent notebooks' settings: one question per dataset and variant, at most four actions of 128 tokens."""

GGC = {"model": "standin-knn", "model_url": None, "corrector": MODEL, "corrector_url": URL, "max_tokens": 128,
       "train_limit": 40, "test_limit": 3}
"""The GGC notebooks' settings: the served model corrects; the generator stays the stand-in, whose outputs the gate
learns from (SmolLM2-135M got all of its training questions wrong: no gate learns from one class)."""

REAL_PARAMETERS: dict[str, dict[str, Any]] = {
    "00_quickstart": {"model": MODEL, "model_url": URL, "sample": None, "limit": 2, "max_tokens": 128,
                      "concurrency": 1},
    "01_agent_runs": AGENT,
    "02_schema_coverage": {**AGENT, "coverages": [0.0, 1.0], "seeds": [0]},
    "03_ablations": {**AGENT, "include_spinach": False},
    "04_ggc_main": {**GGC, "gate_backends": ["tfidf"]},
    "05_gate_threshold_sweep": {**GGC, "thresholds": [0.3, 0.5, 0.7], "threshold": 0.5},
    "06_error_categorisation": GGC,
    "07_uri_correction": {"model": MODEL, "model_url": URL, "limit": 2, "train_limit": 100, "memory_limit": 2000,
                          "wikidata_sets": [], "lcquad2_limit": 0},
    "08_generative_sparql": {"model": MODEL, "model_url": URL, "examples": ["example1", "example2"], "k": 3,
                             "b": 3},
    "09_corrector_data_composition": {"limit": 12, "compositions": ["W1.0", "W1.0+C0.5"], "max_steps": 2},
    "10_text2sparql_ck25": {"model": MODEL, "model_url": URL, "datasets": ["ck25"], "methods": ["direct", "saga"],
                            "limit": 1, "max_tokens": 128, "concurrency": 1},
    "11_all_methods": {"model": MODEL, "model_url": URL, "grid": "experiments/all_methods_real.yaml",
                       "datasets": ["metaqa-1hop"]},
}
"""Per notebook: the parameters of its real-model run ("{model}" / "{url}" filled in; ``-p`` overrides win)."""

REAL_NOTES: dict[str, str] = {
    "04_ggc_main": "by default the real model corrects; the generator is the stand-in standin-knn (the bundled "
                   "SmolLM2-135M gets every training question wrong, so no gate learns from it) and the gates are "
                   "the offline tf-idf substitute; a fine-tuned generator served with --real-model FILE.gguf is the "
                   "generator with -p model {model} -p model_url {url}",
    "05_gate_threshold_sweep": "as 04: real corrector, stand-in generator, tf-idf gate unless -p says otherwise",
    "06_error_categorisation": "as 04: real corrector, stand-in generator, tf-idf gate unless -p says otherwise",
    "07_uri_correction": "the movie comparison only: the offline Wikidata sections take a model name, no endpoint",
    "09_corrector_data_composition": "stand-ins by default: its gate needs a generator that is sometimes right and "
                                     "its correctors are fine-tuned from a Hugging Face folder, not a GGUF server; "
                                     "a fine-tuned generator served with --real-model FILE.gguf labels the data "
                                     "with -p generator {model} -p generator_url {url}, and -p base_model DIR "
                                     "(sparqlab model convert) trains real correctors",
}
"""What a notebook's real run uses besides the served model, said before it runs (its banner says it too)."""


def real_parameters(notebook: str, model: str, url: str, overrides: Mapping[str, Any] | None = None) -> dict:
    """The parameters of ``notebook`` (a stem) against ``model`` served at ``url``, ``overrides`` over them. An
    override may name the served model too ("{model}" / "{url}"), e.g. to make a fine-tuned model GGC's generator
    (``-p model {model} -p model_url {url}``): the URL is known only once the server listens."""
    if notebook not in REAL_PARAMETERS:
        raise KeyError(f"no real-model parameters for notebook {notebook!r}; known: {', '.join(REAL_PARAMETERS)}")
    chosen = {**REAL_PARAMETERS[notebook], **(overrides or {})}
    return {name: {MODEL: model, URL: url}.get(value, value) if isinstance(value, str) else value
            for name, value in chosen.items()}


def real_output_dir(model: str = REAL_MODEL) -> Path:
    """Where ``reproduce --real`` puts the executed notebooks of ``model`` by default."""
    from sparqlab.serving.llama_cpp import served_name

    return runs_dir() / "notebooks-real" / served_name(model)


def reproduce_real(names: list[str] | None = None, overrides: Mapping[str, Any] | None = None,
                   model: str = REAL_MODEL, output_dir: Path | None = None, progress: bool = False,
                   threads: int = REAL_THREADS) -> ReproduceReport:
    """Start ``model`` with llama.cpp's server (``threads`` threads), run the chosen notebooks (default: all) against it one after the
    other, stop the server; a failing notebook does not stop the rest. ``overrides`` (``-p``) win over
    :data:`REAL_PARAMETERS` and are checked, with them, before the server starts. ``output_dir`` defaults to
    ``runs/notebooks-real/<model>``."""
    from sparqlab.serving.llama_cpp import served_name, start_llama_server

    name = served_name(model)
    notebooks = find_notebooks(names)
    declared = check_parameters(notebooks, dict(overrides or {}))  # each notebook's share of the overrides

    def checked(url: str) -> dict[Path, dict[str, Any]]:
        return {nb: check_parameters([nb], real_parameters(nb.stem, name, url, declared[nb]))[nb] for nb in notebooks}

    checked("http://127.0.0.1:0/v1")  # wrong parameters fail before the model loads
    places = {"SPARQLAB_RUNS": str(runs_dir() / "real" / name), "SPARQLAB_FIGURES": str(figures_dir() / "real" / name)}
    output_dir = output_dir or real_output_dir(model)
    with start_llama_server(model, n_threads=threads) as server, exported(places):
        return execute_all(checked(server.url), output_dir, progress, REAL_NOTES)
