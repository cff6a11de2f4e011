"""The one split of a training split into the generator's questions and the gate's (and corrector's) questions.

GGC §4.1: "We use a portion of the training data to fine-tune the Generator … Then, the trained Generator is used
to generate initial queries on the remaining training data, and training samples for the Gate and Corrector are
constructed accordingly." :func:`training_split` is that split, and every path that trains or labels uses it:
``GGC.prepare`` (the gate's questions), ``sparqlab train data --builder ggc-generator`` (the generator's SFT
records), ``sparqlab train gate`` and :func:`sparqlab.experiments.ggc.gate_from_generator_run` (the notebooks),
:func:`sparqlab.experiments.train.composition_experiment` (notebook 09) and, through ``GGC.prepare``, the sweeps.

The generator's portion is a seeded draw of ``generator_share`` of the questions (rounded up; ``split_seed``), the
gate's portion the rest, each kept in file order: a training file sorted by template (as a researcher's often is)
gives both portions every template, where a head/tail cut would give each its own templates. ``train_limit`` gate
questions are the first ones of the gate's portion, and the GGC stand-ins, which remember the generator's portion
by default (:mod:`.standins`), never remember a question the gate is labelled on. The seed is a GGC setting, so it
is in the run id and in the trained gate's artifact key.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sparqlab.core.hashing import id_set_record
from sparqlab.data.question import Question
from sparqlab.train.records import read_records

GENERATOR_SHARE = 0.5
"""The default share of the training split kept for the generator (the paper does not give its portion)."""

SPLIT_SEED = 0
"""The default seed of the draw of the generator's portion."""


def check_generator_share(generator_share: float) -> None:
    """A share of the split for the generator leaves the gate at least one question: ``[0, 1)``."""
    if not 0 <= generator_share < 1:
        raise ValueError(f"generator_share must lie in [0, 1) (0: the generator was not trained on this split); "
                         f"got {generator_share}")


def generator_size(n_questions: int, generator_share: float = GENERATOR_SHARE) -> int:
    """How many of ``n_questions`` are the generator's: ``generator_share`` of them, rounded up."""
    check_generator_share(generator_share)
    return math.ceil(round(generator_share * n_questions, 9))


@dataclass(frozen=True)
class TrainingSplit:
    """``generator``: the questions the generator is fine-tuned on; ``gate``: the remaining questions, on which
    the generator's initial queries are labelled for the gate and the corrector."""

    generator: list[Question]
    gate: list[Question]
    generator_share: float
    seed: int = SPLIT_SEED

    def record(self, gate_questions: Sequence[Question] | None = None) -> dict[str, Any]:
        """What a training record keeps of the split: its parameters, and count + digest of the generator's
        portion and of the gate questions used (``gate_questions``, default the whole gate portion)."""
        gate = self.gate if gate_questions is None else gate_questions
        return {"rule": "GGC §4.1: the generator's generator_share drawn with seed, the rest the gate's",
                "generator_share": self.generator_share, "seed": self.seed,
                "generator": id_set_record(q.id for q in self.generator),
                "gate": id_set_record(q.id for q in gate)}


def training_split(questions: Sequence[Question], generator_share: float = GENERATOR_SHARE,
                   seed: int = SPLIT_SEED) -> TrainingSplit:
    """The split of the module docstring over ``questions`` (a whole training split, in its order)."""
    drawn = set(random.Random(seed).sample(range(len(questions)), generator_size(len(questions), generator_share)))
    return TrainingSplit([q for i, q in enumerate(questions) if i in drawn],
                         [q for i, q in enumerate(questions) if i not in drawn], generator_share, seed)


def generator_questions(questions: Sequence[Question], generator_share: float = GENERATOR_SHARE,
                        split_seed: int = SPLIT_SEED) -> list[Question]:
    """The generator's portion of ``questions`` (the ``ggc-generator`` training-data builder's questions)."""
    return training_split(questions, generator_share, split_seed).generator


def gate_questions(questions: Sequence[Question], limit: int | None, generator_share: float = GENERATOR_SHARE,
                   generator_data: str | Path | None = None, allow_overlap: bool = False, seed: int = SPLIT_SEED
                   ) -> tuple[list[Question], TrainingSplit]:
    """The first ``limit`` questions of the gate's portion (``None``: all) and the split (``seed``: its draw's).
    ``generator_data``:
    the generator's actual training file (records with an ``id``); a gate question in it is refused with an error
    naming ``allow_overlap`` unless that is set. ``ValueError`` when no gate question is left."""
    split = training_split(questions, generator_share, seed)
    chosen = split.gate[:limit]
    if not chosen:
        raise ValueError(f"no training questions left for the gate: generator_share={generator_share} leaves "
                         f"{len(split.gate)} of {len(questions)}")
    if generator_data and not allow_overlap:
        trained_on = trained_ids(generator_data)
        shared = [q.id for q in chosen if str(q.id) in trained_on]
        if shared:
            raise ValueError(f"{len(shared)} of the {len(chosen)} gate questions (e.g. {shared[0]!r}) are in the "
                             f"generator's training data {generator_data}: GGC §4.1 labels the gate on the remaining "
                             "training questions; build the generator's data with the same generator_share "
                             "and split_seed (`sparqlab train data --builder ggc-generator`), or set "
                             "allow_overlap=true to label them anyway")
    return chosen, split


def trained_ids(generator_data: str | Path) -> set[str]:
    """The question ids of the generator's training file; ``ValueError`` when it has none (disjointness from it
    could not be checked)."""
    trained_on = {str(r.get("id")) for r in read_records(generator_data) if r.get("id") is not None}
    if not trained_on:
        raise ValueError(f"{generator_data} has no record ids, so disjointness from it cannot be checked")
    return trained_on
