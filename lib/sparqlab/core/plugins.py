"""One discovery mechanism for everything that plugs into sparqlab: Python entry points.

A package declares, in its ``pyproject.toml``::

    [project.entry-points."sparqlab.plugins"]
    mymethod = "mypackage.mymethod"          # importing it registers methods, stand-ins, data builders

    [project.entry-points."sparqlab.commands"]
    mymethod = "mypackage.mymethod.cli"      # a module with register(subparsers): `sparqlab mymethod ...`

sparqlab's own method packages are declared the same way (its ``pyproject.toml``), so ``sparqlab methods list``,
``sparqlab models list``, ``serve-model``, the method registry and the training-data builders all read one list
and cannot disagree. Registries call :func:`load_plugins` on a miss, so a name is found without importing every
method package at start-up.
"""

from __future__ import annotations

import importlib
from importlib.metadata import EntryPoint, entry_points

PLUGIN_GROUP = "sparqlab.plugins"
"""Modules whose import registers methods, stand-in models and training-data builders."""

COMMAND_GROUP = "sparqlab.commands"
"""Modules with ``register(subparsers)`` adding a ``sparqlab`` subcommand."""

_loaded: set[str] = set()


class PluginError(RuntimeError):
    """A declared plug-in is missing or does not import."""


def declared(group: str) -> list[EntryPoint]:
    """The entry points of ``group``, one per module (an editable install seen twice counts once), sparqlab's own
    first, then other distributions' by name."""
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


def load_plugins() -> None:
    """Import every declared plug-in module once. A declared module that fails to import is an error naming it
    (a broken plug-in is never silently missing)."""
    for point in declared(PLUGIN_GROUP):
        if point.value in _loaded:
            continue
        try:
            importlib.import_module(point.value)
        except ImportError as error:
            raise PluginError(f"plug-in {point.name!r} ({point.value}) does not import: {error}") from error
        _loaded.add(point.value)
