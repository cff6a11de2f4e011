"""One discovery mechanism for everything that plugs into sparqlab: sparqlab's own modules listed in code
(:data:`BUILT_IN`), a third party's declared as Python entry points.

A third-party package declares, in its ``pyproject.toml``::

    [project.entry-points."sparqlab.plugins"]
    mymethod = "mypackage.mymethod"          # importing it registers methods, stand-ins, data builders

    [project.entry-points."sparqlab.kgs"]
    mykg = "mypackage.kg"                    # importing it registers KG profiles (and their stores)

    [project.entry-points."sparqlab.datasets"]
    mydata = "mypackage.kg"                  # importing it registers datasets (may be the same module)

    [project.entry-points."sparqlab.commands"]
    mymethod = "mypackage.mymethod.cli"      # a module with register(subparsers): `sparqlab mymethod ...`

sparqlab's own modules are a table here, not entry points, so a new built-in method or command is found as soon
as its module is listed, without reinstalling the package (installed metadata is read only for third parties).
``sparqlab methods list``, ``sparqlab models list``, ``serve-model``, the method registry and the training-data
builders all read :func:`declared` and cannot disagree. Registries (:class:`sparqlab.core.registry.Registry`) call
:func:`load_plugins` for their group on a miss, so a name is found without importing every package at start-up:
KGs and datasets have groups of their own because method packages are slow to import and a KG name is looked up by
every command. The table names modules of higher layers as text and imports them only on demand, so no layer
imports one above it.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
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

BUILT_IN: dict[str, tuple[str, ...]] = {
    PLUGIN_GROUP: ("sparqlab.train.tiny",  # standin-tiny-random (a tiny random decoder, for garbage-in tests)
                   "sparqlab.text2sparql.external",  # the peers' adapters: methods `external` and `imported`
                   "sparqlab.text2sparql.metric"),  # TEXT2SPARQL's official measures (registered metrics)
    KG_GROUP: ("sparqlab.graphs.profiles", "sparqlab.text2sparql.ck25_store", "sparqlab.graphs.dbpedia",
               "sparqlab.graphs.freebase", "sparqlab.graphs.movies", "sparqlab.graphs.orkg",
               "sparqlab.graphs.derive"),
    DATASET_GROUP: ("sparqlab.data.registry", "sparqlab.text2sparql.editions"),
    COMMAND_GROUP: tuple(f"sparqlab.cli.{name}" for name in (
        "data", "desq", "evaluate", "genop", "ggc", "peers", "init", "kg", "leaderboard", "leakage", "methods",
        "models", "reproduce", "run", "runs", "schema", "serve", "sweep", "train")),
}
"""sparqlab's own modules of each group, in the order they load (commands: the order ``sparqlab --help`` lists
them, alphabetical by command; ``peers`` adds ``import``). A new KG module or command module of sparqlab is one
line here; a new method package needs none (:func:`method_packages`)."""


def method_packages() -> tuple[str, ...]:
    """Every package under ``sparqlab/methods/``, found on disk without importing it: a method added to the
    repository is registered as it is, with no table to edit and no reinstall."""
    spec = importlib.util.find_spec("sparqlab.methods")
    locations = spec.submodule_search_locations if spec else None
    return tuple(f"sparqlab.methods.{info.name}" for info in sorted(pkgutil.iter_modules(locations or []),
                                                                   key=lambda info: info.name) if info.ispkg)

_loaded: set[tuple[str, str]] = set()
_declared: dict[tuple[str, tuple[str, ...]], list[EntryPoint]] = {}
_complete: set[tuple[str, tuple[str, ...]]] = set()


class PluginError(RuntimeError):
    """A declared plug-in is missing or does not import."""


def declared(group: str) -> list[EntryPoint]:
    """The modules of ``group``: sparqlab's own (:data:`BUILT_IN`) first, then the entry points of other
    distributions by name, one per module (an editable install seen twice, or an older install of sparqlab that
    still declares its own modules, counts once). The entry points are read once per ``sys.path``: scanning the
    installed distributions takes ~20 ms, and every registry miss asks (a KG without a store builder is looked up
    once per question)."""
    key = (group, tuple(sys.path))
    if key not in _declared:
        _declared[key] = _scan(group)
    return list(_declared[key])


def _scan(group: str) -> list[EntryPoint]:
    own = (*method_packages(), *BUILT_IN[group]) if group == PLUGIN_GROUP else BUILT_IN.get(group, ())
    seen = {module: EntryPoint(module.rsplit(".", 1)[-1], module, group) for module in own}
    others = sorted(entry_points(group=group), key=lambda point: point.dist.name if point.dist else "")
    for point in others:
        seen.setdefault(point.value, point)
    return list(seen.values())


def load_plugins(group: str = PLUGIN_GROUP) -> None:
    """Import every module declared in ``group`` once. A declared module that fails to import is an error naming
    it (a broken plug-in is never silently missing). Once a group is loaded for this ``sys.path`` the call
    returns at once: every metric lookup asks, several times per question (at 32 questions in flight the walk
    over the declared modules was ~0.4 ms per model call)."""
    key = (group, tuple(sys.path))
    if key in _complete:
        return
    for point in declared(group):
        if (group, point.value) in _loaded:
            continue
        try:
            importlib.import_module(point.value)
        except ImportError as error:
            raise PluginError(f"plug-in {point.name!r} ({point.value}) does not import: {error}") from error
        _loaded.add((group, point.value))
    _complete.add(key)
