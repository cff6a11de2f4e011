"""The seven URI correction strategies on constructed cases (deterministic bag-of-words memory)."""

import pytest

from sparqlab.methods.desq.correction import STRATEGIES, Retriever, apply, correct_slots, word_jaccard
from sparqlab.methods.desq.fragments import Slot

KINDS = {"uri1": "entity", "uri2": "property", "uri3": "entity"}


def final_ids(slots, memory, strategy, **options):
    corrections = correct_slots(slots, memory, strategy, kinds=KINDS, **options)
    return {c.placeholder: c.final_id for c in corrections}, corrections


def test_all_seven_strategies_are_selectable_by_name(movie_memory):
    assert STRATEGIES == ("none", "oracle", "always-retrieve", "roundtrip-exact", "roundtrip-fuzzy",
                          "score-threshold", "combined")
    with pytest.raises(ValueError, match="choose one of none, oracle"):
        correct_slots([], movie_memory, "round-trip")
    with pytest.raises(ValueError, match="gold ids"):
        correct_slots([], movie_memory, "oracle")


def test_round_trip_fixes_an_absent_id_and_keeps_a_correct_one(movie_memory):
    slots = [Slot("uri1", "entity/Person/Ridley_Scott", "Ridley Scott", "director of films"),
             Slot("uri2", "relation/directed_by", "directed_by", "a director of the film")]
    for strategy in ("roundtrip-exact", "roundtrip-fuzzy", "always-retrieve"):
        ids, corrections = final_ids(slots, movie_memory, strategy)
        assert ids == {"uri1": "entity/Person/Ridley%20Scott", "uri2": "relation/directed_by"}, strategy
        assert corrections[0].changed and not corrections[1].changed
    ids, corrections = final_ids(slots, movie_memory, "none")
    assert ids["uri1"] == "entity/Person/Ridley_Scott" and not any(c.flagged for c in corrections)


def test_round_trip_flags_a_label_mismatch_exactly_or_by_word_jaccard(movie_memory):
    # a real id, but the generated label names someone else: exact and fuzzy both flag and retrieve
    wrong = Slot("uri1", "entity/Person/Tony%20Scott", "Ridley Scott", "director of 12 films Alien Gladiator")
    assert final_ids([wrong], movie_memory, "roundtrip-exact")[0]["uri1"] == "entity/Person/Ridley%20Scott"
    # Jaccard("Tony Scott", "Ridley Scott") = 1/3: flagged below 0.5, kept with a looser cut of 0.3
    assert final_ids([wrong], movie_memory, "roundtrip-fuzzy", jaccard=0.5)[0]["uri1"] == \
        "entity/Person/Ridley%20Scott"
    assert final_ids([wrong], movie_memory, "roundtrip-fuzzy", jaccard=0.3)[0]["uri1"] == \
        "entity/Person/Tony%20Scott"
    # a paraphrased label of the right id: exact flags it, fuzzy (Jaccard 2/3 >= 0.5) keeps it untouched
    paraphrase = Slot("uri1", "entity/Person/Ridley%20Scott", "director Ridley Scott", "someone")
    exact = correct_slots([paraphrase], movie_memory, "roundtrip-exact", kinds=KINDS)[0]
    fuzzy = correct_slots([paraphrase], movie_memory, "roundtrip-fuzzy", kinds=KINDS)[0]
    assert exact.flagged and exact.retrieved_id is not None
    assert not fuzzy.flagged and fuzzy.final_id == paraphrase.id
    assert word_jaccard("director Ridley Scott", "Ridley Scott") == pytest.approx(2 / 3)


