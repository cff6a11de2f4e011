"""``sparqlab train gate``: the GGC gate (paper, section 3.4; RoBERTa in its Table 4) fine-tuned on labelled
(question, initial query) pairs and reported on a held-out validation slice by precision, recall, F1 and FPR with
"correction required" as the positive class, the paper's Table 4 columns.

Training itself is the GGC package's gate (:meth:`sparqlab.methods.ggc.gate.Gate.train`, ``encoder`` backend: any local
Hugging Face encoder folder fine-tuned as a sentence-pair classifier, appendix A.2 hyper-parameters), so a gate
trained here is the very artifact ``ggc`` runs load (``-o gate_path=OUT/gate``). This module adds the stratified
validation split, the metrics at threshold τ (:func:`sparqlab.methods.ggc.gate.decide`, ``P ≥ τ``) and the
``training.json`` (settings, data sha256, split sizes, metrics) beside the gate folder.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sparqlab.core.hashing import file_digest
from sparqlab.train.records import RecordError

GATE_DIR = "gate"


def read_gate_examples(path: str | Path) -> list[Any]:
    """Gate examples from a JSONL file of ``{"question", "sparql", "label", "id"?}`` (``sparqlab train data
    --builder ggc-gate``); label 1 means the initial query is wrong."""
    from sparqlab.methods.ggc.gate import GateExample

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"gate data {path} does not exist (write it with `sparqlab train data --builder "
                                "ggc-gate`)")
    examples = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise RecordError(f"{path}:{number}: not JSON ({error.msg})") from None
        if (not isinstance(row, dict) or not isinstance(row.get("question"), str)
                or not isinstance(row.get("sparql"), str) or row.get("label") not in (0, 1)):
            raise RecordError(f"{path}:{number}: a gate example needs string 'question' and 'sparql' and a 0/1 "
                              "'label'")
        examples.append(GateExample(row["question"], row["sparql"], row["label"], None, str(row.get("id", ""))))
    if not examples:
        raise RecordError(f"{path} holds no gate examples")
    return examples


def stratified_split(examples: Sequence[Any], fraction: float, seed: int) -> tuple[list[Any], list[Any]]:
    """(train, validation): a seeded ``fraction`` of each label class held out (at least one of a class with two
    or more examples, so both classes reach the metrics when they can)."""
    if not 0 < fraction < 1:
        raise ValueError(f"the validation fraction must be in (0, 1); got {fraction}")
    rng = random.Random(seed)
    train, held = [], []
    for label in (0, 1):
        members = [e for e in examples if e.label == label]
        rng.shuffle(members)
        n = min(max(round(fraction * len(members)), 1 if len(members) >= 2 else 0), max(len(members) - 1, 0))
        held += members[:n]
        train += members[n:]
    return train, held


def train_gate(examples: Sequence[Any], settings: Any, out: str | Path, *, val_fraction: float = 0.2,
               validation_threshold: float = 0.5, seed: int = 42, data_file: str | Path | None = None,
               sources: Sequence[str] = (), kg_feedback: bool = False,
               data_split: dict[str, Any] | None = None) -> dict[str, Any]:
    """Train a gate (``settings``: :class:`sparqlab.methods.ggc.gate.GateSettings`) on a stratified split of ``examples``,
    save it to ``out/gate`` and return (and write to ``out/training.json``) the summary with the validation
    metrics at ``validation_threshold`` (the τ of the validation report, not a run's gate threshold). ``data_file``: the examples' file, whose sha256 is recorded; ``sources``: run
    folders the examples came from; ``kg_feedback``: the gate reads the examples' KG feedback; ``data_split``: the
    GGC §4.1 split the examples' questions came from (:meth:`~sparqlab.methods.ggc.split.TrainingSplit.record`),
    kept in the summary and the gate's ``training``."""
    from sparqlab.methods.ggc.gate import Gate, decide
    from sparqlab.methods.ggc.metrics import gate_metrics

    started = time.monotonic()
    train, held = stratified_split(examples, val_fraction, seed)
    gate = Gate.train(train, settings, sources, kg_feedback=kg_feedback)
    if data_split is not None:
        gate.training["data_split"] = data_split
    probabilities = gate.probabilities(held)
    metrics = gate_metrics([e.label for e in held], [decide(p, validation_threshold) for p in probabilities])
    out = Path(out)
    digest = gate.save(out / GATE_DIR)
    summary = {"settings": settings.to_dict(), "kg_feedback": kg_feedback,
               "validation_threshold": validation_threshold, "val_fraction": val_fraction, "seed": seed,
               "data": {"path": str(data_file) if data_file else None,
                        "sha256": file_digest(data_file) if data_file else None, "examples": len(examples),
                        "train": len(train), "validation": len(held),
                        "train_positive": sum(e.label for e in train),
                        "validation_positive": sum(e.label for e in held)},
               "sources": list(sources), "data_split": data_split, "gate_digest": digest, "validation": metrics,
               "wall_s": round(time.monotonic() - started, 2)}
    (out / "training.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary
