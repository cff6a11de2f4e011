"""Where the project keeps bundled data, build outputs and runs.

Every location can be overridden through the environment, so a researcher can keep large build outputs on a
scratch disk (``SPARQLAB_CACHE``) and runs on shared storage (``SPARQLAB_RUNS``).
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[3]
"""The checkout: ``lib/sparqlab/core/paths.py`` lives three levels below it."""


def data_dir() -> Path:
    """Bundled, licensed data (``data/`` in the checkout, or ``SPARQLAB_DATA``)."""
    return Path(os.environ.get("SPARQLAB_DATA", PROJECT_ROOT / "data"))


def cache_dir() -> Path:
    """Build outputs and caches (stores, indexes, response caches); ``SPARQLAB_CACHE`` or ``.cache/``."""
    path = Path(os.environ.get("SPARQLAB_CACHE", PROJECT_ROOT / ".cache"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def runs_dir() -> Path:
    """Results folders ``runs/<experiment>/<run_id>/``; ``SPARQLAB_RUNS`` or ``runs/``."""
    return Path(os.environ.get("SPARQLAB_RUNS", PROJECT_ROOT / "runs"))


def figures_dir() -> Path:
    """Where figures are written as PNG and PDF; ``SPARQLAB_FIGURES`` or ``figures/``."""
    return Path(os.environ.get("SPARQLAB_FIGURES", PROJECT_ROOT / "figures"))
