"""`sparqlab methods list`: the registered methods with their roles, config fields and prompts."""

from __future__ import annotations

import argparse
import dataclasses


def register(subparsers) -> None:
    parser = subparsers.add_parser("methods", help="list the registered methods",
                                   description="Methods known to `sparqlab run`, found through the method registry.")
    sub = parser.add_subparsers(dest="methods_command", metavar="SUBCOMMAND", required=True)
    listing = sub.add_parser("list", help="each method with its model roles, config fields (-o NAME=VALUE) and prompts")
    listing.set_defaults(handler=_list)


def method_rows() -> list[dict[str, str]]:
    """One row per registered method: name, roles, config fields with defaults, prompt names."""
    from sparqlab.methods import get_method, method_names

    rows = []
    for name in method_names():
        cls = get_method(name)
        fields = ", ".join(f"{f.name}={_default(f)}" for f in dataclasses.fields(cls.config_class))
        rows.append({"method": name, "roles": ", ".join(cls.roles) or "-", "options": fields or "-",
                     "prompts": ", ".join(sorted(cls.prompts)) or "-"})
    return rows


def _default(field: dataclasses.Field) -> str:
    if field.default is not dataclasses.MISSING:
        return repr(field.default)
    if field.default_factory is not dataclasses.MISSING:
        return repr(field.default_factory())
    return "(required)"


def _list(args: argparse.Namespace) -> int:
    for row in method_rows():
        print(f"{row['method']}\n  roles:   {row['roles']}\n  options: {row['options']}\n  prompts: {row['prompts']}")
    return 0
