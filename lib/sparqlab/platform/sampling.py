"""What every call kind of every method sends when nothing is set explicitly: the one table of docs/replies.md
("Sampling per call kind"), made from the methods' config defaults and the request's own defaults, so the
documentation cannot drift from the wire (``tests/platform/test_sampling_table.py`` compares them)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from sparqlab.llm.base import ChatRequest
from sparqlab.platform.registry import get_method, method_names

REQUEST_DEFAULTS = {field.name: field.default for field in fields(ChatRequest)
                    if field.name in ("temperature", "top_p", "max_tokens")}
"""What a request carries for a parameter that neither the method nor the user sets: ``temperature`` 0.0 and
``top_p`` 1.0 are always sent; ``max_tokens`` ``None`` is left out (the server's default, up to the whole
context)."""


OWN_METHODS = "sparqlab.methods."
"""The package of the methods this table covers."""


def call_defaults() -> list[tuple[str, str, dict[str, Any]]]:
    """``(method, call kind, the method's default request parameters)`` of the call kinds of sparqlab's own
    methods (:meth:`~sparqlab.platform.config.MethodConfig.call_params` of each default config), in name order;
    a plug-in's methods document their own."""
    rows = []
    for name in method_names():
        method = get_method(name)
        if method.config_class.call_kinds and method.__module__.startswith(OWN_METHODS):
            config = method.config_class()
            rows += [(name, kind, config.call_params(kind)) for kind in config.call_kinds]
    return rows


def _cell(params: dict[str, Any], name: str) -> str:
    if name in params:
        return f"{params[name]:g}" if isinstance(params[name], float) else str(params[name])
    default = REQUEST_DEFAULTS[name]
    return "not sent" if default is None else f"{default:g} (request default)"


def sampling_table() -> str:
    """The Markdown table: per method and call kind, the ``temperature``, ``top_p``, ``max_tokens`` and ``stop``
    sent when the run sets none of them (a value the method does not set is the request's default, said so)."""
    lines = ["| method | call kind | temperature | top_p | max_tokens | stop |", "|---|---|---|---|---|---|"]
    for method, kind, params in call_defaults():
        stop = ", ".join(f"`{s!r}`" for s in params.get("stop", ())) or "none"
        lines.append(f"| {method} | `{kind}` | {_cell(params, 'temperature')} | {_cell(params, 'top_p')} | "
                     f"{_cell(params, 'max_tokens')} | {stop} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(sampling_table(), end="")
