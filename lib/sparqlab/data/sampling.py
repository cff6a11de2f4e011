"""Reproducible question samples, stratified by question type.

``limit`` keeps the first N questions in file order, and benchmark files are often sorted by type (the first 100
MetaQA 1-hop test questions are all ``actor_to_movie``), so a small smoke run measures one type only.
:func:`sample_questions` draws N questions with a seeded generator instead, allocating them to the question types
in proportion to their sizes, so a small sample covers the types a full run covers.
"""

from __future__ import annotations

import random
from collections import defaultdict

from sparqlab.data.question import Question

STRATA_FIELDS = ("qtype", "question_type", "type")
"""``metadata`` keys naming a question's type, tried in this order; the first every question has is used."""


def strata_field(questions: list[Question]) -> str | None:
    """The metadata key that types every question (see :data:`STRATA_FIELDS`), or ``None``."""
    for key in STRATA_FIELDS:
        if questions and all(key in q.metadata for q in questions):
            return key
    return None


def allocate(sizes: dict[str, int], n: int, rng: random.Random) -> dict[str, int]:
    """How many of ``n`` draws each stratum gets: proportional to its size (largest-remainder rounding).

    Ties in the remainders are broken by ``rng``, so which small stratum gets the last draw depends on the seed
    but not on the strata's order. No stratum gets more than its size; the counts sum to ``min(n, total)``.
    """
    total = sum(sizes.values())
    n = min(n, total)
    exact = {key: n * size / total for key, size in sizes.items()}
    counts = {key: int(value) for key, value in exact.items()}
    keys = sorted(sizes)
    rng.shuffle(keys)
    keys.sort(key=lambda key: exact[key] - counts[key], reverse=True)
    for key in keys[: n - sum(counts.values())]:
        counts[key] += 1
    return counts


def sample_questions(questions: list[Question], n: int, seed: int = 0) -> list[Question]:
    """``n`` questions drawn reproducibly (same list, ``n`` and ``seed`` give the same sample), in file order.

    Stratified by question type when every question has one (:func:`strata_field`), else a simple random
    sample. ``n`` at or above the number of questions keeps them all.
    """
    if n < 0:
        raise ValueError(f"sample size must be >= 0; got {n}")
    if n >= len(questions):
        return list(questions)
    rng = random.Random(f"sparqlab-sample:{seed}")
    key = strata_field(questions)
    strata: dict[str, list[int]] = defaultdict(list)
    for position, question in enumerate(questions):
        strata[str(question.metadata[key]) if key else ""].append(position)
    counts = allocate({name: len(positions) for name, positions in strata.items()}, n, rng)
    chosen: list[int] = []
    for name in sorted(strata):
        chosen += rng.sample(strata[name], counts[name])
    return [questions[position] for position in sorted(chosen)]


def disjoint_from(questions: list[Question], held_out: list[Question]) -> list[Question]:
    """The questions that share nothing with ``held_out``: neither id, text nor any topic entity. Training records
    drawn from the rest of a split whose sample is scored (MetaQA ships only its test split) so the model never
    sees an evaluated question or an evaluated question's entity."""
    ids = {q.id for q in held_out}
    texts = {q.text.strip().casefold() for q in held_out}
    entities = {e.casefold() for q in held_out for e in q.topic_entities}
    return [q for q in questions if q.id not in ids and q.text.strip().casefold() not in texts
            and not entities.intersection(e.casefold() for e in q.topic_entities)]
