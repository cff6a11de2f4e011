"""Where the project keeps bundled data, build outputs and runs.

Every location can be overridden through the environment (read by :mod:`sparqlab.core.environment`), so a
researcher can keep large build outputs on a scratch disk (``SPARQLAB_CACHE``) and runs on shared storage
(``SPARQLAB_RUNS``).
"""

from __future__ import annotations

from pathlib import Path

from sparqlab.core.environment import setting

PROJECT_ROOT = Path(__file__).resolve().parents[3]
"""The checkout: ``lib/sparqlab/core/paths.py`` lives three levels below it."""


def data_dir() -> Path:
    """Bundled, licensed data (``data/`` in the checkout, or ``SPARQLAB_DATA``)."""
    return Path(setting("SPARQLAB_DATA") or PROJECT_ROOT / "data")


def cache_dir() -> Path:
    """Build outputs and caches (stores, indexes, response caches); ``SPARQLAB_CACHE`` or ``.cache/``."""
    path = Path(setting("SPARQLAB_CACHE") or PROJECT_ROOT / ".cache")
    path.mkdir(parents=True, exist_ok=True)
    return path


def runs_dir() -> Path:
    """Results folders ``runs/<experiment>/<run_id>/``; ``SPARQLAB_RUNS`` or ``runs/``."""
    return Path(setting("SPARQLAB_RUNS") or PROJECT_ROOT / "runs")


def figures_dir() -> Path:
    """Where figures are written as PNG and PDF; ``SPARQLAB_FIGURES`` or ``figures/``."""
    return Path(setting("SPARQLAB_FIGURES") or PROJECT_ROOT / "figures")
