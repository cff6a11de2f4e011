"""What a notebook, table, report or figure was made from, said where a reader looks.

Stand-in models (``standin-*``) are deterministic baselines: everything made from them carries
:data:`STANDIN_BANNER`; everything made from a real model names it; a mix says which is which
(:func:`provenance_line`). The models a process makes are noted (:func:`note_model`): in a notebook kernel started
by ``sparqlab reproduce`` they go to the file ``SPARQLAB_MODELS_RECORD`` names, from which the executed copy gets
its banner; figures drawn without runs take their line from it too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from sparqlab.core.environment import setting

STANDIN_BANNER = "stand-in baselines — a pipeline check, not LLM results"
"""The line every output made from stand-in models carries."""

RECORD_ENV = "SPARQLAB_MODELS_RECORD"
"""Set by ``sparqlab reproduce`` for a notebook's kernel (:func:`sparqlab.core.environment.models_recorded`): the
JSON-lines file where each model it makes is noted."""


def provenance_line(models: Mapping[str, bool]) -> str | None:
    """One line saying what made an output from ``models`` (name -> is a stand-in), in first-seen order: the
    banner naming the stand-ins, the real models' names, or both for a mix; ``None`` without a model."""
    real = [name for name, standin in models.items() if not standin]
    standins = [name for name, standin in models.items() if standin]
    if not models:
        return None
    if not real:
        return f"{STANDIN_BANNER} ({', '.join(standins)})"
    named = f"model: {', '.join(real)}"
    if not standins:
        return named
    return f"{named}; mixed with {', '.join(standins)} [standin]: {STANDIN_BANNER} for what they made"


def merged(pairs: Iterable[tuple[str | None, bool | None]]) -> dict[str, bool]:
    """``(model, is_standin)`` pairs (e.g. runs' ``model`` / ``model_is_standin``) as one name -> stand-in map;
    a model without a name is left out, and a name is a stand-in if any pair says so."""
    found: dict[str, bool] = {}
    for name, standin in pairs:
        if name:
            found[name] = found.get(name, False) or bool(standin)
    return found


def note_model(name: str, standin: bool) -> None:
    """Note that this process made model ``name`` (appended to ``SPARQLAB_MODELS_RECORD`` when it is set)."""
    record = setting(RECORD_ENV)
    if record:
        with open(record, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"model": name, "standin": bool(standin)}) + "\n")


def noted_models(record: str | Path | None = None) -> dict[str, bool]:
    """The models noted in ``record`` (default: ``SPARQLAB_MODELS_RECORD``; none when unset or not written)."""
    path = record or setting(RECORD_ENV)
    if not path or not Path(path).is_file():
        return {}
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return merged((entry["model"], entry["standin"]) for entry in map(json.loads, filter(None, lines)))

