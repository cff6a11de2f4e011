"""One type parser for every typed setting: method configs (``-o name=value``), nested component configs and
notebook parameters (``-p name value``) read values with the same rules, from Python/JSON/YAML values
(:func:`coerce`) or from shell strings (:func:`parse_text`).

Types understood: ``bool``, ``int``, ``float``, ``str``, ``Any``, ``tuple[X, ...]`` and ``list[X]``,
``dict[str, X]``, ``Literal[...]``, ``X | None``, and nested config dataclasses (anything with ``from_dict``; one
with a ``from_text`` class method also takes its one-string form, e.g. a model role's ``NAME@URL``).
Shell strings: booleans as true/false/yes/no/on/off/1/0, ``none``/``null`` for optional values, sequences as
comma-separated items or a ``[...]`` literal, mappings and nested configs as JSON or YAML.

Numbers are finite: NaN and infinities are refused for every ``float`` setting (a NaN timeout or temperature
passes every comparison test as false and silently zeroes a run). A setting's allowed interval is declared with
it (:class:`Range`, :func:`bounded`) and checked by :func:`check_range` wherever the setting is read.
"""

from __future__ import annotations

import ast
import dataclasses
import math
import types
import typing
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, get_args, get_origin

import yaml

from sparqlab.core.yaml_loader import load_yaml

TRUE_WORDS = frozenset({"true", "yes", "1", "on"})
FALSE_WORDS = frozenset({"false", "no", "0", "off"})
NONE_WORDS = frozenset({"none", "null", "~"})


def is_optional(kind: Any) -> tuple[bool, Any]:
    """``(True, X)`` for ``X | None`` / ``Optional[X]``, else ``(False, kind)``."""
    if get_origin(kind) in (typing.Union, types.UnionType):
        args = [a for a in get_args(kind) if a is not type(None)]
        if len(args) < len(get_args(kind)):
            return True, args[0] if len(args) == 1 else typing.Union[tuple(args)]  # noqa: UP007
    return False, kind


def is_config(kind: Any) -> bool:
    """A nested config class (a dataclass with ``from_dict``)."""
    return isinstance(kind, type) and hasattr(kind, "from_dict") and hasattr(kind, "__dataclass_fields__")


def type_name(kind: Any) -> str:
    """A short readable name: ``int``, ``list[str]``, ``str | None``, ``any``."""
    optional, inner = is_optional(kind)
    if optional:
        return f"{type_name(inner)} | None"
    if kind is Any:
        return "any"
    origin, args = get_origin(kind), get_args(kind)
    if origin in (list, tuple) and args:
        return f"{origin.__name__}[{type_name(args[0])}]"
    if origin is typing.Literal:
        return " | ".join(map(repr, args))
    return getattr(kind, "__name__", None) or str(kind).replace("typing.", "")


