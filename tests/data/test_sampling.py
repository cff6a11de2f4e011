"""Reproducible, stratified question samples (`--sample N --sample-seed S`)."""

import random
from collections import Counter

import pytest

from sparqlab.data.question import Question
from sparqlab.data.sampling import allocate, sample_questions, strata_field


def questions(types: dict[str, int]) -> list[Question]:
    """Questions sorted by type, as benchmark files often are."""
    return [Question(id=f"{t}-{i}", text=f"q {t} {i}", metadata={"qtype": t}) for t, k in types.items()
            for i in range(k)]


def test_sample_is_stratified_by_question_type_unlike_the_first_n():
    pool = questions({"a": 600, "b": 300, "c": 100})
    sample = sample_questions(pool, 100, seed=0)
    assert Counter(q.metadata["qtype"] for q in sample) == {"a": 60, "b": 30, "c": 10}
    assert Counter(q.metadata["qtype"] for q in pool[:100]) == {"a": 100}


def test_same_seed_same_sample_other_seed_other_sample_in_file_order():
    pool = questions({"a": 50, "b": 50})
    first, again = sample_questions(pool, 10, seed=3), sample_questions(pool, 10, seed=3)
    assert [q.id for q in first] == [q.id for q in again]
    assert [q.id for q in sample_questions(pool, 10, seed=4)] != [q.id for q in first]
    positions = [pool.index(q) for q in first]
    assert positions == sorted(positions) and len(set(positions)) == 10


def test_small_sample_over_many_types_and_edge_sizes():
    pool = questions({f"t{i}": 5 for i in range(8)})
    assert len(sample_questions(pool, 3, seed=1)) == 3
    assert len({q.metadata["qtype"] for q in sample_questions(pool, 3, seed=1)}) == 3
    assert sample_questions(pool, 0) == []
    assert sample_questions(pool, 1000) == pool
    with pytest.raises(ValueError, match=">= 0"):
        sample_questions(pool, -1)


def test_untyped_questions_get_a_simple_random_sample():
    pool = [Question(id=str(i), text="q") for i in range(30)]
    assert strata_field(pool) is None
    sample = sample_questions(pool, 7, seed=0)
    assert len(sample) == 7 and [q.id for q in sample] != [str(i) for i in range(7)]


def test_allocation_is_proportional_and_exact():
    counts = allocate({"a": 2, "b": 1, "c": 1}, 3, random.Random(0))
    assert sum(counts.values()) == 3 and counts["a"] in (1, 2) and all(v <= 2 for v in counts.values())
    assert allocate({"a": 1, "b": 9}, 100, random.Random(0)) == {"a": 1, "b": 9}
