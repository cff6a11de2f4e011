"""Methods by name: each method registers itself from its own package, found through the plug-in entry points.

``@register_method("ggc")`` on a :class:`~sparqlab.platform.base.Method` subclass adds it to the registry.
:func:`get_method` and :func:`method_names` load the declared plug-ins (:func:`sparqlab.core.plugins.load_plugins`)
when needed, so ``sparqlab run NAME`` finds sparqlab's own method packages and a third-party package's alike,
without the platform importing any of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sparqlab.core.plugins import load_plugins

if TYPE_CHECKING:
    from sparqlab.platform.base import Method

_REGISTRY: dict[str, type[Method]] = {}


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


def get_method(name: str) -> type[Method]:
    """The method class registered as ``name``; the error lists the known names."""
    if name not in _REGISTRY:
        load_plugins()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; known: {', '.join(method_names()) or '(none)'}") from None


def method_names() -> list[str]:
    """Every registered method name, sorted."""
    load_plugins()
    return sorted(_REGISTRY)


def make_method(name: str, **options: Any) -> Method:
    """A method by its registered name, with config ``options`` (validated; errors list the valid names)."""
    return get_method(name)(**options)
