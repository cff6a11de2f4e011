"""Command-line flags generated from a typed config class, so an option is declared once (in the dataclass, with
its docstring line as the help) and read by the one type parser (:mod:`sparqlab.core.typed`)."""

from __future__ import annotations

import argparse
from typing import Any

from sparqlab.core.typed import is_config, is_optional, parse_text, plain, type_name


def add_config_arguments(parser: argparse.ArgumentParser, config_class: Any, *, skip: tuple[str, ...] = (),
                         prefix: str = "") -> None:
    """One ``--field-name`` flag per field of ``config_class`` (``--component.field`` for a nested config's fields),
    typed and documented by the class; left out, a flag keeps the class default. ``skip``: fields the command
    sets itself."""
    types_, help_ = config_class.field_types(), config_class.field_help()
    for name, kind in types_.items():
        if name in skip:
            continue
        inner = is_optional(kind)[1]
        if is_config(inner):
            add_config_arguments(parser, inner, prefix=f"{prefix}{name}.")
            continue
        flag = "--" + (prefix + name).replace("_", "-")
        default = config_class.default_of(name)
        parser.add_argument(flag, dest=_dest(prefix + name), default=None, metavar=type_name(kind).upper(),
                            type=lambda text, k=kind, w=flag: parse_text(text, k, w),
                            help=f"{help_.get(name, '')} (default: {default!r})".strip())


def config_from_arguments(config_class: Any, args: argparse.Namespace, *, prefix: str = "", **fixed: Any) -> Any:
    """``config_class`` from the flags of :func:`add_config_arguments` that were given, plus ``fixed`` values."""
    return config_class.from_dict({**_given(config_class, args, prefix), **fixed})


def _given(config_class: Any, args: argparse.Namespace, prefix: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, kind in config_class.field_types().items():
        inner = is_optional(kind)[1]
        if is_config(inner):
            nested = _given(inner, args, f"{prefix}{name}.")
            if nested:  # the other fields keep the field's default value, not the nested class's defaults
                values[name] = {**(plain(config_class.default_of(name)) or {}), **nested}
            continue
        value = getattr(args, _dest(prefix + name), None)
        if value is not None:
            values[name] = value
    return values


def _dest(name: str) -> str:
    return "config__" + name.replace(".", "__")
