"""Methods by name, without upward imports: each method registers itself from its own package.

``@register_method("ggc")`` on a :class:`~sparqlab.methods.base.Method` subclass adds it to the registry.
:func:`get_method` and :func:`method_names` first import the modules of :data:`METHOD_MODULES` (lazily, once), so
``sparqlab run NAME`` finds methods of the packages above this layer (agents, ggc, desq, genop) without
``sparqlab.methods`` importing them at import time. A listed package that does not exist yet is skipped; any
other import error in it is raised, so a broken method package is never silently missing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sparqlab.methods.base import Method

METHOD_MODULES = ["sparqlab.methods.direct", "sparqlab.agents", "sparqlab.ggc", "sparqlab.desq", "sparqlab.genop"]
"""Modules whose import registers methods (in listing order)."""

_REGISTRY: dict[str, type[Method]] = {}
_loaded = False


def register_method(name: str):
    """Class decorator: register a method class under ``name`` (also its ``name`` attribute)."""

    def decorate(cls: type[Method]) -> type[Method]:
        existing = _REGISTRY.get(name)
        if existing is not None and existing.__qualname__ != cls.__qualname__:
            raise ValueError(f"method name {name!r} is taken by {existing.__module__}.{existing.__qualname__}")
        cls.name = name
        _REGISTRY[name] = cls
        return cls

    return decorate


def load_method_modules() -> None:
    """Import every module of :data:`METHOD_MODULES` once; a module that does not exist (yet) is skipped."""
    global _loaded
    if _loaded:
        return
    for module in METHOD_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as error:
            if error.name != module:
                raise
    _loaded = True


def get_method(name: str) -> type[Method]:
    """The method class registered as ``name``; the error lists the known names."""
    if name not in _REGISTRY:
        load_method_modules()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; known: {', '.join(method_names()) or '(none)'}") from None


def method_names() -> list[str]:
    """Every registered method name, sorted."""
    load_method_modules()
    return sorted(_REGISTRY)
