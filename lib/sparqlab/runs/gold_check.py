"""Whether two runs scored the same questions against the same gold: a paired comparison of runs whose gold
answers differ for a question (the KG was edited between them, another gold snapshot, another dataset file)
compares two different questions under one id, so it is refused for those questions and said why.

The why comes from each run's identity in ``config.json`` (:mod:`sparqlab.runs.config`): the KG's content
(``kg``: a bundled store's build hash, an RDF file's content digest, an endpoint's URL) and the gold snapshot's
digest; and from the records: a question whose gold query differs came from another dataset file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparqlab.runs.store import CONFIG, read_document

CAUSES = {"kg": "KG content", "gold_snapshot": "gold snapshot"}
"""Identity fields that can change a question's gold answers, with the words a warning uses for them."""


def run_identity(run_dir: str | Path) -> dict[str, Any]:
    """The identity fields of :data:`CAUSES` of a run (``None`` where its ``config.json`` has none)."""
    identity = read_document(Path(run_dir) / CONFIG).get("identity") or {}
    return {key: identity.get(key) for key in CAUSES}


@dataclass
class GoldAgreement:
    """Paired question ids whose gold answers agree (``same``) or differ (``differ``) between two runs, and the
    identity fields that differ between the runs (``causes``, e.g. ``KG content (file:ab… vs file:cd…)``)."""

    same: list[str]
    differ: list[str]
    causes: list[str] = field(default_factory=list)

    def warning(self) -> str | None:
        """One line saying how many paired questions differ in gold and why; ``None`` when none does."""
        if not self.differ:
            return None
        why = "; ".join(self.causes) or "no identity field differs (gold answers were recomputed differently)"
        return (f"gold answers differ for {len(self.differ)} of {len(self.same) + len(self.differ)} paired "
                f"questions (e.g. {self.differ[0]!r}), left out of the paired comparison; why: {why}")

    def comparable(self, records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        """``records`` without the questions whose gold differs: what a paired comparison may use."""
        differ = set(self.differ)
        return [r for r in records if str(r["id"]) not in differ]


def _gold(record: Mapping[str, Any]) -> frozenset[str] | None:
    answers = record.get("gold_answers")
    return None if answers is None else frozenset(map(str, answers))


def gold_agreement(a: Iterable[Mapping[str, Any]], b: Iterable[Mapping[str, Any]],
                   identities: tuple[Mapping[str, Any], Mapping[str, Any]] = ({}, {})) -> GoldAgreement:
    """Compare the gold answers of two runs' records question by question (ids in both runs); ``identities``:
    each run's :func:`run_identity`."""
    left = {str(r["id"]): r for r in a}
    right = {str(r["id"]): r for r in b}
    common = [key for key in left if key in right]
    differ = [key for key in common if _gold(left[key]) != _gold(right[key])]
    differing = set(differ)
    causes = [f"{words} ({identities[0].get(key)} vs {identities[1].get(key)})" for key, words in CAUSES.items()
              if identities[0].get(key) != identities[1].get(key)]
    edited = [key for key in differ if left[key].get("gold_sparql") != right[key].get("gold_sparql")]
    if edited:
        causes.append(f"dataset file (the gold query of {len(edited)} of them differs, e.g. {edited[0]!r})")
    return GoldAgreement([key for key in common if key not in differing], differ, causes if differ else [])
