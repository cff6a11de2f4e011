"""Typed method settings: every knob that changes a method's output is a field of a frozen dataclass.

A method's config is saved in full in the run's ``config.json`` and hashed into the run id, so changing a flag,
a threshold or the few-shot ids starts a new run instead of resuming a folder with mixed outputs. The same class
validates settings from Python (:meth:`MethodConfig.from_dict`) and from the shell (:meth:`MethodConfig.from_options`,
``sparqlab run METHOD -o name=value``): an unknown name or a value of the wrong type is an error that lists the
valid names.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import types
import typing
from dataclasses import dataclass
from typing import Any, ClassVar, get_args, get_origin, get_type_hints

CALL_PARAMETERS = ("temperature", "top_p", "max_tokens", "stop", "reasoning_effort")
"""Request parameters a method config may set per call kind as ``{kind}_<param>`` fields."""


@dataclass(frozen=True)
class MethodConfig:
    """Base class of method configs. Subclasses are ``@dataclass(frozen=True)`` with a typed default per field and
    a line per field in the class docstring (what it changes and the paper definition it follows).

    Field types understood by the validators: ``bool``, ``int``, ``float``, ``str``, ``tuple[X, ...]``,
    ``dict[str, X]``, ``Literal[...]``, ``X | None`` and nested ``MethodConfig`` subclasses (a component such as a
    trained gate's settings).
    """

    _type_cache: ClassVar[dict[type, dict[str, Any]]] = {}
    call_kinds: ClassVar[tuple[str, ...]] = ()
    """The model call kinds of the method (``ctx.chat(kind=...)``); each has a ``{kind}_max_tokens`` and a
    ``{kind}_reasoning_effort`` field (issue 18 item 7: budgets per call kind, no hard-coded ``max_tokens``)."""

    def call_params(self, kind: str) -> dict[str, Any]:
        """The method's default request parameters for one call kind: the ``{kind}_<param>`` fields of
        :data:`CALL_PARAMETERS` that are set. They are defaults: an explicit user setting (the run's
        ``model_params``, a role's ``params``) wins over them (:meth:`sparqlab.methods.QuestionContext.chat`)."""
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
        values = {name: _coerce(value, types_[name], f"{cls.__name__}.{name}") for name, value in data.items()}
        return cls(**values)

    @classmethod
    def from_options(cls, options: dict[str, str]) -> MethodConfig:
        """Build from shell strings (``-o threshold=0.3 -o few_shot_ids=a,b``), each parsed by its field's type:
        booleans as true/false/yes/no/1/0, numbers, ``none`` for optional fields, tuples as comma-separated items
        or a JSON list, dicts and nested configs as JSON."""
        cls._check_names(options)
        types_ = cls.field_types()
        return cls.from_dict({name: _parse_text(text, types_[name], f"{cls.__name__}.{name}")
                              for name, text in options.items()})

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
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}


def _plain(value: Any) -> Any:
    if isinstance(value, MethodConfig):
        return value.to_dict()
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def _is_optional(kind: Any) -> tuple[bool, Any]:
    """``(True, X)`` for ``X | None`` / ``Optional[X]``, else ``(False, kind)``."""
    if get_origin(kind) in (typing.Union, types.UnionType):
        args = [a for a in get_args(kind) if a is not type(None)]
        if len(args) < len(get_args(kind)):
            return True, args[0] if len(args) == 1 else typing.Union[tuple(args)]  # noqa: UP007
    return False, kind


def _type_name(kind: Any) -> str:
    return getattr(kind, "__name__", None) or str(kind).replace("typing.", "")


def _coerce(value: Any, kind: Any, where: str) -> Any:
    """``value`` checked against ``kind`` (light conversions only: int → float, list → tuple, dict → config)."""
    optional, kind = _is_optional(kind)
    if value is None:
        if optional or kind is Any:
            return None
        raise ValueError(f"{where} may not be None (expected {_type_name(kind)})")
    origin, args = get_origin(kind), get_args(kind)
    if kind is Any:
        return value
    if origin is typing.Literal:
        if value not in args:
            raise ValueError(f"{where} must be one of {', '.join(map(repr, args))}; got {value!r}")
        return value
    if isinstance(kind, type) and issubclass(kind, MethodConfig):
        if isinstance(value, kind):
            return value
        if isinstance(value, dict):
            return kind.from_dict(value)
        raise ValueError(f"{where} must be a {kind.__name__} or a dict of its fields; got {value!r}")
    if origin is tuple or kind is tuple:
        if not isinstance(value, list | tuple):
            raise ValueError(f"{where} must be a list; got {type(value).__name__} {value!r}")
        item = args[0] if args else Any
        return tuple(_coerce(v, item, f"{where}[{i}]") for i, v in enumerate(value))
    if origin is dict or kind is dict:
        if not isinstance(value, dict):
            raise ValueError(f"{where} must be a mapping; got {type(value).__name__} {value!r}")
        item = args[1] if len(args) == 2 else Any
        return {k: _coerce(v, item, f"{where}[{k!r}]") for k, v in value.items()}
    if kind is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif isinstance(kind, type) and isinstance(value, kind):
        return value
    raise ValueError(f"{where} must be {_type_name(kind)}; got {type(value).__name__} {value!r}")


_TRUE, _FALSE = {"true", "yes", "1", "on"}, {"false", "no", "0", "off"}


def _parse_text(text: Any, kind: Any, where: str) -> Any:
    """A shell string parsed by the field type; non-strings (already parsed) pass through."""
    if not isinstance(text, str):
        return text
    optional, kind = _is_optional(kind)
    if optional and text.strip().lower() in ("none", "null"):
        return None
    origin = get_origin(kind)
    try:
        if kind is bool:
            lowered = text.strip().lower()
            if lowered in _TRUE | _FALSE:
                return lowered in _TRUE
            raise ValueError(f"{where} must be true or false; got {text!r}")
        if kind is int:
            return int(text)
        if kind is float:
            return float(text)
        if origin is tuple or kind is tuple:
            stripped = text.strip()
            if stripped.startswith("["):
                return json.loads(stripped)
            item = (get_args(kind) or (str,))[0]
            return [_parse_text(part.strip(), item, where) for part in stripped.split(",") if part.strip()]
        if origin is dict or kind is dict or (isinstance(kind, type) and issubclass(kind, MethodConfig)):
            return json.loads(text)
    except (json.JSONDecodeError, ValueError) as error:
        if str(error).startswith(where):
            raise
        raise ValueError(f"{where} must be {_type_name(kind)}; could not read {text!r}: {error}") from None
    return text
