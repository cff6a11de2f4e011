"""SPINACH's row-level F1: reproduces the released SPINACH scores row by row, plus hand-checked cases."""

from __future__ import annotations

import json
import random
import statistics

import pytest

from sparqlab.core.paths import data_dir
from sparqlab.eval import row_f1
from sparqlab.kg.results import QueryResult, Term

RELEASED = {"qald10_spinach_output_test.json": (387, 0.6954), "qald7_spinach_output_test.json": (45, 0.7462)}


def uri(value: str) -> dict[str, str]:
    return {"type": "uri", "value": value}


def rows(*values: tuple[str, ...], column: str = "x") -> list[dict]:
    """One row per tuple; columns x, x1, x2, ... hold URIs."""
    return [{f"{column}{i or ''}": uri(v) for i, v in enumerate(row)} for row in values]


@pytest.mark.parametrize("name", sorted(RELEASED))
def test_reproduces_every_stored_spinach_f1(name):
    """Under SPINACH's own convention (rule "spinach": ∅ = ∅ a match) every released row re-scores exactly: 387 +
    45 = 432 of 432. None of them has an empty gold answer, so the default rule judges every one the same way."""
    records = json.loads((data_dir() / "predictions" / name).read_text(encoding="utf-8"))
    count, mean = RELEASED[name]
    assert len(records) == count
    ours = [row_f1(r["predicted_answer_tuple"], r["gold_answer_tuple"], rule="spinach") for r in records]
    wrong = [(i, f, r["f1"]) for i, (f, r) in enumerate(zip(ours, records, strict=True)) if abs(f - r["f1"]) > 1e-6]
    assert wrong == []
    assert statistics.fmean(ours) == pytest.approx(mean, abs=5e-5)
    assert [row_f1(r["predicted_answer_tuple"], r["gold_answer_tuple"]) for r in records] == ours


def test_identical_rows_in_any_order_score_one():
    gold = rows(("a",), ("b",), ("c",))
    assert row_f1(list(reversed(gold)), gold) == 1.0


def test_gold_label_and_description_columns_are_not_scored():
    gold = [{"x": uri("a"), "xLabel": {"type": "literal", "value": "A", "xml:lang": "en"},
             "xDescription": {"type": "literal", "value": "the letter"}}]
    assert row_f1([{"item": uri("a")}], gold) == 1.0


def test_partial_row_coverage_counts_as_fraction():
    # gold row has two cells, prediction covers one: S = 0.5, k = 1, F1 = 2*0.5 / (0.5 + 1 + 1 - 1) = 1/1.5
    gold = [{"x": uri("a"), "y": uri("b")}]
    assert row_f1([{"x": uri("a")}], gold) == pytest.approx(1 / 1.5)


def test_extra_and_missing_rows_are_errors():
    # 1 matched row, 2 extra predicted rows: F1 = 2 / (1 + 3 + 1 - 1)
    assert row_f1(rows(("a",), ("b",), ("c",)), rows(("a",))) == pytest.approx(0.5)
    # duplicated gold rows need duplicated predicted rows
    assert row_f1(rows(("a",)), rows(("a",), ("a",))) == pytest.approx(2 / 3)


def test_cells_compare_type_datatype_and_language():
    gold = [{"n": {"type": "literal", "value": "1", "datatype": "http://www.w3.org/2001/XMLSchema#integer"}}]
    assert row_f1([{"n": {"type": "literal", "value": "1"}}], gold) == 0.0
    assert row_f1([{"n": {"type": "typed-literal", "value": "1",
                          "datatype": "http://www.w3.org/2001/XMLSchema#integer"}}], gold) == 1.0


def test_matching_breaks_ties_towards_more_partial_pairs_whatever_the_row_order():
    # r = [[1, .5], [.5, 0]]: both matchings sum to 1; pairing p1-g2 and p2-g1 covers two pairs, F1 = 2/(1+4-2)
    gold = [{"a": uri("x"), "b": uri("y")}, {"a": uri("z"), "b": uri("w")}]
    pred = [{"a": uri("x"), "b": uri("y"), "c": uri("z")}, {"a": uri("x")}]
    for _ in range(5):
        random.shuffle(pred)
        random.shuffle(gold)
        assert row_f1(pred, gold) == pytest.approx(2 / 3)


def test_ask_answers_and_missing_predictions():
    assert row_f1(True, True) == 1.0
    assert row_f1(False, True) == 0.0
    assert row_f1(rows(("a",)), True) == 0.0
    assert row_f1(None, rows(("a",))) == 0.0


def test_empty_results():
    assert row_f1([], rows(("a",))) == 0.0
    assert row_f1(None, rows(("a",))) == 0.0


def test_empty_gold_rows_are_a_gold_error_unless_the_spinach_convention_is_asked_for():
    assert row_f1([], []) is None and row_f1(rows(("a",)), []) is None and row_f1(None, []) is None
    assert row_f1([], [], rule="spinach") == 1.0
    assert row_f1(rows(("a",)), [], rule="spinach") == 0.0
    assert row_f1(None, [], rule="spinach") == 0.0, "no query is never a match"
    assert row_f1([], [], rule="count") == 0.0
    with pytest.raises(ValueError, match="scoring rule"):
        row_f1([], [], rule="lenient")


def test_accepts_terms_and_query_results():
    result = QueryResult("select", vars=["x"], rows=[{"x": Term("uri", "a")}, {"x": Term("uri", "b")}])
    assert row_f1(result, rows(("a",), ("b",))) == 1.0
    assert row_f1(QueryResult("ask", boolean=False), False) == 1.0
    with pytest.raises(TypeError, match="SPARQL-JSON"):
        row_f1([{"x": "a"}], rows(("a",)))