def coerce(value: Any, kind: Any, where: str) -> Any:
    """``value`` checked against ``kind``, with light conversions only (int → float, list ↔ tuple, path → str,
    dict → nested config); a mismatch is a ``ValueError`` naming ``where``."""
    optional, kind = is_optional(kind)
    if value is None:
        if optional or kind is Any:
            return None
        raise ValueError(f"{where} may not be None (expected {type_name(kind)})")
    origin, args = get_origin(kind), get_args(kind)
    if kind is Any:
        return value
    if origin is typing.Literal:
        if value not in args:
            raise ValueError(f"{where} must be one of {', '.join(map(repr, args))}; got {value!r}")
        return value
    if is_config(kind):
        if isinstance(value, kind):
            return value
        if isinstance(value, dict):
            return kind.from_dict(value)
        if isinstance(value, str) and hasattr(kind, "from_text"):  # a config with a one-string form
            return kind.from_text(value)
        raise ValueError(f"{where} must be a {kind.__name__} or a mapping of its fields; got {value!r}")
    if origin in (tuple, list) or kind in (tuple, list):
        if not isinstance(value, list | tuple):
            raise ValueError(f"{where} must be a list; got {type(value).__name__} {shown(value)}")
        item = args[0] if args else Any
        items = [coerce(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if (origin or kind) is tuple else items
    if origin is dict or kind is dict:
        if not isinstance(value, dict):
            raise ValueError(f"{where} must be a mapping; got {type(value).__name__} {shown(value)}")
        item = args[1] if len(args) == 2 else Any
        return {k: coerce(v, item, f"{where}[{k!r}]") for k, v in value.items()}
    if kind is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            if not math.isfinite(value):
                raise ValueError(f"{where} must be a finite number; got {value!r}")
            return float(value)
    elif kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif kind is str and isinstance(value, PurePath):  # a file or folder setting given as a path
        return str(value)
    elif isinstance(kind, type) and isinstance(value, kind):
        return value
    raise ValueError(f"{where} must be {type_name(kind)}; got {type(value).__name__} {shown(value)}")


def shown(value: Any, width: int = 80) -> str:
    """``repr(value)`` cut to ``width`` characters, for a message about a value that may be a whole document."""
    text = repr(value)
    return text if len(text) <= width else text[:width - 1] + "…"


@dataclass(frozen=True)
class Range:
    """The interval a numeric setting may take: above ``gt`` (exclusive) or from ``ge``, up to ``le``."""

    gt: float | None = None
    ge: float | None = None
    le: float | None = None

    def describe(self) -> str:
        """``> 0``, ``>= 1``, ``in [0, 1]`` ..."""
        low = f"> {self.gt:g}" if self.gt is not None else f">= {self.ge:g}" if self.ge is not None else ""
        if self.le is None:
            return low
        if self.gt is not None:
            return f"in ({self.gt:g}, {self.le:g}]"
        return f"in [{self.ge:g}, {self.le:g}]" if self.ge is not None else f"<= {self.le:g}"

    def holds(self, value: float) -> bool:
        return ((self.gt is None or value > self.gt) and (self.ge is None or value >= self.ge)
                and (self.le is None or value <= self.le))


RANGE_KEY = "range"
"""The dataclass field metadata key holding a setting's :class:`Range`."""


def bounded(default: Any, *, gt: float | None = None, ge: float | None = None, le: float | None = None) -> Any:
    """A dataclass field with ``default`` whose numeric value must lie in the given interval (``None`` is left to
    the type: an optional setting may be unset)."""
    return dataclasses.field(default=default, metadata={RANGE_KEY: Range(gt=gt, ge=ge, le=le)})


def check_range(value: Any, allowed: Range | None, where: str) -> None:
    """Refuse a number outside ``allowed`` (or not finite) with a ``ValueError`` naming ``where``; ``None`` and
    non-numbers (left to the type check) pass."""
    if allowed is None or value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return
    if not math.isfinite(value) or not allowed.holds(value):
        raise ValueError(f"{where} must be {allowed.describe()}; got {value!r}")


def parse_text(text: Any, kind: Any, where: str) -> Any:
    """A shell string read by ``kind`` (then check it with :func:`coerce`); non-strings pass through."""
    if not isinstance(text, str):
        return text
    optional, kind = is_optional(kind)
    stripped = text.strip()
    if optional and stripped.lower() in NONE_WORDS:
        return None
    origin = get_origin(kind)
    try:
        if kind is Any:
            try:
                return ast.literal_eval(stripped)
            except (ValueError, SyntaxError):
                return text
        if kind is bool:
            lowered = stripped.lower()
            if lowered in TRUE_WORDS | FALSE_WORDS:
                return lowered in TRUE_WORDS
            raise ValueError(f"{where} must be true or false; got {text!r}")
        if kind is int:
            return int(stripped)
        if kind is float:
            return float(stripped)
        if origin in (tuple, list) or kind in (tuple, list):
            if stripped.startswith("["):
                return load_yaml(stripped)
            item = (get_args(kind) or (str,))[0]
            return [parse_text(part.strip(), item, where) for part in stripped.split(",") if part.strip()]
        if origin is dict or kind is dict or is_config(kind):
            return load_yaml(stripped)
    except (yaml.YAMLError, ValueError) as error:
        if str(error).startswith(where):
            raise
        raise ValueError(f"{where} must be {type_name(kind)}; could not read {text!r}: {error}") from None
    return text


def plain(value: Any) -> Any:
    """JSON values: tuples as lists, nested configs as dicts (their ``to_dict``)."""
    if hasattr(value, "to_dict") and hasattr(value, "__dataclass_fields__"):
        return value.to_dict()
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return value
