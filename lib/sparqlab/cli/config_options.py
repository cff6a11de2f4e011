"""Command-line flags generated from a typed config class, so an option is declared once (in the dataclass, with
its docstring line as the help) and read by the one type parser (:mod:`sparqlab.core.typed`).

A leaf becomes ``--field-name`` (``--component.field`` inside a nested config; the leaf's own name in a
:class:`~sparqlab.core.config.FlatConfig`, whose names are unique). A boolean flag alone means true
(``--generate-only``; ``--generate-only false`` also works); a ``Literal`` lists its choices; a mapping is given
as repeated ``NAME=VALUE`` (``--kg-options search=local --kg-options timeout_s=60``), each value read by the
mapping's value type. A flag left out keeps the class default, or the command's own default where it states one
(``defaults``, shown in the help beside the class's).
"""

from __future__ import annotations

import argparse
import re
import typing
from typing import Any, get_args, get_origin

from sparqlab.core.config import FlatConfig, Leaf
from sparqlab.core.typed import coerce, is_optional, parse_text, plain, type_name


def flag_of(leaf: Leaf, flat: bool) -> str:
    """The flag of a leaf: ``--model-url``; ``--gate.backend`` for a nested config's field."""
    return "--" + (leaf.name if flat else leaf.path).replace("_", "-")


def display(text: str) -> str:
    """A docstring's help text for a terminal: reST roles and literals as plain text."""
    text = re.sub(r":\w+:`~?([^`]+)`", r"\1", text)
    return re.sub(r"``([^`]+)``", r"\1", text)


def dest_of(path: str) -> str:
    return "config__" + path.replace(".", "__")


def default_text(leaf: Leaf, defaults: dict[str, Any], flat: bool) -> str:
    """``(default: X)``, or ``(default here: X; declared: Y)`` where the command states its own default."""
    key = leaf.name if flat else leaf.path
    if key in defaults and plain(defaults[key]) != leaf.default:
        return f"(default here: {plain(defaults[key])!r}; declared: {leaf.default!r})"
    return f"(default: {leaf.default!r})"


def add_config_arguments(parser: argparse.ArgumentParser | Any, config_class: Any, *, skip: tuple[str, ...] = (),
                         prefix: str = "", defaults: dict[str, Any] | None = None,
                         aliases: dict[str, str] | None = None, grouped: bool = False) -> None:
    """One flag per leaf of ``config_class`` (see the module docstring). ``skip``: fields the command sets itself
    or does not take (by name or path; a group name skips the group); ``defaults``: the command's own defaults
    by field name; ``aliases``: short flags by field name (``{"model": "-m"}``); ``grouped``: an argparse group
    per top-level group of the declaration, titled by its docstring's first line."""
    flat = isinstance(config_class, type) and issubclass(config_class, FlatConfig)
    defaults, aliases = defaults or {}, aliases or {}
    sections: dict[str, Any] = {}
    for leaf in config_class.leaves(prefix).values():
        path = leaf.path.removeprefix(prefix)
        if leaf.name in skip or path in skip or path.split(".")[0] in skip:
            continue
        target = parser
        if grouped and "." in path:
            head = path.split(".")[0]
            if head not in sections:
                doc = (config_class.groups()[head].__doc__ or head).strip().splitlines()[0]
                sections[head] = parser.add_argument_group(f"{head}: {doc.rstrip('.')}")
            target = sections[head]
        key = leaf.name if flat else path
        names = [flag_of(leaf, flat)] + ([aliases[key]] if key in aliases else [])
        target.add_argument(*names, dest=dest_of(leaf.path), default=None,
                            help=display(f"{leaf.help} {default_text(leaf, defaults, flat)}").strip()
                            .replace("%", "%%"),
                            **_kind_options(leaf, names[0]))


def _kind_options(leaf: Leaf, where: str) -> dict[str, Any]:
    """``add_argument`` keywords that read a leaf's type: choices, a lone boolean flag, repeated pairs."""
    inner = is_optional(leaf.type)[1]
    if inner is bool:
        return {"nargs": "?", "const": True, "metavar": "BOOL",
                "type": lambda text: parse_text(text, bool, where)}
    if get_origin(inner) is typing.Literal:
        return {"choices": list(get_args(inner)), "type": str}
    if get_origin(inner) is dict or inner is dict:
        value_type = get_args(inner)[1] if len(get_args(inner)) == 2 else Any
        return {"action": "append", "metavar": "NAME=VALUE",
                "type": lambda text: _pair(text, value_type, where)}
    if get_origin(inner) in (tuple, list):
        return {"metavar": "A,B,...", "type": lambda text: parse_text(text, leaf.type, where)}
    return {"metavar": type_name(inner).upper(), "type": lambda text: parse_text(text, leaf.type, where)}


def _pair(text: str, value_type: Any, where: str) -> tuple[str, Any]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"{where} takes NAME=VALUE, got {text!r}")
    try:
        return name.strip(), coerce(parse_text(value, value_type, f"{where} {name.strip()}"), value_type, where)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def given_arguments(config_class: Any, args: argparse.Namespace, *, prefix: str = "") -> dict[str, Any]:
    """The leaves whose flags were given, by path relative to ``prefix`` (mappings from their pairs; a name
    given twice is an error)."""
    values: dict[str, Any] = {}
    for leaf in config_class.leaves(prefix).values():
        value = getattr(args, dest_of(leaf.path), None)
        if value is None:
            continue
        if isinstance(value, list) and value and isinstance(value[0], tuple):
            names = [name for name, _ in value]
            repeated = sorted({name for name in names if names.count(name) > 1})
            if repeated:
                raise ValueError(f"{leaf.path}: {', '.join(repeated)} given twice")
            value = dict(value)
        values[leaf.path.removeprefix(prefix)] = value
    return values


def config_from_arguments(config_class: Any, args: argparse.Namespace, *, prefix: str = "", **fixed: Any) -> Any:
    """``config_class`` from the flags of :func:`add_config_arguments` that were given, plus ``fixed`` values
    (a nested config given in part keeps the other fields of the field's default value)."""
    return config_class.from_options({**given_arguments(config_class, args, prefix=prefix), **fixed})
