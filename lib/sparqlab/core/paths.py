"""Where the project keeps bundled data, build outputs and runs.

Two kinds of location. *Bundled* resources (data, notebooks, example grids) come with the code: the checkout's
``data/``, ``notebooks/`` and ``experiments/`` when the package runs from a checkout (an editable install), else
their copies inside the installed package (``sparqlab/bundled/``, put there when the wheel is built). *Written*
outputs (``runs/``, ``figures/``, ``.cache/``) go to the workspace: the checkout itself, or — in a pip install —
the nearest folder at or above the current one holding a :data:`WORKSPACE_MARKER` (``sparqlab init`` makes one),
else the current folder. Nothing is written inside the installed package.

Every location can be overridden through the environment (read by :mod:`sparqlab.core.environment`), so a
researcher can keep large build outputs on a scratch disk (``SPARQLAB_CACHE``) and runs on shared storage
(``SPARQLAB_RUNS``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from sparqlab.core.environment import setting
from sparqlab.core.files import atomic_write
from sparqlab.core.yaml_loader import load_yaml

PACKAGE_DIR = Path(__file__).resolve().parents[1]
"""The installed ``sparqlab`` package folder."""


def _checkout() -> Path | None:
    """The source checkout this package runs from (``lib/sparqlab/core/paths.py`` lies three levels below it),
    or ``None`` in a pip install, where three levels up is the environment's ``lib/python3.X``."""
    root = PACKAGE_DIR.parents[1]
    return root if (root / "pyproject.toml").is_file() and (root / "lib" / "sparqlab").is_dir() else None


CHECKOUT = _checkout()
"""The checkout the code runs from, ``None`` in a pip install."""

PROJECT_ROOT = CHECKOUT or PACKAGE_DIR / "bundled"
"""Where the bundled ``data/``, ``notebooks/`` and ``experiments/`` are: the checkout, or the installed package's
copy of them. Read-only in a pip install."""

WORKSPACE_MARKER = ".sparqlab-workspace"
"""The file that makes a folder a workspace (as ``.git`` makes a repository): outputs of commands run in it or
below go to its ``runs/``, ``figures/`` and ``.cache/``."""


def find_workspace(start: Path) -> Path:
    """The nearest folder at or above ``start`` holding :data:`WORKSPACE_MARKER`, else ``start`` itself."""
    start = start.resolve()
    return next((folder for folder in (start, *start.parents) if (folder / WORKSPACE_MARKER).is_file()), start)


def workspace_root() -> Path:
    """Where outputs go: ``SPARQLAB_WORKSPACE``, else the checkout, else :func:`find_workspace` from the current
    folder."""
    chosen = setting("SPARQLAB_WORKSPACE")
    if chosen:
        return Path(chosen).resolve()
    return CHECKOUT or find_workspace(Path.cwd())


def find_input(path: str | Path) -> Path:
    """Where a file a parameter names is read from: ``path`` itself when it exists (or is absolute), else the
    workspace's copy (``experiments/all_methods.yaml`` from a workspace's ``notebooks/``: the copy ``sparqlab
    init`` made, perhaps edited), else the bundled one; ``path`` when none exists (its reader names it)."""
    path = Path(path)
    if path.is_absolute() or path.exists():
        return path
    return next((root / path for root in (workspace_root(), PROJECT_ROOT) if (root / path).exists()), path)


def data_dir() -> Path:
    """Bundled, licensed data (``data/`` in the checkout or the package, or ``SPARQLAB_DATA``)."""
    return Path(setting("SPARQLAB_DATA") or PROJECT_ROOT / "data")


def notebooks_dirs() -> list[Path]:
    """Where notebooks are looked for, in order: the workspace's ``notebooks/`` (copied there by ``sparqlab init``,
    perhaps edited) before the bundled ones; in a checkout only its ``notebooks/``."""
    bundled = PROJECT_ROOT / "notebooks"
    own = workspace_root() / "notebooks"
    return [bundled] if own.resolve() == bundled.resolve() else [own, bundled]


def cache_dir() -> Path:
    """Build outputs and caches (stores, indexes, response caches); ``SPARQLAB_CACHE`` or ``.cache/``."""
    path = Path(setting("SPARQLAB_CACHE") or workspace_root() / ".cache")
    path.mkdir(parents=True, exist_ok=True)
    return path


def runs_dir() -> Path:
    """Results folders ``runs/<experiment>/<run_id>/``; ``SPARQLAB_RUNS`` or ``runs/``."""
    return Path(setting("SPARQLAB_RUNS") or workspace_root() / "runs")


def figures_dir() -> Path:
    """Where figures are written as PNG and PDF; ``SPARQLAB_FIGURES`` or ``figures/``."""
    return Path(setting("SPARQLAB_FIGURES") or workspace_root() / "figures")


WORKSPACE_COPIES = ("notebooks", "experiments")
"""What :func:`init_workspace` copies in from the bundled resources: the notebooks and the example grids."""


DAMAGED_COPY_SUFFIX = ".damaged"
"""A workspace file that cannot be read (an init cut short by an older version) is moved to ``<name>.damaged``."""


@dataclass
class WorkspaceFiles:
    """What :func:`init_workspace` did with each bundled file: ``copied`` in, ``kept`` as it was (readable, perhaps
    edited), ``replaced``: unreadable, moved aside to ``<name>.damaged`` and copied anew."""

    copied: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)
    replaced: list[Path] = field(default_factory=list)


def readable_copy(path: Path) -> bool:
    """Whether a workspace notebook or grid file reads as one (a JSON notebook with cells, a YAML mapping): a
    truncated copy does not."""
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".ipynb":
            return isinstance(json.loads(text).get("cells"), list)
        return isinstance(load_yaml(text), dict)
    except (OSError, UnicodeDecodeError, ValueError, AttributeError, yaml.YAMLError):
        return False


def init_workspace(folder: Path) -> WorkspaceFiles:
    """Make ``folder`` a workspace: write :data:`WORKSPACE_MARKER` and copy the bundled notebooks and example
    grids in, each atomically (an interrupted init leaves no half file). A readable file already there is kept (a
    researcher's edits are never overwritten); an unreadable one is moved aside, never deleted, and copied anew."""
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(folder / WORKSPACE_MARKER, "# a sparqlab workspace: runs/, figures/ and .cache/ are written here\n")
    files = WorkspaceFiles()
    for name in WORKSPACE_COPIES:
        source = PROJECT_ROOT / name
        for path in sorted(source.glob("*")):
            if not path.is_file() or path.suffix not in (".ipynb", ".yaml", ".yml"):
                continue
            target = folder / name / path.name
            if target.exists():
                if readable_copy(target):
                    files.kept.append(target)
                    continue
                target.replace(target.with_name(target.name + DAMAGED_COPY_SUFFIX))
                files.replaced.append(target)
            else:
                files.copied.append(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(target, path.read_bytes())
    return files


def outside_package(path: Path, option: str) -> Path:
    """``path``, checked not to lie inside the installed package (its bundled data is read-only: a default output
    location under ``data/`` only works in a checkout); ``ValueError`` naming ``option`` to choose another."""
    if CHECKOUT is None and path.resolve().is_relative_to(PACKAGE_DIR):
        raise ValueError(f"{path} is inside the installed sparqlab package, which is never written to: choose "
                         f"another place with {option}")
    return path
