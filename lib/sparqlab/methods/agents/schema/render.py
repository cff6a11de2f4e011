"""SAGA's compact rendering of a property (method section, "Type-Constrained Grounding"):

    label (ID): description domain: type names range: type names

Domain and range are shown where known; empirical evidence is soft and rendered as a hint (``domain: usually
…``) so the controller can tell a declaration from a sample, and trace-local range evidence is added when the
index has no range.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from sparqlab.methods.agents.schema.index import SchemaIndex

RELATION_WORDS = {"instance": "", "subclass": "subclass of ", "either": "instance or subclass of "}
"""How a declaration's P2309 relation is written before its classes ("instance of" is the unmarked case)."""


def _names(classes: Iterable[str], name: Callable[[str], str]) -> str:
    return ", ".join(sorted(name(c) for c in classes))


def render_property(prop: str, schema: SchemaIndex, short_id: str, label: str = "", description: str = "",
                    range_evidence: Iterable[str] = (), class_name: Callable[[str], str] | None = None) -> str:
    """One property as ``label (ID): description domain: … range: …``."""
    entry = schema.get(prop)
    label = label or (entry.label if entry else "") or short_id
    description = description or (entry.description if entry else "")
    name = class_name or schema.label
    text = f"{label} ({short_id})" + (f": {description}" if description else "")
    domain, range_ = schema.domain(prop), schema.range(prop)
    if domain:
        hint = "usually " if schema.domain_source(prop) == "empirical" else RELATION_WORDS[schema.relation(prop)]
        text += f" domain: {hint}{_names(domain, name)}"
    if range_:
        hint = "usually " if schema.range_source(prop) == "empirical" else RELATION_WORDS[schema.relation(prop, "range")]
        text += f" range: {hint}{_names(range_, name)}"
    elif range_evidence:
        text += f" range (seen in results): {_names(range_evidence, name)}"
    return text
