"""Typed method settings: every knob that changes a method's output is a field of a frozen dataclass.

A method's config is saved in full in the run's ``config.json`` and hashed into the run id, so changing a flag,
a threshold or the few-shot ids starts a new run instead of resuming a folder with mixed outputs. The same class
validates settings from Python (:meth:`MethodConfig.from_dict`) and from the shell (:meth:`MethodConfig.from_options`,
``sparqlab run METHOD -o name=value``, ``-o gate.backend=tfidf`` for a field of a nested config): an unknown name or
a value of the wrong type is an error that lists the valid names, at config time, never a silent default at run
time. Values are read by the one type parser of :mod:`sparqlab.core.typed`.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from dataclasses import dataclass
from typing import Any, ClassVar, get_type_hints

from sparqlab.core.typed import coerce, is_config, is_optional, parse_text, plain, type_name

CALL_PARAMETERS = ("temperature", "top_p", "max_tokens", "stop", "reasoning_effort")
"""Request parameters a method config may set per call kind as ``{kind}_<param>`` fields."""

_HELP_PART = re.compile(r"((?:``\w+``[\s,/]*(?:and\s+|or\s+)?)+):\s*(.*?)(?=;\s*``\w+``\s*:|$)")
"""One ``name``(s): text part of a docstring bullet."""


@dataclass(frozen=True)
class MethodConfig:
    """Base class of method configs. Subclasses are ``@dataclass(frozen=True)`` with a typed default per field and
    a line per field in the class docstring (what it changes and the paper definition it follows).

    Field types understood by the validators (:mod:`sparqlab.core.typed`): ``bool``, ``int``, ``float``, ``str``,
    ``tuple[X, ...]``, ``dict[str, X]``, ``Literal[...]``, ``X | None`` and nested ``MethodConfig`` subclasses (a
    component such as a gate's settings or SAGA's features), whose fields are set as ``component.field``.
    """

    _type_cache: ClassVar[dict[type, dict[str, Any]]] = {}
    call_kinds: ClassVar[tuple[str, ...]] = ()
    """The model call kinds of the method (``ctx.chat(kind=...)``); each has a ``{kind}_max_tokens`` and a
    ``{kind}_reasoning_effort`` field (issue 18 item 7: budgets per call kind, no hard-coded ``max_tokens``)."""

    def call_params(self, kind: str) -> dict[str, Any]:
        """The method's default request parameters for one call kind: the ``{kind}_<param>`` fields of
        :data:`CALL_PARAMETERS` that are set. They are defaults: an explicit user setting (the run's
        ``model_params``, a role's ``params``) wins over them (:meth:`sparqlab.platform.QuestionContext.chat`)."""
        values: dict[str, Any] = {}
        for param in CALL_PARAMETERS:
            value = getattr(self, f"{kind}_{param}", None)
            if value is not None:
                values[param] = list(value) if isinstance(value, tuple) else value
        return values

    # -- introspection ------------------------------------------------------------------------------------------

    @classmethod
    def field_types(cls) -> dict[str, Any]:
        """Field name → resolved type annotation, in declaration order."""
        if cls not in MethodConfig._type_cache:
            hints = get_type_hints(cls)
            MethodConfig._type_cache[cls] = {f.name: hints[f.name] for f in dataclasses.fields(cls)}
        return MethodConfig._type_cache[cls]

    @classmethod
    def field_names(cls) -> list[str]:
        return list(cls.field_types())

    # -- construction -------------------------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None = None) -> MethodConfig:
        """Build from plain values (``config.json``, keyword arguments); names and types are checked, lists become
        tuples for tuple fields, nested dicts become nested configs."""
        data = dict(data or {})
        cls._check_names(data)
        types_ = cls.field_types()
        values = {name: coerce(value, types_[name], f"{cls.__name__}.{name}") for name, value in data.items()}
        return cls(**values)

    @classmethod
    def from_options(cls, options: dict[str, str]) -> MethodConfig:
        """Build from shell strings (``-o threshold=0.3 -o few_shot_ids=a,b -o gate.backend=tfidf``), each parsed by
        its field's type (:func:`sparqlab.core.typed.parse_text`); a dotted name sets one field of a nested config,
        the others keeping the defaults of the field's default value."""
        return cls.from_dict(cls.parse_options(options))

    @classmethod
    def parse_options(cls, options: dict[str, str]) -> dict[str, Any]:
        """The plain values of :meth:`from_options` (nested configs as dicts), names checked."""
        flat = {name: text for name, text in options.items() if "." not in name}
        nested: dict[str, dict[str, str]] = {}
        for name, text in options.items():
            if "." in name:
                head, _, rest = name.partition(".")
                nested.setdefault(head, {})[rest] = text
        cls._check_names({**flat, **nested})
        types_ = cls.field_types()
        values = {name: parse_text(text, types_[name], f"{cls.__name__}.{name}") for name, text in flat.items()}
        for head, sub in nested.items():
            kind = is_optional(types_[head])[1]
            if not is_config(kind):
                raise ValueError(f"{cls.__name__}.{head} is {type_name(kind)}, not a nested config: write "
                                 f"-o {head}=VALUE")
            given = values.get(head)
            base = given if isinstance(given, dict) else plain(cls.default_of(head)) or {}
            values[head] = {**base, **kind.parse_options(sub)}
        return values

    @classmethod
    def default_of(cls, name: str) -> Any:
        """The default value of field ``name``."""
        field = cls.__dataclass_fields__[name]
        if field.default_factory is not dataclasses.MISSING:
            return field.default_factory()
        return None if field.default is dataclasses.MISSING else field.default

    @classmethod
    def field_help(cls) -> dict[str, str]:
        """Field name → its text in the docstrings of the class and its bases: bullets ``- ``name``: text``, where
        one bullet may name several fields (``a`` / ``b``: text) or hold several ``; ``name``: text`` parts."""
        found: dict[str, str] = {}
        for klass in cls.__mro__:
            for bullet in re.split(r"\n\s*-\s+", "\n" + (klass.__doc__ or ""))[1:]:
                bullet = " ".join(bullet.split())
                for names, text in _HELP_PART.findall(bullet):
                    for name in re.findall(r"``(\w+)``", names):
                        found.setdefault(name, text.strip())
        return found

    @classmethod
    def _check_names(cls, data: dict[str, Any]) -> None:
        valid = cls.field_names()
        unknown = [name for name in data if name not in valid]
        if unknown:
            hints = []
            for name in unknown:
                close = difflib.get_close_matches(name, valid, n=1)
                hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
            raise ValueError(f"unknown option {', '.join(hints)} for {cls.__name__}; valid options: "
                             f"{', '.join(valid) or '(none)'}")

    def replace(self, **changes: Any) -> MethodConfig:
        """A copy with ``changes`` applied, validated like :meth:`from_dict`."""
        return type(self).from_dict({**self.to_dict(), **changes})

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (tuples as lists, nested configs as dicts), as ``config.json`` stores them."""
        return {f.name: plain(getattr(self, f.name)) for f in dataclasses.fields(self)}