def test_a_homonym_behind_a_correct_label_only_retrieval_can_fix(movie_memory):
    # the tag "Wind" was meant, the film "Wind" predicted: its label matches, so round trip keeps it
    homonym = Slot("uri3", "entity/Film/Wind", "Wind", "tag on films (Twister)")
    assert final_ids([homonym], movie_memory, "roundtrip-exact")[0]["uri3"] == "entity/Film/Wind"
    assert final_ids([homonym], movie_memory, "always-retrieve")[0]["uri3"] == "entity/Tag/Wind"
    gold = {"uri3": "entity/Tag/Wind"}
    assert final_ids([homonym], movie_memory, "oracle", gold_ids=gold)[0]["uri3"] == "entity/Tag/Wind"
    correct = Slot("uri3", "entity/Tag/Wind", "Wind", "a film")
    # always-retrieve breaks a correct id whose description points elsewhere; oracle never touches it
    assert final_ids([correct], movie_memory, "always-retrieve")[0]["uri3"] == "class/Film"  # whole memory (paper)
    assert final_ids([correct], movie_memory, "always-retrieve", restrict_kind=True)[0]["uri3"] == "entity/Film/Wind"
    assert final_ids([correct], movie_memory, "oracle", gold_ids=gold)[0]["uri3"] == "entity/Tag/Wind"


def test_the_threshold_refuses_a_weak_candidate(movie_memory):
    weak = Slot("uri1", "entity/Person/Ridley_Scott", "Ridley Scott", "made some science fiction")
    for strategy in ("score-threshold", "combined"):
        refused, corrections = final_ids([weak], movie_memory, strategy, threshold=0.99)
        assert refused["uri1"] == weak.id and corrections[0].retrieved_id == "entity/Person/Ridley%20Scott"
        assert corrections[0].score < 0.99
        accepted, _ = final_ids([weak], movie_memory, strategy, threshold=0.2)
        assert accepted["uri1"] == "entity/Person/Ridley%20Scott"
    # combined retrieves only for flagged ids: a correct, label-matching id is never looked up
    kept = correct_slots([Slot("uri1", "entity/Tag/Wind", "Wind", "x")], movie_memory, "combined", kinds=KINDS)[0]
    assert not kept.flagged and kept.retrieved_id is None


def test_slots_of_a_kind_the_memory_lacks_are_left_alone(movie_memory):
    slot = Slot("uri1", "Q42", "Douglas Adams", "writer")
    correction = correct_slots([slot], movie_memory, "always-retrieve", kinds={"uri1": "lexeme"})[0]
    assert not correction.covered and correction.final_id == "Q42"


def test_retrievals_are_shared_and_applied(movie_memory):
    retrieve = Retriever(movie_memory)
    slots = [Slot("uri2", "relation/has_tag", "has_tags", "a user tag of the film")]
    retrieve.prefetch([(slots[0], "property")])
    assert len(retrieve.cache) == 1
    corrections = correct_slots(slots, movie_memory, "roundtrip-exact", kinds=KINDS, retrieve=retrieve,
                                restrict_kind=True)
    assert apply(slots, corrections) == [Slot("uri2", "relation/has_tags", "has_tags", "a user tag of the film")]
    assert len(retrieve.cache) == 1


def test_round_trip_exact_is_case_sensitive_and_fuzzy_is_not(movie_memory):
    """The paper's Round-trip compares the official label with the generated one exactly: a label differing only
    in case is flagged (and retrieved) under roundtrip-exact and under ``combined``'s detection step, while the
    word-Jaccard variant lower-cases and keeps it."""
    cased = Slot("uri1", "entity/Person/Ridley%20Scott", "ridley scott", "director of films")
    exact = correct_slots([cased], movie_memory, "roundtrip-exact", kinds=KINDS)[0]
    assert exact.flagged and exact.retrieved_id is not None
    combined = correct_slots([cased], movie_memory, "combined", kinds=KINDS)[0]
    assert combined.flagged and combined.retrieved_id is not None
    fuzzy = correct_slots([cased], movie_memory, "roundtrip-fuzzy", kinds=KINDS)[0]
    assert not fuzzy.flagged and fuzzy.retrieved_id is None
