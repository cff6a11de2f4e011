"""The seven URI correction strategies of DeSQ (section 3.5 and appendix B), selectable by name.

Each strategy looks at one grounding slot — the predicted id, label and description — and the KB memory, and keeps
the id or replaces it with the best retrieved entry (retrieval by the generated label + description over the whole
memory, as in the paper; ``restrict_kind=True``, our extension, searches only entries of the slot's kind):

* ``none`` — keep every predicted id.
* ``oracle`` — retrieve only where the predicted id differs from the gold id, keep the others (an upper bound:
  perfect detection; needs the gold ids, so it exists for evaluation, not for answering).
* ``always-retrieve`` — replace every id with the retrieved one (our reading of the seventh strategy, which the
  paper counts but does not name or describe: the unconditional retrieval that score-threshold filters).
* ``roundtrip-exact`` — flag an id absent from the memory or whose official label differs from the generated
  label (exact string match); retrieve for flagged ids only.
* ``roundtrip-fuzzy`` — the same detection with word-level Jaccard overlap of the labels ≥ ``jaccard`` (0.5).
* ``score-threshold`` — always retrieve, accept the candidate only if its cosine similarity ≥ ``threshold``
  (0.85), else keep the predicted id.
* ``combined`` — round-trip exact detection, then accept the retrieved candidate only above the threshold.

Slots of a kind the memory does not hold (an entity slot with a property-only memory) are left alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from sparqlab.methods.desq.fragments import Slot
from sparqlab.methods.desq.kb_memory import Hit, KBMemory, entry_text

STRATEGIES = ("none", "oracle", "always-retrieve", "roundtrip-exact", "roundtrip-fuzzy", "score-threshold",
              "combined")
DEFAULT_THRESHOLD = 0.85
"""The paper's score-threshold cut (appendix B), a cosine of BGE-Large."""
DEFAULT_JACCARD = 0.5
BGE_UNRELATED = 0.6
"""Where BGE's cosines of unrelated texts lie: "the similarity distribution of the current BGE model is about in
the interval [0.6, 1]" (the BGE model card's FAQ)."""
def unrelated_cosine(vectors: np.ndarray, pairs: int = 20_000, seed: int = 0) -> float:
    """The median cosine of ``pairs`` random pairs of distinct memory rows (unit vectors): where an embedder puts
    texts that have nothing to do with each other."""
    rng = np.random.default_rng(seed)
    left, right = rng.integers(0, len(vectors), pairs), rng.integers(0, len(vectors), pairs)
    keep = left != right
    return float(np.median(np.sum(vectors[left[keep]] * vectors[right[keep]], axis=1)))


def cut_equivalent(unrelated: float, cut: float = DEFAULT_THRESHOLD, reference: float = BGE_UNRELATED) -> float:
    """``cut`` (a BGE cosine) moved to an embedder and memory whose unrelated texts score ``unrelated``
    (:func:`unrelated_cosine`): the point as far from that level towards 1 (an identical text) as ``cut`` lies above
    BGE's level (0.85 is 62.5 % of the way from 0.6 to 1). A memory whose unrelated pairs score 0.6, as BGE's do,
    gets the paper's 0.85 back. What a run uses when no threshold is given."""
    return unrelated + (cut - reference) / (1 - reference) * (1 - unrelated)


def check_strategy(name: str) -> str:
    if name not in STRATEGIES:
        raise ValueError(f"unknown URI correction strategy {name!r}; choose one of {', '.join(STRATEGIES)}")
    return name


def word_jaccard(a: str, b: str) -> float:
    """Word-level Jaccard overlap of two labels (lower-cased whitespace words; 1.0 for two empty labels)."""
    left, right = set(str(a).lower().split()), set(str(b).lower().split())
    if not left and not right:
        return 1.0
    return len(left & right) / len(left | right)


@dataclass(frozen=True)
class Correction:
    """What a strategy did to one slot: ``flagged`` (detected as wrong, or always-retrieve), the retrieved
    candidate and its score (``None`` if no retrieval), and the id it ends with."""

    placeholder: str
    predicted_id: str
    final_id: str
    flagged: bool
    retrieved_id: str | None = None
    score: float | None = None
    covered: bool = True

    @property
    def changed(self) -> bool:
        return self.final_id != self.predicted_id


