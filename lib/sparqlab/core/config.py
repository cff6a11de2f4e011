"""Typed settings declared once: a frozen dataclass whose fields are the settings and whose docstring bullets are
their help. Method configs (:class:`sparqlab.platform.config.MethodConfig`) and the run configuration
(:class:`sparqlab.runs.config.RunConfig`) are such classes; the command-line flags, grid keys and notebook
parameters of a setting are derived from its one declaration.

A field whose type is itself a config class is a *group*; ``group.field`` names one of its fields (a *leaf*) from
the shell, a grid or Python. A misspelt name is an error that suggests the closest leaf, also across groups
(``k`` → ``evaluation.k``). A class with ``flat_names = True`` has a unique name for every leaf, so each leaf is
also set and read by its own name: ``RunConfig(kg="movies", limit=50)`` and ``config.limit``
(:class:`FlatConfig`). Values are read by the one type parser of :mod:`sparqlab.core.typed`.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Self, get_type_hints

from sparqlab.core.typed import (
    RANGE_KEY,
    Range,
    check_range,
    coerce,
    is_config,
    is_optional,
    parse_text,
    plain,
    type_name,
)

_HELP_PART = re.compile(r"((?:``\w+``[\s,/]*(?:and\s+|or\s+)?)+):\s*(.*?)(?=;\s*``\w+``\s*:|$)")
"""One ``name``(s): text part of a docstring bullet."""


@dataclass(frozen=True)
class Leaf:
    """One setting of a config tree: its dotted ``path``, type, default (the default of its group's default
    value, so a group may set other defaults than its class) and help text."""

    path: str
    type: Any
    default: Any
    help: str

    @property
    def name(self) -> str:
        """The last part of the path: the flat name of a :class:`FlatConfig` leaf."""
        return self.path.rpartition(".")[2]


def suggestion(name: str, valid: list[str]) -> str | None:
    """The valid (dotted) name closest to ``name``: one whose last part is ``name`` (a leaf named without its
    group), else the closest spelling of a path or of a path's last part, else one whose last part contains a
    name of four letters or more (``timeout`` → ``question_timeout_s``)."""
    last = name.rpartition(".")[2]
    ends = [path for path in valid if path.rpartition(".")[2] == last]
    if ends:
        return ends[0]
    close = difflib.get_close_matches(name, valid, n=1)
    if close:
        return close[0]
    by_last = {path.rpartition(".")[2]: path for path in reversed(valid)}
    close = difflib.get_close_matches(last, list(by_last), n=1)
    if close:
        return by_last[close[0]]
    return next((path for path in valid if len(last) >= 4 and last in path.rpartition(".")[2]), None)


def unknown_names_error(unknown: list[str], valid: list[str], owner: str, what: str = "option",
                        also: Sequence[str] = ()) -> ValueError:
    """``ValueError`` naming each unknown name with a did-you-mean and listing the valid ones (``also``: more
    names a suggestion may be, such as every dotted path, not listed)."""
    hints = []
    for name in unknown:
        close = suggestion(name, [*valid, *also])
        hints.append(f"{name!r}" + (f" (did you mean {close!r}?)" if close else ""))
    return ValueError(f"unknown {what} {', '.join(hints)} for {owner}; valid {what}s: {', '.join(valid) or '(none)'}")


@dataclass(frozen=True)
class TypedConfig:
    """Base class of typed configs: ``@dataclass(frozen=True)`` subclasses with a typed default per field and a
    line per field in the class docstring (``- ``name``: what it changes``; one bullet may name several fields,
    ``a`` / ``b``: text, or hold several ``; ``name``: text`` parts).

    Field types understood (:mod:`sparqlab.core.typed`): ``bool``, ``int``, ``float``, ``str``, ``tuple[X, ...]``,
    ``dict[str, X]``, ``Literal[...]``, ``X | None`` and nested config classes (groups). A numeric field declared
    with :func:`~sparqlab.core.typed.bounded` must lie in its range; a float must be finite.
    """

    _type_cache: ClassVar[dict[type, dict[str, Any]]] = {}
    _leaf_cache: ClassVar[dict[tuple[type, str], dict[str, Leaf]]] = {}

    # -- introspection ------------------------------------------------------------------------------------------

    @classmethod
    def field_types(cls) -> dict[str, Any]:
        """Field name → resolved type annotation, in declaration order."""
        if cls not in TypedConfig._type_cache:
            hints = get_type_hints(cls)
            TypedConfig._type_cache[cls] = {f.name: hints[f.name] for f in dataclasses.fields(cls)}
        return TypedConfig._type_cache[cls]

    @classmethod
    def field_range(cls, name: str) -> Range | None:
        """The declared interval of field ``name`` (:func:`~sparqlab.core.typed.bounded`), if any."""
        return cls.__dataclass_fields__[name].metadata.get(RANGE_KEY)

    @classmethod
    def checked_value(cls, name: str, value: Any) -> Any:
        """``value`` as field ``name`` takes it: coerced to its type and inside its declared range; a
        ``ValueError`` naming the setting otherwise."""
        where = f"{cls.__name__}.{name}"
        value = coerce(value, cls.field_types()[name], where)
        check_range(value, cls.field_range(name), where)
        return value

    @classmethod
    def field_names(cls) -> list[str]:
        return list(cls.field_types())

    @classmethod
    def default_of(cls, name: str) -> Any:
        """The default value of field ``name``."""
        field = cls.__dataclass_fields__[name]
        if field.default_factory is not dataclasses.MISSING:
            return field.default_factory()
        return None if field.default is dataclasses.MISSING else field.default

    @classmethod
    def field_help(cls) -> dict[str, str]:
        """Field name → its text in the docstrings of the class and its bases."""
        found: dict[str, str] = {}
        for klass in cls.__mro__:
            for bullet in re.split(r"\n\s*-\s+", "\n" + (klass.__doc__ or ""))[1:]:
                bullet = " ".join(bullet.split())
                for names, text in _HELP_PART.findall(bullet):
                    for name in re.findall(r"``(\w+)``", names):
                        found.setdefault(name, text.strip())
        return found

    @classmethod
    def groups(cls) -> dict[str, type[TypedConfig]]:
        """Field name → config class, for the fields that are nested configs."""
        return {name: inner for name, kind in cls.field_types().items()
                if is_config(inner := is_optional(kind)[1])}

    @classmethod
    def leaves(cls, prefix: str = "", defaults: Any = None) -> dict[str, Leaf]:
        """Every leaf of the tree by dotted path, in declaration order (``defaults``: the group's default value
        whose fields are the leaves' defaults). Read-only: the declaration's own tree is computed once."""
        key = (cls, prefix)
        if defaults is None and key in TypedConfig._leaf_cache:
            return TypedConfig._leaf_cache[key]
        found: dict[str, Leaf] = {}
        help_ = cls.field_help()
        for name, kind in cls.field_types().items():
            default = getattr(defaults, name) if defaults is not None else cls.default_of(name)
            inner = is_optional(kind)[1]
            if is_config(inner):
                found.update(inner.leaves(f"{prefix}{name}.", default))
            else:
                found[prefix + name] = Leaf(prefix + name, kind, plain(default), help_.get(name, ""))
        if defaults is None:
            TypedConfig._leaf_cache[key] = found
        return found

    @classmethod
    def valid_names(cls) -> list[str]:
        """The names a config of this class accepts: its fields, and every leaf by dotted path."""
        return list(dict.fromkeys([*cls.field_names(), *cls.leaves()]))

    # -- construction -------------------------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None = None) -> Self:
        """Build from plain values (``config.json``, keyword arguments); names and types are checked, lists become
        tuples for tuple fields, nested dicts become nested configs."""
        data = dict(data or {})
        cls._check_names(data)
        return cls(**{name: cls.checked_value(name, value) for name, value in data.items()})

    @classmethod
    def from_options(cls, options: dict[str, str]) -> Self:
        """Build from shell strings (``-o threshold=0.3 -o few_shot_ids=a,b -o gate.backend=tfidf``), each parsed by
        its field's type (:func:`sparqlab.core.typed.parse_text`); a dotted name sets one field of a nested config,
        the others keeping the defaults of the field's default value."""
        return cls.from_dict(cls.parse_options(options))

    @classmethod
    def parse_options(cls, options: dict[str, Any], base: TypedConfig | None = None) -> dict[str, Any]:
        """The plain values of :meth:`from_options` (nested configs as dicts), names checked; a nested config
        given in part keeps the other values of ``base``'s field (default: the field's default value)."""
        flat = {name: text for name, text in options.items() if "." not in name}
        nested: dict[str, dict[str, Any]] = {}
        for name, text in options.items():
            if "." in name:
                head, _, rest = name.partition(".")
                nested.setdefault(head, {})[rest] = text
        cls._check_names({**flat, **nested}, dotted=[n for n in options if "." in n])
        types_ = cls.field_types()
        values = {name: parse_text(text, types_[name], f"{cls.__name__}.{name}") for name, text in flat.items()}
        for head, sub in nested.items():
            kind = is_optional(types_[head])[1]
            if not is_config(kind):
                raise ValueError(f"{cls.__name__}.{head} is {type_name(kind)}, not a nested config: write "
                                 f"{head}=VALUE")
            current = getattr(base, head) if base is not None else cls.default_of(head)
            given = values.get(head)
            start = given if isinstance(given, dict) else plain(current) or {}
            values[head] = {**start, **kind.parse_options(sub, current if not isinstance(given, dict) else None)}
        return values

    def with_options(self, options: dict[str, Any]) -> Self:
        """A copy with shell-string ``options`` applied over this config's own values (``-o`` over a saved
        config)."""
        return type(self).from_dict({**self.to_dict(), **type(self).parse_options(options, self)})

    @classmethod
    def _check_names(cls, data: dict[str, Any], dotted: Sequence[str] = ()) -> None:
        valid = cls.field_names()
        unknown = [name for name in data if name not in valid]
        if unknown:
            given = {name.partition(".")[0]: name for name in dotted}
            raise unknown_names_error([given.get(name, name) for name in unknown], cls.valid_names(), cls.__name__)

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` applied, validated like :meth:`from_dict`."""
        return type(self).from_dict({**self.to_dict(), **changes})

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (tuples as lists, nested configs as dicts), as ``config.json`` stores them."""
        return {f.name: plain(getattr(self, f.name)) for f in dataclasses.fields(self)}


@dataclass(frozen=True)
class CheckedConfig(TypedConfig):
    """A typed config validated at construction: every field is coerced to its declared type (a ``Literal``
    refuses other values, a dict becomes its group's config) and checked against its declared range; :meth:`check`
    then tests what neither can say (relations between fields, the keys of a mapping)."""

    def __post_init__(self) -> None:
        for name in self.field_names():
            object.__setattr__(self, name, self.checked_value(name, getattr(self, name)))
        self.check()

    def check(self) -> None:
        """Refuse values the types and ranges allow but the setting does not (a ``ValueError`` naming it)."""


class FlatConfig(CheckedConfig):
    """A checked config of groups whose every leaf has a name unique in the tree, so that a leaf is set and read
    by that name alone: ``Config(limit=50)`` sets ``questions.limit`` and ``config.limit`` reads it. Dotted paths
    and whole groups (a config or a mapping) are accepted too; a group given in part keeps the defaults of the
    rest. Subclasses are ``@dataclass(frozen=True, init=False)``: this class's ``__init__`` maps the names,
    checked against the declaration."""

    # each subclass's own, read from its __dict__ and set on first use
    _flat_cache: ClassVar[dict[str, Leaf]]
    _group_cache: ClassVar[dict[str, type[TypedConfig]]]

    def __init__(self, **values: Any):
        nested = type(self).nest(values)
        for name in self.field_names():
            object.__setattr__(self, name, nested[name] if name in nested else self.default_of(name))
        self.__post_init__()

    @classmethod
    def flat_names(cls) -> dict[str, Leaf]:
        """Leaf name → leaf; the declaration must keep leaf and group names unique (checked here)."""
        cache = cls.__dict__.get("_flat_cache")
        if cache is None:
            cache = {}
            groups = [path.rpartition(".")[2] for path in cls.group_paths()]
            for leaf in cls.leaves().values():
                if leaf.name in cache or leaf.name in groups:
                    raise TypeError(f"{cls.__name__}: the name {leaf.name!r} is not unique in the declaration")
                cache[leaf.name] = leaf
            if len(set(groups)) < len(groups):
                raise TypeError(f"{cls.__name__}: group names must be unique: {', '.join(groups)}")
            cls._flat_cache = cache
        return cache

    @classmethod
    def group_paths(cls) -> dict[str, type[TypedConfig]]:
        """Dotted path → config class of every group in the tree (``models``, ``models.model_params`` ...)."""
        cached = cls.__dict__.get("_group_cache")
        if cached is not None:
            return cached
        found: dict[str, type[TypedConfig]] = {}

        def walk(owner: type[TypedConfig], prefix: str) -> None:
            for name, group in owner.groups().items():
                found[prefix + name] = group
                walk(group, f"{prefix}{name}.")

        walk(cls, "")
        cls._group_cache = found
        return found

    @classmethod
    def path_of(cls, name: str) -> str:
        """The dotted path of a leaf or group, named flat or dotted; unknown names get a did-you-mean."""
        flat = cls.flat_names()
        if name in flat:
            return flat[name].path
        groups = {path.rpartition(".")[2]: path for path in cls.group_paths()}
        if name in groups:
            return groups[name]
        if name in cls.leaves() or name in cls.group_paths():
            return name
        raise unknown_names_error([name], [*flat, *groups], cls.__name__, "setting",
                                  also=[*cls.leaves(), *cls.group_paths()])

    @classmethod
    def flatten(cls, values: dict[str, Any]) -> dict[str, Any]:
        """``values`` (flat, dotted or whole groups) as flat leaf names, later names winning: the canonical
        short form of a partial config (one entry of a grid file)."""
        flat: dict[str, Any] = {}
        for name, value in values.items():
            path = cls.path_of(name)
            if path in cls.group_paths():
                if not isinstance(value, dict | TypedConfig):
                    raise ValueError(f"{cls.__name__}.{path} is a group of settings: give a mapping of its fields, "
                                     f"not {value!r}")
                flat.update(cls.flatten({f"{path}.{key}": item for key, item in plain(value).items()}))
            else:
                flat[cls.leaves()[path].name] = value
        return flat

    @classmethod
    def nest(cls, values: dict[str, Any]) -> dict[str, Any]:
        """``values`` as a mapping of the declaration's fields: each group given in part starts from the
        group's default value."""
        nested: dict[str, Any] = {}
        for name, value in cls.flatten(values).items():
            *groups, last = cls.flat_names()[name].path.split(".")
            target = nested
            for depth, part in enumerate(groups):
                if part not in target:
                    target[part] = plain(cls.default_of(part)) if depth == 0 else {}
                target = target[part]
            target[last] = value
        return nested

    def __getattr__(self, name: str) -> Any:
        """A leaf (or a nested group) by its own name: ``config.limit`` is ``config.questions.limit``."""
        path = None if name.startswith("_") else type(self)._flat_path(name)
        if path is None or "." not in path:
            raise AttributeError(f"{type(self).__name__!r} has no attribute {name!r}")
        value: Any = self
        for part in path.split("."):
            value = object.__getattribute__(value, part)
        return value

    @classmethod
    def _flat_path(cls, name: str) -> str | None:
        leaf = cls.flat_names().get(name)
        if leaf is not None:
            return leaf.path
        return next((path for path in cls.group_paths() if path.rpartition(".")[2] == name), None)

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` (flat, dotted or whole groups) applied, validated."""
        return type(self)(**{**self.to_dict(), **changes})

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None = None) -> Self:
        """From ``to_dict``'s nested form (``config.json``) or any mix of flat and dotted names."""
        return cls(**dict(data or {}))
