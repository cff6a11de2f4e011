"""Gold snapshots: the answers of a dataset's gold queries, executed once on one endpoint and kept as a file.

Benchmarks that ship no gold answers (QALD-9-plus, SPINACH, LC-QuAD 2.0 on Wikidata) are scored against what
their gold queries return, and a live endpoint returns something else next month. A snapshot fixes that: per
question the gold query's digest, its normalised answers (under the snapshot's answer-matching rule), a digest of
the raw result, or the gold query's error — with the endpoint and the date it was taken. Runs use a snapshot when
one exists (:func:`find_snapshot`; ``RunConfig.gold_snapshot``) for every question whose gold query it holds
unchanged, and say so in ``metrics.json``; a question whose gold query changed since is executed live. The file
is plain JSON, so it can be shared beside the results it scored.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparqlab.core.environment import setting
from sparqlab.core.files import atomic_write
from sparqlab.core.hashing import stable_hash
from sparqlab.core.paths import data_dir
from sparqlab.data.question import Question
from sparqlab.eval.errors import gold_error_source
from sparqlab.eval.matching import resolve_mode, result_answers
from sparqlab.eval.metrics import check_answers
from sparqlab.kg.errors import KGError

if TYPE_CHECKING:
    from sparqlab.kg.base import KnowledgeGraph

SNAPSHOT_FORMAT = 1
"""The file layout's version (``format`` in the file)."""


def gold_snapshots_dir() -> Path:
    """Where runs look for snapshots: ``SPARQLAB_GOLD_SNAPSHOTS``, else ``data/gold_snapshots`` in the checkout
    (a snapshot placed there travels with the repository)."""
    return Path(setting("SPARQLAB_GOLD_SNAPSHOTS") or data_dir() / "gold_snapshots")


def snapshot_name(dataset: str, split: str | None, kg: str) -> str:
    """``<dataset>.<split>.<kg>.json``; a dataset given as a file is named by its stem."""
    stem = Path(dataset).stem if "/" in dataset or dataset.endswith(".jsonl") else dataset
    return f"{stem}.{split or 'default'}.{kg}.json"


def query_digest(sparql: str) -> str:
    """The digest of a gold query as written (whitespace-normalised)."""
    return stable_hash(" ".join(sparql.split()), 16)


