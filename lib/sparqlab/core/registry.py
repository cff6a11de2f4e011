"""One name table for everything the workbench looks up by name: methods, stand-in models, datasets, KG profiles,
store builders, searchers, tools, training-data builders, executors.

A :class:`Registry` holds ``name -> item``. Items register themselves from the module that defines them
(``@METHODS.register("ggc")`` or ``PROFILES.register("movies", profile)``); a name can also be registered as a
*loader*, a zero-argument callable run on the first lookup (a KG profile derived from its data is read only when
asked for). A lookup that misses imports the declared plug-ins first (:func:`sparqlab.core.plugins.load_plugins`:
sparqlab's own method packages and any installed third-party package), so a name is found without importing every
package at start-up, and a name that is still unknown is an error listing the known names with a did-you-mean.
Tests that register throw-away names wrap themselves in :meth:`Registry.restored`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

T = TypeVar("T")

_UNSET = object()


class Registry(Generic[T]):
    """Named items of one ``kind`` (the word used in error messages: ``"method"``, ``"dataset"`` ...).

    ``group``: the entry-point group (:mod:`sparqlab.core.plugins`) whose modules are imported when a name is
    missing and before listing; ``None`` for a table filled only by modules that are always imported.
    ``same``: decides whether registering a name again with another object is the same item (a module imported
    twice, a reloaded class); the default compares identity.
    """

    def __init__(self, kind: str, *, group: str | None = "sparqlab.plugins",
                 same: Callable[[T, T], bool] | None = None):
        self.kind = kind
        self.group = group
        self._same = same or (lambda a, b: a is b)
        self._items: dict[str, T] = {}
        self._loaders: dict[str, Callable[[], T]] = {}

    # -- registering ------------------------------------------------------------------------------------------

    def register(self, name: str, item: T | object = _UNSET, *, replace: bool = False):
        """Register ``item`` under ``name``; without ``item``, a decorator that registers what it decorates.
        A different item under a taken name is an error unless ``replace``."""
        if item is _UNSET:
            def decorate(decorated: T) -> T:
                self.register(name, decorated, replace=replace)
                return decorated

            return decorate
        existing = self._items.get(name, _UNSET)
        if existing is not _UNSET and not replace and not self._same(existing, item):  # type: ignore[arg-type]
            raise ValueError(f"a {self.kind} named {name!r} is already registered ({existing!r})")
        self._loaders.pop(name, None)
        self._items[name] = item  # type: ignore[assignment]
        return item

    def register_loader(self, name: str, loader: Callable[[], T], *, replace: bool = False) -> None:
        """Register ``loader()`` as the way to make the item ``name`` on its first lookup."""
        if (name in self._items or name in self._loaders) and not replace:
            raise ValueError(f"a {self.kind} named {name!r} is already registered")
        self._items.pop(name, None)
        self._loaders[name] = loader

    # -- looking up -------------------------------------------------------------------------------------------

    def _load_plugins(self) -> None:
        if self.group:
            from sparqlab.core.plugins import load_plugins

            load_plugins(self.group)

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is registered now (no plug-in is loaded; see :meth:`known`)."""
        return name in self._items or name in self._loaders

    def known(self, name: str) -> bool:
        """Whether ``name`` is registered, loading the declared plug-ins first when it is not yet."""
        if name not in self:
            self._load_plugins()
        return name in self

    def get(self, name: str) -> T:
        """The item ``name``; unknown names are a ``ValueError`` listing the known ones (with a did-you-mean)."""
        if not self.known(name):
            raise ValueError(self.unknown_message(name))
        if name in self._loaders:
            self._items[name] = self._loaders.pop(name)()
        return self._items[name]

    def find(self, name: str) -> T | None:
        """The item ``name``, or ``None`` when there is none."""
        return self.get(name) if self.known(name) else None

    def unknown_message(self, name: str) -> str:
        """``unknown KIND 'x' (did you mean 'y'?); known: ...``."""
        names = self.names()
        close = difflib.get_close_matches(str(name), names, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"unknown {self.kind} {name!r}{hint}; known: {', '.join(names) or '(none)'}"

    def names(self) -> list[str]:
        """Every registered name, sorted (declared plug-ins loaded first)."""
        self._load_plugins()
        return sorted({*self._items, *self._loaders})

    def loaded(self) -> dict[str, T]:
        """The items made so far, in registration order, without loading plug-ins or running loaders (a profile
        derived from a plug-in's data is not read for this)."""
        return dict(self._items)

    def items(self) -> list[tuple[str, T]]:
        """``(name, item)`` for every name, sorted (loaders are run)."""
        return [(name, self.get(name)) for name in self.names()]

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def values(self) -> list[T]:
        """Every item, in name order (loaders are run)."""
        return [item for _, item in self.items()]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    # -- tests ------------------------------------------------------------------------------------------------

    @contextmanager
    def restored(self) -> Iterator[Registry[T]]:
        """Within the block, registrations may be added or replaced; afterwards the table is as before."""
        items, loaders = dict(self._items), dict(self._loaders)
        try:
            yield self
        finally:
            self._items, self._loaders = items, loaders

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {len(self._items) + len(self._loaders)} names)"
