"""The one split of a training split into the generator's questions and the gate's (and corrector's) questions.

GGC §4.1: "We use a portion of the training data to fine-tune the Generator … Then, the trained Generator is used
to generate initial queries on the remaining training data, and training samples for the Gate and Corrector are
constructed accordingly." :func:`training_split` is that split, and every path that trains or labels uses it:
``GGC.prepare`` (the gate's questions), ``sparqlab train data --builder ggc-generator`` (the generator's SFT
records), ``sparqlab train gate`` and :func:`sparqlab.experiments.ggc.gate_from_generator_run` (the notebooks),
:func:`sparqlab.experiments.train.composition_experiment` (notebook 09) and, through ``GGC.prepare``, the sweeps.

The gate's portion is the head of the split, the generator's the tail (``generator_share`` of the questions,
rounded up), so ``train_limit`` gate questions are the split's first ones and the GGC stand-ins, which remember
the generator's portion by default (:mod:`.standins`), never remember a question the gate is labelled on.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sparqlab.core.hashing import id_set_record
from sparqlab.data.question import Question

GENERATOR_SHARE = 0.5
"""The default share of the training split kept for the generator (the paper does not give its portion)."""


def check_generator_share(generator_share: float) -> None:
    """A share of the split for the generator leaves the gate at least one question: ``[0, 1)``."""
    if not 0 <= generator_share < 1:
        raise ValueError(f"generator_share must lie in [0, 1) (0: the generator was not trained on this split); "
                         f"got {generator_share}")


def generator_start(n_questions: int, generator_share: float = GENERATOR_SHARE) -> int:
    """Index of the first of ``n_questions`` that belongs to the generator's portion (the gate's end)."""
    check_generator_share(generator_share)
    return n_questions - math.ceil(round(generator_share * n_questions, 9))


@dataclass(frozen=True)
class TrainingSplit:
    """``generator``: the questions the generator is fine-tuned on; ``gate``: the remaining questions, on which
    the generator's initial queries are labelled for the gate and the corrector."""

    generator: list[Question]
    gate: list[Question]
    generator_share: float

    def record(self, gate_questions: Sequence[Question] | None = None) -> dict[str, Any]:
        """What a training record keeps of the split: its parameters, and count + digest of the generator's
        portion and of the gate questions used (``gate_questions``, default the whole gate portion)."""
        gate = self.gate if gate_questions is None else gate_questions
        return {"rule": "GGC §4.1: gate questions first, the generator's generator_share last",
                "generator_share": self.generator_share, "generator": id_set_record(q.id for q in self.generator),
                "gate": id_set_record(q.id for q in gate)}


def training_split(questions: Sequence[Question], generator_share: float = GENERATOR_SHARE) -> TrainingSplit:
    """The split of the module docstring over ``questions`` (a whole training split, in its order)."""
    start = generator_start(len(questions), generator_share)
    return TrainingSplit(list(questions[start:]), list(questions[:start]), generator_share)


def generator_questions(questions: Sequence[Question], generator_share: float = GENERATOR_SHARE) -> list[Question]:
    """The generator's portion of ``questions`` (the ``ggc-generator`` training-data builder's questions)."""
    return training_split(questions, generator_share).generator


def gate_questions(questions: Sequence[Question], limit: int | None, generator_share: float = GENERATOR_SHARE,
                   generator_data: str | Path | None = None, allow_overlap: bool = False
                   ) -> tuple[list[Question], TrainingSplit]:
    """The first ``limit`` questions of the gate's portion (``None``: all) and the split. ``generator_data``:
    the generator's actual training file (records with an ``id``); a gate question in it is refused with an error
    naming ``allow_overlap`` unless that is set. ``ValueError`` when no gate question is left."""
    split = training_split(questions, generator_share)
    chosen = split.gate[:limit]
    if not chosen:
        raise ValueError(f"no training questions left for the gate: generator_share={generator_share} leaves "
                         f"{len(split.gate)} of {len(questions)}")
    if generator_data and not allow_overlap:
        from sparqlab.methods.ggc.training_data import trained_ids

        trained_on = trained_ids(generator_data)
        shared = [q.id for q in chosen if str(q.id) in trained_on]
        if shared:
            raise ValueError(f"{len(shared)} of the {len(chosen)} gate questions (e.g. {shared[0]!r}) are in the "
                             f"generator's training data {generator_data}: GGC §4.1 labels the gate on the remaining "
                             "training questions; build the generator's data with the same generator_share "
                             "(`sparqlab train data --builder ggc-generator --generator-share S`), or set "
                             "allow_overlap=true to label them anyway")
    return chosen, split
