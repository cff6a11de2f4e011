"""The documented rewrite for an engine gap: casts to XSD's derived integer types, which oxigraph lacks.

SPARQL 1.1 (section 17.5) requires casts to the XSD core types only; ``xsd:int(...)``, ``xsd:long(...)``,
``xsd:short(...)`` and ``xsd:byte(...)`` are optional, and oxigraph answers them with "The custom function
<…#int> is not supported" (:class:`sparqlab.kg.errors.UnsupportedFunction`). CK25's reference queries use
``xsd:int(?x)`` to truncate averages and prices, and so do LLM-written queries.

:func:`rewrite_casts` replaces each such cast by ``xsd:integer(...)``, the core cast they are restrictions of: for
every value inside the narrower type's range both give the same integer (truncation towards zero of a decimal,
the integer of a numeric string); outside it the derived cast is an error and ``xsd:integer`` still answers. The
rewrite is an option, never applied silently: callers record the rewritten query next to the original.
"""

from __future__ import annotations

import re

from sparqlab.sparql.tree import XSD

DERIVED_INTEGER_CASTS = ("int", "long", "short", "byte")
"""Local names of the XSD types whose casts oxigraph does not implement and :func:`rewrite_casts` replaces."""

REWRITE_HINT = ("Casts to xsd:int/long/short/byte are not supported by this engine: use xsd:integer(...) "
                "(sparqlab.sparql.rewrite.rewrite_casts, `--rewrite-casts`)")

_OPAQUE = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\''
                     r'|<[^<>"{}|^`\\\s]*>|#[^\n]*')
"""What the rewrite must not look into: string literals, IRIs (a ``#`` in them is no comment) and comments."""


def _xsd_prefixes(sparql: str, prefixes: dict[str, str] | None) -> set[str]:
    declared = {m.group(1) for m in re.finditer(r"(?i)PREFIX\s+([A-Za-z][\w.-]*|)\s*:\s*<([^>]*)>", sparql)
                if m.group(2) == XSD}
    overridden = {m.group(1) for m in re.finditer(r"(?i)PREFIX\s+([A-Za-z][\w.-]*|)\s*:\s*<([^>]*)>", sparql)
                  if m.group(2) != XSD}
    predefined = {name for name, iri in (prefixes or {}).items() if iri == XSD and name not in overridden}
    return declared | predefined


def rewrite_casts(sparql: str, prefixes: dict[str, str] | None = None) -> tuple[str, list[str]]:
    """``sparql`` with every derived-integer cast (``xsd:int(`` or ``<…XMLSchema#int>(``, with any prefix bound
    to XSD in the query or in ``prefixes``) turned into an ``xsd:integer`` cast, and the list of what was
    replaced (empty: the query is returned unchanged). Strings and comments are left alone."""
    names = "|".join(DERIVED_INTEGER_CASTS)
    prefixed = "|".join(re.escape(f"{prefix}:") for prefix in sorted(_xsd_prefixes(sparql, prefixes)))
    pattern = re.compile(rf"(?<![\w:.-])(?:{prefixed})({names})(?=\s*\()") if prefixed else None
    cast_iris = {f"<{XSD}{name}>" for name in DERIVED_INTEGER_CASTS}
    changes: list[str] = []

    def replace(match: re.Match) -> str:
        changes.append(match.group(0))
        return f"<{XSD}integer>"

    def rewrite_code(code: str) -> str:
        return pattern.sub(replace, code) if pattern else code

    pieces, last = [], 0
    for token in _OPAQUE.finditer(sparql):
        pieces.append(rewrite_code(sparql[last:token.start()]))
        text = token.group(0)
        if text in cast_iris and sparql[token.end():].lstrip().startswith("("):
            changes.append(text)
            text = f"<{XSD}integer>"
        pieces.append(text)
        last = token.end()
    pieces.append(rewrite_code(sparql[last:]))
    return "".join(pieces), changes
