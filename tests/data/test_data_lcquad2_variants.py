"""DeSQ's LC-QuAD 2.0 Raw / Ref question sets (Tables 3-7) and the train-raw / test-ref crossings they allow."""

from sparqlab.data.registry import load


def test_raw_and_ref_are_one_question_set_in_two_wordings_with_disjoint_splits():
    raw_test, ref_test = load("lcquad2-raw", split="test"), load("lcquad2-ref", split="test")
    raw_train, ref_train = load("lcquad2-raw", split="train"), load("lcquad2-ref", split="train")
    assert [q.id for q in raw_test] == [q.id for q in ref_test] and len(raw_test) == 904
    assert [q.gold_sparql for q in raw_train] == [q.gold_sparql for q in ref_train] and len(raw_train) == 3612
    assert {q.id for q in raw_train}.isdisjoint(q.id for q in ref_test)  # a train-raw / test-ref crossing
    assert all(r.text != f.text for r, f in zip(raw_test, ref_test, strict=True))
    plain = {q.id: q for q in load("lcquad2")}
    first = ref_test[0]
    assert plain[first.id].text == raw_test[0].text and first.text == plain[first.id].metadata["paraphrases"][0]
    assert all(len(q.text.split()) >= 3 for q in ref_test + ref_train)  # placeholder paraphrases ("n/a") dropped
