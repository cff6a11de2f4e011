"""One discovery mechanism for everything that plugs into sparqlab: Python entry points.

A package declares, in its ``pyproject.toml``::

    [project.entry-points."sparqlab.plugins"]
    mymethod = "mypackage.mymethod"          # importing it registers methods, stand-ins, data builders

    [project.entry-points."sparqlab.kgs"]
    mykg = "mypackage.kg"                    # importing it registers KG profiles (and their stores)

    [project.entry-points."sparqlab.datasets"]
    mydata = "mypackage.kg"                  # importing it registers datasets (may be the same module)

    [project.entry-points."sparqlab.commands"]
    mymethod = "mypackage.mymethod.cli"      # a module with register(subparsers): `sparqlab mymethod ...`

sparqlab's own packages are declared the same way (its ``pyproject.toml``), so ``sparqlab methods list``,
``sparqlab models list``, ``serve-model``, the method registry and the training-data builders all read one list
and cannot disagree. Registries (:class:`sparqlab.core.registry.Registry`) call :func:`load_plugins` for their
group on a miss, so a name is found without importing every package at start-up: KGs and datasets have groups of
their own because method packages are slow to import and a KG name is looked up by every command.
"""

from __future__ import annotations

import importlib
import sys
from importlib.metadata import EntryPoint, entry_points

PLUGIN_GROUP = "sparqlab.plugins"
"""Modules whose import registers methods, stand-in models and training-data builders."""

KG_GROUP = "sparqlab.kgs"
"""Modules whose import registers KG profiles, store builders, declared schemas and search backends."""

DATASET_GROUP = "sparqlab.datasets"
"""Modules whose import registers datasets."""

COMMAND_GROUP = "sparqlab.commands"
"""Modules with ``register(subparsers)`` adding a ``sparqlab`` subcommand."""

_loaded: set[tuple[str, str]] = set()
_declared: dict[tuple[str, tuple[str, ...]], list[EntryPoint]] = {}


class PluginError(RuntimeError):
    """A declared plug-in is missing or does not import."""


def declared(group: str) -> list[EntryPoint]:
    """The entry points of ``group``, one per module (an editable install seen twice counts once), sparqlab's own
    first, then other distributions' by name. Read once per ``sys.path``: scanning the installed distributions
    takes ~20 ms, and every registry miss asks (a KG without a store builder is looked up once per question)."""
    key = (group, tuple(sys.path))
    if key not in _declared:
        _declared[key] = _scan(group)
    return list(_declared[key])


def _scan(group: str) -> list[EntryPoint]:
    seen: dict[str, EntryPoint] = {}
    for point in entry_points(group=group):
        seen.setdefault(point.value, point)
    points = list(seen.values())
    own = [p.dist is not None and p.dist.name == "sparqlab" for p in points]
    if not any(own):
        raise PluginError(f"no '{group}' entry points of sparqlab are installed: install the package "
                          "(`pip install -e .`, or `make setup`), which declares its plug-ins in pyproject.toml")
    order = sorted(range(len(points)), key=lambda i: (not own[i], points[i].dist.name if points[i].dist else ""))
    return [points[i] for i in order]


def load_plugins(group: str = PLUGIN_GROUP) -> None:
    """Import every module declared in ``group`` once. A declared module that fails to import is an error naming
    it (a broken plug-in is never silently missing)."""
    for point in declared(group):
        if (group, point.value) in _loaded:
            continue
        try:
            importlib.import_module(point.value)
        except ImportError as error:
            raise PluginError(f"plug-in {point.name!r} ({point.value}) does not import: {error}") from error
        _loaded.add((group, point.value))
