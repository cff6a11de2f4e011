"""Methods by name: each method registers itself from its own package, found through :mod:`sparqlab.core.plugins`.

``@register_method("ggc")`` on a :class:`~sparqlab.platform.base.Method` subclass adds it to :data:`METHODS` (a
:class:`~sparqlab.core.registry.Registry`), which loads the declared plug-ins on a miss, so ``sparqlab run NAME``
finds sparqlab's own method packages (listed in code) and a third-party package's (an entry point) alike, without
the platform importing any of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sparqlab.core.registry import Registry

if TYPE_CHECKING:
    from sparqlab.platform.base import Method

METHODS: Registry[type[Method]] = Registry("method", same=lambda a, b: a.__qualname__ == b.__qualname__)
"""Method classes by name."""


def register_method(name: str):
    """Class decorator: register a method class under ``name`` (also its ``name`` attribute)."""

    def decorate(cls: type[Method]) -> type[Method]:
        METHODS.register(name, cls)
        cls.name = name
        return cls

    return decorate


def get_method(name: str) -> type[Method]:
    """The method class registered as ``name``; the error lists the known names."""
    return METHODS.get(name)


def method_names() -> list[str]:
    """Every registered method name, sorted."""
    return METHODS.names()


def make_method(name: str, **options: Any) -> Method:
    """A method by its registered name, with config ``options`` (validated; errors list the valid names)."""
    return get_method(name)(**options)


def method_from_config(saved: dict[str, Any]) -> Method:
    """The method of a saved :meth:`~sparqlab.platform.base.Method.describe` dict (``config.json``'s ``method``),
    its class looked up by the saved name (what ``sparqlab run --from RUN`` reruns)."""
    return get_method(saved["method"]).from_config(saved)
