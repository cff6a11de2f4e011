"""A run's gold answers: given with the question, read from the gold snapshot, or from the gold query on the KG.

Each distinct gold query runs once per run (concurrent questions share it); :meth:`GoldAnswers.check` runs them
for the run's questions before any question is answered and lists those that fail or return nothing, so a
researcher's own dataset or KG is fixed before a run scores against nothing.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import Any

from sparqlab.core.errors import InfrastructureError, stop_if_infrastructure
from sparqlab.data.gold_snapshot import GoldSnapshot
from sparqlab.data.question import Question
from sparqlab.eval.errors import gold_error_source
from sparqlab.runs.metrics import SNAPSHOT_ERROR_MARK, SNAPSHOT_SOURCE

SHOWN_GOLD_PROBLEMS = 10
"""At most this many gold problems are listed one by one; the rest are counted."""


class GoldQueriesFailed(ValueError):
    """Gold queries of the run's questions fail or return nothing on the run's KG: found before any question is
    answered, so a researcher's own dataset or KG is fixed before a run scores against nothing."""


def gold_problem(answers: list[str] | None, source: str | None) -> str | None:
    """What is wrong with a gold query's outcome (:meth:`GoldAnswers.of`): the engine's error, or ``no answer``
    for an empty result; ``None`` when it answered."""
    if source and source.startswith("error: "):
        return source.removeprefix("error: ")
    return "no answer" if source in ("gold_sparql", SNAPSHOT_SOURCE) and not answers else None


class GoldAnswers:
    """The gold answers of a run's questions (module docstring): ``execute`` turns a query into sorted,
    normalised answers (blocking, run on ``pool``)."""

    def __init__(self, execute: Callable[[str], list[str]], pool: Executor, snapshot: GoldSnapshot | None):
        self.execute = execute
        self.pool = pool
        self.snapshot = snapshot
        self._queries: dict[str, asyncio.Future[Any]] = {}

    async def of(self, question: Question) -> tuple[list[str] | None, str | None]:
        """Gold answers and where they came from (``given``, ``gold_sparql``, ``gold_snapshot`` or
        ``error: <kind>: <message>``); ``(None, None)`` for a question without gold."""
        if question.gold_answers is not None:
            return list(question.gold_answers), "given"
        if not question.gold_sparql:
            return None, None
        entry = self.snapshot.lookup(question) if self.snapshot else None
        if entry is not None:
            if "error" in entry:
                return None, f"{entry['error']} {SNAPSHOT_ERROR_MARK}"
            return list(entry["answers"]), SNAPSHOT_SOURCE
        future = self._queries.get(question.gold_sparql)
        if future is None:
            future = asyncio.get_running_loop().run_in_executor(self.pool, self.execute, question.gold_sparql)
            self._queries[question.gold_sparql] = future
        try:
            answers = await asyncio.shield(future)
        except InfrastructureError:  # not the gold query's fault: the run stops
            raise
        except Exception as error:  # a broken gold query leaves the question unscored, not the run crashed
            stop_if_infrastructure(error, f"the gold query of question {question.id}")
            return None, gold_error_source(error)
        return answers, "gold_sparql"

    async def check(self, questions: Sequence[Question], kg_name: str, allow_gold_errors: bool) -> None:
        """Run the gold queries of ``questions`` (their answers are kept for scoring; a gold snapshot's entries are
        read instead) and list those that fail or return nothing on the KG, before any question is answered: a
        :class:`GoldQueriesFailed` unless ``allow_gold_errors``, then a note."""
        asked = [q for q in questions if q.gold_answers is None and q.gold_sparql]
        found = await asyncio.gather(*(self.of(q) for q in asked))
        problems = [f"{q.id}: {problem}" for q, (answers, source) in zip(asked, found, strict=True)
                    if (problem := gold_problem(answers, source))]
        if not problems:
            return
        listed = "\n".join(f"  {line}" for line in problems[:SHOWN_GOLD_PROBLEMS])
        more = f"\n  ... and {len(problems) - SHOWN_GOLD_PROBLEMS} more" if len(problems) > SHOWN_GOLD_PROBLEMS else ""
        what = f"{len(problems)} of {len(asked)} gold queries fail or return nothing on {kg_name}:\n{listed}{more}\n"
        if not allow_gold_errors:
            raise GoldQueriesFailed(what + "their questions cannot be scored: fix the dataset or the KG, or pass "
                                    "--allow-gold-errors (RunConfig.allow_gold_errors) to run and count them as "
                                    "gold errors")
        print(f"sparqlab run: note: {what}they count as gold errors (allow_gold_errors)", file=sys.stderr)