def roundtrip_flag(slot: Slot, memory: KBMemory, fuzzy: bool, jaccard: float) -> bool:
    """Round-trip detection: the id is absent from the memory, or its official label does not match the
    generated one (exactly, or by word Jaccard ≥ ``jaccard`` when ``fuzzy``)."""
    entry = memory.get(slot.id)
    if entry is None:
        return True
    if fuzzy:
        return word_jaccard(entry.label, slot.label) < jaccard
    return entry.label != slot.label


def correct_slots(slots: Sequence[Slot], memory: KBMemory, strategy: str, *, kinds: Mapping[str, str] | None = None,
                  threshold: float = DEFAULT_THRESHOLD, jaccard: float = DEFAULT_JACCARD,
                  gold_ids: Mapping[str, str] | None = None,
                  retrieve: Callable[[Slot, str | None], Hit | None] | None = None,
                  restrict_kind: bool = False) -> list[Correction]:
    """Apply ``strategy`` to every slot. ``kinds[placeholder]`` is the slot's kind: a kind the memory does not
    hold leaves the slot alone, and with ``restrict_kind`` retrieval searches entries of that kind only;
    ``gold_ids[placeholder]`` is needed by ``oracle`` only; ``retrieve`` may share retrievals between strategies
    (see :class:`Retriever`)."""
    check_strategy(strategy)
    if strategy == "oracle" and gold_ids is None:
        raise ValueError("the oracle strategy needs the gold ids (it is an evaluation upper bound)")
    kinds = kinds or {}
    retrieve = retrieve or Retriever(memory)
    out = []
    for slot in slots:
        kind = kinds.get(slot.placeholder)
        covered = kind is None or kind in memory.kinds
        if strategy == "none" or not covered:
            out.append(Correction(slot.placeholder, slot.id, slot.id, False, covered=covered))
            continue
        if strategy == "oracle":
            flagged = slot.id != gold_ids.get(slot.placeholder)
        elif strategy in ("roundtrip-exact", "combined"):
            flagged = roundtrip_flag(slot, memory, fuzzy=False, jaccard=jaccard)
        elif strategy == "roundtrip-fuzzy":
            flagged = roundtrip_flag(slot, memory, fuzzy=True, jaccard=jaccard)
        else:  # always-retrieve, score-threshold
            flagged = True
        hit = retrieve(slot, kind if restrict_kind else None) if flagged else None
        final = slot.id
        if hit is not None and (strategy not in ("score-threshold", "combined") or hit.score >= threshold):
            final = hit.entry.id
        out.append(Correction(slot.placeholder, slot.id, final, flagged, hit.entry.id if hit else None,
                              hit.score if hit else None))
    return out


class Retriever:
    """Top-1 retrieval by label + description, each distinct (label, description, kind) embedded once, so several
    strategies (or questions) share retrievals; :meth:`prefetch` embeds many slots in batches."""

    def __init__(self, memory: KBMemory):
        self.memory = memory
        self.cache: dict[tuple[str, str, str | None], Hit | None] = {}

    def __call__(self, slot: Slot, kind: str | None) -> Hit | None:
        key = (slot.label, slot.description, kind)
        if key not in self.cache:
            hits = self.memory.search(slot.label, slot.description, kind=kind, k=1)
            self.cache[key] = hits[0] if hits else None
        return self.cache[key]

    def prefetch(self, requests: Sequence[tuple[Slot, str | None]]) -> None:
        todo: dict[tuple[str, str, str | None], Slot] = {}
        for slot, kind in requests:
            if (slot.label, slot.description, kind) not in self.cache:
                todo[(slot.label, slot.description, kind)] = slot
        by_kind: dict[str | None, list[tuple[str, str, str | None]]] = {}
        for key in todo:
            by_kind.setdefault(key[2], []).append(key)
        for kind, keys in by_kind.items():
            vectors = self.memory.encode([entry_text(label, description) for label, description, _ in keys])
            for key, hits in zip(keys, self.memory.search_vectors(np.asarray(vectors), kind, 1), strict=True):
                self.cache[key] = hits[0] if hits else None


def apply(slots: Sequence[Slot], corrections: Sequence[Correction]) -> list[Slot]:
    """The slots with their corrected ids."""
    final = {c.placeholder: c.final_id for c in corrections}
    return [replace(slot, id=final.get(slot.placeholder, slot.id)) for slot in slots]