@dataclass
class GoldSnapshot:
    """One dataset split's gold answers as one endpoint returned them.

    ``entries`` maps a question id to ``{"query_digest", "answers", "result_digest", "rows"}`` or, when the gold
    query failed, ``{"query_digest", "error"}`` (``error: <kind>: <message>``, as a run's ``gold_source``)."""

    dataset: str
    split: str | None
    kg: str
    endpoint: str
    answer_match: str
    created: str
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        """The snapshot's identity: a hash of everything it holds (what a run id can record)."""
        return stable_hash({k: v for k, v in asdict(self).items() if k != "created"}, 16)

    def lookup(self, question: Question) -> dict[str, Any] | None:
        """The entry of ``question`` when its gold query is the one the snapshot executed, else ``None``."""
        entry = self.entries.get(question.id)
        if entry is None or not question.gold_sparql or entry["query_digest"] != query_digest(question.gold_sparql):
            return None
        return entry

    def gold_errors(self) -> dict[str, str]:
        """Question id -> why it cannot be judged: its gold query's error, or ``"empty"`` (no answers)."""
        return {qid: entry.get("error") or "empty" for qid, entry in sorted(self.entries.items())
                if entry.get("error") or not entry.get("answers")}

    def describe(self) -> dict[str, Any]:
        """What ``metrics.json`` records about the snapshot a run used."""
        return {"digest": self.digest, "dataset": self.dataset, "split": self.split, "endpoint": self.endpoint,
                "created": self.created, "answer_match": self.answer_match, "questions": len(self.entries),
                "gold_errors": len(self.gold_errors())}

    def to_json(self) -> dict[str, Any]:
        return {"format": SNAPSHOT_FORMAT, "digest": self.digest, **asdict(self)}

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        return atomic_write(path, json.dumps(self.to_json(), indent=1, ensure_ascii=False) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> GoldSnapshot:
        """A snapshot file; a clear error for a file of another format or one whose content no longer matches
        its recorded digest (edited by hand)."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise ValueError(f"cannot read the gold snapshot {path}: {error}") from None
        if data.get("format") != SNAPSHOT_FORMAT:
            raise ValueError(f"{path} is not a gold snapshot of format {SNAPSHOT_FORMAT}")
        snapshot = cls(**{k: data[k] for k in ("dataset", "split", "kg", "endpoint", "answer_match", "created",
                                               "entries")})
        if snapshot.digest != data.get("digest"):
            raise ValueError(f"the gold snapshot {path} was changed after it was taken (its digest no longer "
                             "matches); take it again with `sparqlab data snapshot-gold`")
        check_entries(snapshot.entries, str(path))
        return snapshot


def check_entries(entries: Any, where: str) -> None:
    """Refuse snapshot entries a run could not score as they are (a digest recomputed after an edit does not
    make them right): each is an object with its gold query's digest and either an ``error`` string or an
    ``answers`` list (:func:`~sparqlab.eval.metrics.check_answers`: a bare string would be scored letter by
    letter)."""
    if not isinstance(entries, dict):
        raise ValueError(f"{where}: entries must be an object of question id -> entry, got {type(entries).__name__}")
    for qid, entry in entries.items():
        name = f"{where}: entry {qid!r}"
        if not isinstance(entry, dict) or not isinstance(entry.get("query_digest"), str):
            raise ValueError(f"{name} must be an object with a query_digest string")
        if "error" in entry:
            if not isinstance(entry["error"], str):
                raise ValueError(f"{name}: error must be a string, got {type(entry['error']).__name__}")
        elif check_answers(entry.get("answers"), f"{name}: answers") is None:
            raise ValueError(f"{name} has neither answers nor an error")


def take_snapshot(questions: list[Question], kg: KnowledgeGraph, *, dataset: str, split: str | None,
                  answer_match: str | None = None, workers: int = 4) -> GoldSnapshot:
    """Execute every distinct gold query of ``questions`` (those without shipped gold answers) once on ``kg`` and
    keep the answers under ``answer_match`` (default: the KG's rule). A failing gold query is recorded as a gold
    error; a service that stops answering (:class:`~sparqlab.kg.errors.EndpointUnavailable`) stops the snapshot."""
    mode = resolve_mode(answer_match, kg)
    queries = sorted({q.gold_sparql for q in questions if q.gold_sparql and q.gold_answers is None})

    def execute(sparql: str) -> dict[str, Any]:
        try:
            result = kg.query(sparql)
        except KGError as error:
            return {"error": gold_error_source(error)}
        rows = sorted(json.dumps(row, sort_keys=True) for row in result.to_json().get("results", {}).get(
            "bindings", [])) if result.kind != "ask" else [str(result.boolean)]
        return {"answers": sorted(result_answers(result, kg, mode)), "result_digest": stable_hash(rows, 16),
                "rows": len(result)}

    with ThreadPoolExecutor(max(1, workers), "sparqlab-snapshot") as pool:
        executed = dict(zip(queries, pool.map(execute, queries), strict=True))
    entries = {q.id: {"query_digest": query_digest(q.gold_sparql), **executed[q.gold_sparql]}
               for q in questions if q.gold_sparql in executed}
    return GoldSnapshot(dataset, split, kg.profile.name, kg.identity, mode,
                        datetime.now(UTC).isoformat(timespec="seconds"), entries)


def find_snapshot(dataset: str | None, split: str | None, kg: str) -> Path | None:
    """The snapshot file of ``dataset``/``split`` on ``kg`` in :func:`gold_snapshots_dir`, if there is one."""
    if not dataset:
        return None
    path = gold_snapshots_dir() / snapshot_name(dataset, split, kg)
    return path if path.exists() else None
