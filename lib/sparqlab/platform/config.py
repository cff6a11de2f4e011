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

RESPONSE_CAP_TOKENS = 2048
"""The default ``max_tokens`` of a call kind whose paper gives no budget of its own: SAGA's Implementation
Details "cap each response at 2,048 tokens" for every system compared, baselines included; the GGC and DeSQ papers
give none, GenOp's leaves decoding parameters to the implementation. Without a budget a server generates to the
end of its context (on llama.cpp up to ~7,600 tokens for one call)."""

REPARSE_MAX_TOKENS = 400
"""The default ``max_tokens`` of a re-parse call: SAGA appendix F.1's budget for rewriting a reply as JSON."""

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
    """The model call kinds of the method (``ctx.chat(kind=...)``); each has a ``{kind}_max_tokens`` field with a
    declared default (sent on the wire; the paper's value where it gives one, else :data:`RESPONSE_CAP_TOKENS`)
    and a ``{kind}_reasoning_effort`` field."""

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
