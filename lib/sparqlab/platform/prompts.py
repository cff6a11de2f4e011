"""Prompt templates kept as data: a method's prompts are one module-level table of :class:`PromptTemplate`.

A template has named ``{field}`` placeholders only; rendering with a missing or an unused field is an error, so a
renamed placeholder cannot silently drop part of a prompt. Its :attr:`PromptTemplate.digest` goes into the run's
``config.json`` and run id, so editing a prompt starts a new run. Literal braces are written ``{{`` and ``}}``.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class PromptTemplate:
    """A named prompt text with ``{field}`` placeholders (no positional or attribute/index placeholders)."""

    name: str
    text: str
    fields: frozenset[str] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        names = set()
        for _, name, _, _ in string.Formatter().parse(self.text):
            if name is None:
                continue
            if not name.isidentifier():
                raise ValueError(f"prompt {self.name!r}: placeholder {{{name}}} must be a plain name "
                                 "(write literal braces as {{ and }})")
            names.add(name)
        object.__setattr__(self, "fields", frozenset(names))

    @property
    def digest(self) -> str:
        """Stable sha256 prefix of the text: what a run id hashes for this prompt."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]

    def render(self, **values: str) -> str:
        """The text with every placeholder filled; a missing or an unused value is a ``ValueError``."""
        missing = sorted(self.fields - set(values))
        unused = sorted(set(values) - self.fields)
        if missing or unused:
            parts = ([f"missing {', '.join(missing)}"] if missing else []) + \
                    ([f"unused {', '.join(unused)}"] if unused else [])
            raise ValueError(f"prompt {self.name!r}: {'; '.join(parts)} (fields: {', '.join(sorted(self.fields))})")
        return self.text.format(**values)


def prompt_table(*templates: PromptTemplate) -> dict[str, PromptTemplate]:
    """A method's prompt table keyed by template name (names must be unique)."""
    table: dict[str, PromptTemplate] = {}
    for template in templates:
        if template.name in table:
            raise ValueError(f"two prompts named {template.name!r}")
        table[template.name] = template
    return table


def digests(prompts: Mapping[str, PromptTemplate]) -> dict[str, str]:
    """Name → digest of every template in a table, sorted by name."""
    return {name: prompts[name].digest for name in sorted(prompts)}
