"""KG execution feedback on an initial query: does it parse, does it execute, is the result empty, how big is it.

The GGC paper (section 4.3, "Effect of KG execution feedback", Table 5b) compares gates and correctors with and
without this signal. The same :class:`KGFeedback` object feeds the gate (as numbers, :meth:`KGFeedback.vector`,
and as text for text-only encoders) and the corrector prompt (:meth:`KGFeedback.describe`), and it is computed by
one function at inference time and when training data is built, so the two never drift apart.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from sparqlab.kg.errors import KGError
from sparqlab.kg.results import QueryResult

FEATURES = ("parse_error", "execution_error", "empty", "log_rows", "truncated")
"""Names of :meth:`KGFeedback.vector`'s entries, in order."""

ROW_SCALE = math.log1p(10_000)
"""``log_rows`` is ``log1p(rows) / ROW_SCALE`` (10,000 is the KG layer's default row cap), so it lies in [0, 1]."""


@dataclass(frozen=True)
class KGFeedback:
    """What executing a query told us. ``error`` is the ``KGError.kind`` (``None`` when it ran); ``rows`` the
    number of result rows (an ASK result counts as one row)."""

    error: str | None
    rows: int = 0
    truncated: bool = False

    @classmethod
    def from_outcome(cls, outcome: QueryResult | KGError) -> KGFeedback:
        """From what :meth:`sparqlab.methods.QuestionContext.query` returns (a result or a KG error)."""
        if isinstance(outcome, KGError):
            return cls(outcome.kind)
        return cls(None, len(outcome), bool(outcome.truncated))

    @property
    def parses(self) -> bool:
        return self.error != "syntax_error"

    @property
    def executes(self) -> bool:
        return self.error is None

    def vector(self) -> list[float]:
        """The numeric gate features, named by :data:`FEATURES`."""
        return [float(not self.parses), float(self.parses and not self.executes),
                float(self.executes and self.rows == 0), math.log1p(self.rows) / ROW_SCALE, float(self.truncated)]

    def describe(self) -> str:
        """One line for a prompt or a text-only gate."""
        if not self.parses:
            return "the query does not parse (syntax error)"
        if not self.executes:
            return f"the query parses but the knowledge graph could not execute it ({self.error})"
        if self.rows == 0:
            return "the query executes but returns no results"
        more = " (cut at the row limit)" if self.truncated else ""
        return f"the query executes and returns {self.rows} result row{'s' if self.rows != 1 else ''}{more}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> KGFeedback:
        return cls(data.get("error"), int(data.get("rows", 0)), bool(data.get("truncated", False)))


def feedback_for(kg: Any, sparql: str) -> KGFeedback:
    """Execute ``sparql`` on ``kg`` (blocking, through :meth:`KnowledgeGraph.query`) and describe the outcome;
    used where no question context exists (building training data from run folders)."""
    try:
        return KGFeedback.from_outcome(kg.query(sparql))
    except KGError as error:
        return KGFeedback.from_outcome(error)
