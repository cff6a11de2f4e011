"""The defaults a run takes from the environment, read in this one place.

Every other module asks here (:func:`setting`) instead of reading ``os.environ``, so one variable has one meaning
everywhere. The default model and endpoint are also *applied* in one place, :func:`model_defaults`: the run
configuration calls it once (:meth:`sparqlab.runs.config.RunConfig.resolved`), and so do the llm layer's Python
entry points (``get_model()``/``make_model()`` without a name, ``get_model("name")`` without a URL,
``OpenAIModel()``); the code below them receives explicit values.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

VARIABLES = {
    "SPARQLAB_MODEL": "model name of a run that names none (RunConfig.model) and of get_model()",
    "SPARQLAB_MODEL_URL": "OpenAI-compatible /v1 endpoint of a served model that names none (RunConfig.model_url)",
    "SPARQLAB_API_KEY": "API key sent to that endpoint (else a placeholder, fine for vLLM)",
    "SPARQLAB_WORKSPACE": "where runs/, figures/ and .cache/ go (default: the checkout, else the nearest folder "
                          "holding a .sparqlab-workspace marker, else the current folder)",
    "SPARQLAB_RUNS": "the runs root (RunConfig.output_root; default runs/)",
    "SPARQLAB_CACHE": "build outputs and caches: stores, indexes, the model response cache (default .cache/)",
    "SPARQLAB_DATA": "bundled data (default data/)",
    "SPARQLAB_FIGURES": "where figures are written (default figures/)",
    "SPARQLAB_GOLD_SNAPSHOTS": "where runs find gold snapshots (RunConfig.gold_snapshot=auto; default "
                               "data/gold_snapshots)",
    "SPARQLAB_SERVE_TOKEN": "bearer token `sparqlab serve` requires when --token is not given (ServeSettings.token)",
    "SPARQLAB_NOTEBOOK_OVERRIDES": "set by `sparqlab reproduce` for a notebook's kernel: the parameters it overrode "
                                   "(JSON), which figure names then include (sparqlab.plots.figure_stem)",
    "SPARQLAB_MODELS_RECORD": "set by `sparqlab reproduce` for a notebook's kernel: the file where every model it "
                              "makes is noted, for the executed copy's banner (sparqlab.core.labels)",
}
"""The defaults read from the environment, with what each sets."""


def setting(variable: str) -> str | None:
    """The value of one of :data:`VARIABLES` (``None`` when unset or blank)."""
    if variable not in VARIABLES:
        raise KeyError(f"{variable} is not a sparqlab run default; known: {', '.join(VARIABLES)}")
    value = os.environ.get(variable, "").strip()
    return value or None


def pass_on(variable: str, value: str) -> None:
    """Set one of :data:`VARIABLES` for the processes this one starts from now on (notebook kernels, jobs)."""
    if variable not in VARIABLES:
        raise KeyError(f"{variable} is not a sparqlab run default; known: {', '.join(VARIABLES)}")
    os.environ[variable] = value


class ModelChoice(NamedTuple):
    """A model name and its endpoint (``None``: not given, or in process)."""

    name: str | None
    url: str | None


def model_defaults(name: str | None, url: str | None, *,
                   served_over_http: Callable[[str], bool]) -> ModelChoice:
    """``name`` and ``url`` with the environment's defaults where they are not given: ``SPARQLAB_MODEL`` for the
    name, ``SPARQLAB_MODEL_URL`` for the endpoint of a model ``served_over_http`` (the llm layer's rule,
    :func:`sparqlab.llm.factory.served_over_http`: a stand-in or a local model runs in process and takes none)."""
    name = name or setting("SPARQLAB_MODEL")
    if not url and name and served_over_http(name):
        url = setting("SPARQLAB_MODEL_URL")
    return ModelChoice(name, url)


def serve_token() -> str | None:
    """``SPARQLAB_SERVE_TOKEN``: the token a served endpoint requires when its settings name none."""
    return setting("SPARQLAB_SERVE_TOKEN")


def api_key() -> str | None:
    """``SPARQLAB_API_KEY``: the key sent to OpenAI-compatible endpoints."""
    return setting("SPARQLAB_API_KEY")


def notebook_overrides() -> dict[str, Any]:
    """``SPARQLAB_NOTEBOOK_OVERRIDES``: the notebook parameters ``sparqlab reproduce`` overrode ({} outside it)."""
    text = setting("SPARQLAB_NOTEBOOK_OVERRIDES") or ""
    try:
        found = json.loads(text) if text else {}
    except json.JSONDecodeError as error:
        raise ValueError(f"SPARQLAB_NOTEBOOK_OVERRIDES is not JSON ({error}): {text[:80]!r}") from None
    return found if isinstance(found, dict) else {}


@contextmanager
def overrides_announced(overrides: dict[str, Any]) -> Iterator[None]:
    """Set ``SPARQLAB_NOTEBOOK_OVERRIDES`` for the kernels started inside (they inherit this environment)."""
    previous = os.environ.get("SPARQLAB_NOTEBOOK_OVERRIDES")
    os.environ["SPARQLAB_NOTEBOOK_OVERRIDES"] = json.dumps(overrides, sort_keys=True, default=str)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("SPARQLAB_NOTEBOOK_OVERRIDES", None)
        else:
            os.environ["SPARQLAB_NOTEBOOK_OVERRIDES"] = previous



@contextmanager
def exported(values: dict[str, str]) -> Iterator[None]:
    """Set some of :data:`VARIABLES` for the processes started inside (notebook kernels inherit them), then put
    back what was there."""
    unknown = sorted(set(values) - set(VARIABLES))
    if unknown:
        raise KeyError(f"{', '.join(unknown)}: not sparqlab run defaults; known: {', '.join(VARIABLES)}")
    previous = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def models_recorded(record: Path):
    """``SPARQLAB_MODELS_RECORD`` set to ``record`` (emptied first) for the kernels started inside, where every
    model made is noted (:func:`sparqlab.core.labels.note_model`)."""
    record.parent.mkdir(parents=True, exist_ok=True)
    record.unlink(missing_ok=True)
    return exported({"SPARQLAB_MODELS_RECORD": str(record)})
