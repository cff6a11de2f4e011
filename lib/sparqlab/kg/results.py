"""Backend-independent query results: RDF terms, SELECT/ASK/graph results and search hits.

Both backends produce the same objects, so metrics, caches and tools never see pyoxigraph or SPARQLWrapper
types. Rows follow the SPARQL 1.1 JSON results format, which is also what gets cached and written to disk.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from sparqlab.kg.errors import EndpointError
from sparqlab.kg.vocab import XSD as XSD  # re-exported: the eval layer reads datatypes against it


@dataclass(frozen=True)
class Term:
    """One RDF term as in SPARQL JSON results: ``type`` is ``uri``, ``literal`` or ``bnode``."""

    type: Literal["uri", "literal", "bnode"]
    value: str
    datatype: str | None = None
    lang: str | None = None

    @classmethod
    def from_json(cls, binding: dict[str, Any]) -> Term:
        """From a SPARQL-JSON binding value (``typed-literal`` of older servers is read as ``literal``)."""
        kind = binding["type"]
        if kind == "typed-literal":
            kind = "literal"
        if kind not in ("uri", "literal", "bnode") or not isinstance(binding["value"], str):
            raise ValueError(f"not an RDF term: {binding!r:.200}")
        return cls(kind, binding["value"], binding.get("datatype"), binding.get("xml:lang"))

    def to_json(self) -> dict[str, str]:
        """As a SPARQL-JSON binding value."""
        out = {"type": self.type, "value": self.value}
        if self.datatype:
            out["datatype"] = self.datatype
        if self.lang:
            out["xml:lang"] = self.lang
        return out

    def __str__(self) -> str:
        return self.value


Row = dict[str, Term]


@dataclass
class QueryResult:
    """The result of one query.

    ``kind`` is ``select`` (``vars`` + ``rows``), ``ask`` (``boolean``) or ``graph`` (CONSTRUCT/DESCRIBE:
    ``rows`` with variables ``subject``, ``predicate``, ``object``). ``truncated`` is true when the row cap cut
    the result; ``cached`` when it came from the query cache.
    """

    kind: Literal["select", "ask", "graph"]
    vars: list[str] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    boolean: bool | None = None
    truncated: bool = False
    elapsed_s: float = 0.0
    cached: bool = False

    def __len__(self) -> int:
        return len(self.rows) if self.kind != "ask" else 1

    @property
    def is_empty(self) -> bool:
        """No rows (SELECT/graph). An ASK result is never empty: ``false`` is an answer."""
        return self.kind != "ask" and not self.rows

    def column(self, var: str) -> list[Term]:
        """The bound values of one variable, in row order (unbound cells skipped)."""
        return [row[var] for row in self.rows if var in row]

    def to_observation(self, max_rows: int = 20, labels: dict[str, str] | None = None) -> str:
        """The one compact rendering of a result for a model: a ``|``-separated table with a header, an IRI's
        label beside it when ``labels`` has one, and truncation said explicitly (rows beyond ``max_rows``, and a
        result cut by the KG's row cap). ASK gives ``true`` / ``false``; no rows gives ``(no rows)``."""
        if self.kind == "ask":
            return "true" if self.boolean else "false"
        if not self.rows:
            return "(no rows)"
        labels = labels or {}

        def cell(term: Term | None) -> str:
            if term is None:
                return ""
            text = term.value.replace("\n", " ")
            label = labels.get(term.value) if term.type == "uri" else None
            return f"{label} ({text})" if label and label != text else text

        columns = self.vars or sorted({k for row in self.rows for k in row})
        lines = [" | ".join(f"?{c}" for c in columns)]
        lines += [" | ".join(cell(row.get(c)) for c in columns) for row in self.rows[:max_rows]]
        if len(self.rows) > max_rows:
            lines.append(f"... {len(self.rows) - max_rows} more rows not shown")
        if self.truncated:
            lines.append(f"(result cut at {len(self.rows)} rows by the KG's row cap; more rows exist)")
        return "\n".join(lines)

    def to_frame(self):
        """The rows as a pandas DataFrame of term values (one column per variable; ASK: one ``boolean`` cell),
        for display in notebooks."""
        import pandas as pd

        if self.kind == "ask":
            return pd.DataFrame({"boolean": [self.boolean]})
        return pd.DataFrame([{var: row[var].value if var in row else None for var in self.vars} for row in self.rows],
                            columns=self.vars)

    def to_json(self) -> dict[str, Any]:
        """SPARQL 1.1 JSON results (graph results as s/p/o bindings), plus a ``truncated`` flag."""
        if self.kind == "ask":
            return {"head": {}, "boolean": self.boolean}
        return {
            "head": {"vars": list(self.vars)},
            "results": {"bindings": [{k: t.to_json() for k, t in row.items()} for row in self.rows]},
            "truncated": self.truncated,
            "kind": self.kind,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> QueryResult:
        """Inverse of :meth:`to_json`; also reads plain SPARQL-JSON results from any endpoint. A document of
        another shape raises KeyError, TypeError, AttributeError or ValueError (an ASK's ``"false"``, a string,
        is refused: it is not read as true)."""
        if "boolean" in data:
            if not isinstance(data["boolean"], bool):
                raise ValueError(f"an ASK result's boolean must be true or false, not {data['boolean']!r:.50}")
            return cls("ask", boolean=data["boolean"])
        rows = [{k: Term.from_json(v) for k, v in b.items()} for b in data["results"]["bindings"]]
        return cls(
            data.get("kind", "select"),
            vars=list(data.get("head", {}).get("vars", [])),
            rows=rows,
            truncated=bool(data.get("truncated", False)),
        )


@dataclass
class SearchHit:
    """One match: the KG id (IRI), its label and description, its types (labels, and IRIs in ``type_ids``)."""

    id: str
    label: str
    description: str = ""
    types: list[str] = field(default_factory=list)
    type_ids: list[str] = field(default_factory=list)
    kind: str = "entity"
    score: float = 0.0
    matched: str = ""
    """The name the query matched when it is not ``label`` (an alias, a label in another language)."""

    def to_json(self) -> dict:
        return asdict(self)


def check_bound(source: str, row: Mapping[str, Any], required: tuple[str, ...]) -> None:
    """Refuse a result row of ``source`` (a KG's identity: its endpoint URL or store) that leaves unbound a
    variable its query binds in every row (a broken or impostor endpoint): an :class:`EndpointError` naming the
    KG, not a ``KeyError`` naming only the variable."""
    missing = [name for name in required if name not in row]
    if missing:
        raise EndpointError(f"{source} answered a query with a row that binds no "
                            f"{', '.join('?' + name for name in missing)} (every row must): {dict(row)!r:.200}")
