"""Typed method settings: every knob that changes a method's output is a field of a frozen dataclass.

A method's config is saved in full in the run's ``config.json`` and hashed into the run id, so changing a flag,
a threshold or the few-shot ids starts a new run instead of resuming a folder with mixed outputs. The same class
validates settings from Python (:meth:`MethodConfig.from_dict`) and from the shell (:meth:`MethodConfig.from_options`,
``sparqlab run METHOD -o name=value``, ``-o gate.backend=tfidf`` for a field of a nested config): an unknown name or
a value of the wrong type is an error that lists the valid names and suggests the closest one, also inside
nested configs (``type_filter`` → ``features.type_filter``), at config time, never a silent default at run time.
Names, help and parsing are those of every typed config (:mod:`sparqlab.core.config`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from sparqlab.core.config import TypedConfig

CALL_PARAMETERS = ("temperature", "top_p", "max_tokens", "stop", "reasoning_effort")
"""Request parameters a method config may set per call kind as ``{kind}_<param>`` fields."""


@dataclass(frozen=True)
class MethodConfig(TypedConfig):
    """Base class of method configs. Subclasses are ``@dataclass(frozen=True)`` with a typed default per field and
    a line per field in the class docstring (what it changes and the paper definition it follows).

    Field types understood by the validators (:mod:`sparqlab.core.typed`): ``bool``, ``int``, ``float``, ``str``,
    ``tuple[X, ...]``, ``dict[str, X]``, ``Literal[...]``, ``X | None`` and nested ``MethodConfig`` subclasses (a
    component such as a gate's settings or SAGA's features), whose fields are set as ``component.field``.
    """

    call_kinds: ClassVar[tuple[str, ...]] = ()
    """The model call kinds of the method (``ctx.chat(kind=...)``); each has a ``{kind}_max_tokens`` and a
    ``{kind}_reasoning_effort`` field (budgets per call kind, no hard-coded ``max_tokens``)."""

    def call_params(self, kind: str) -> dict[str, Any]:
        """The method's default request parameters for one call kind: the ``{kind}_<param>`` fields of
        :data:`CALL_PARAMETERS` that are set. They are defaults: an explicit user setting (the run's sampling
        parameters, a role's ``params``) wins over them (:meth:`sparqlab.platform.QuestionContext.chat`)."""
        values: dict[str, Any] = {}
        for param in CALL_PARAMETERS:
            value = getattr(self, f"{kind}_{param}", None)
            if value is not None:
                values[param] = list(value) if isinstance(value, tuple) else value
        return values
