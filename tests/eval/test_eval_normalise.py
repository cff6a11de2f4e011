"""Answer normalisation: surface variants of one answer become one canonical string."""

from __future__ import annotations

import pytest

from sparqlab.eval import answer_columns, answer_set, answers_from_result, normalise_answer, normalise_term
from sparqlab.kg.results import XSD, QueryResult, Term

WD = "http://www.wikidata.org/entity/"


def lit(value: str, datatype: str | None = None, lang: str | None = None) -> Term:
    return Term("literal", value, datatype, lang)


@pytest.mark.parametrize("form", [WD + "Q42", "https://www.wikidata.org/entity/Q42", "wd:Q42", f"<{WD}Q42>",
                                  Term("uri", "https://www.wikidata.org/entity/Q42"), {"type": "uri", "value": "wd:Q42"}])
def test_wikidata_entity_iris_have_one_form(form):
    assert normalise_answer(form) == WD + "Q42"


def test_unknown_namespaces_and_prefixes_are_left_alone():
    assert normalise_answer("https://example.org/a") == "https://example.org/a"
    assert normalise_answer("nosuchprefix:thing") == "nosuchprefix:thing"
    assert normalise_answer("Title: a film") == "Title: a film"


@pytest.mark.parametrize("term", [lit("1", XSD + "integer"), lit("1.0", XSD + "decimal"), lit("1E0", XSD + "double"),
                                  lit("+01", XSD + "int"), lit("1.000", XSD + "float"), 1, 1.0, "1", "1.0"])
def test_numbers_compare_by_value(term):
    assert normalise_answer(term) == "1"


def test_number_forms():
    assert normalise_term(lit("1.5E3", XSD + "double")) == "1500"
    assert normalise_term(lit("0.00100", XSD + "decimal")) == "0.001"
    assert normalise_term(lit("-0.0", XSD + "decimal")) == "0"
    assert normalise_term(lit("12345678901234567890", XSD + "integer")) == "12345678901234567890"


@pytest.mark.parametrize("form", [lit("1918-11-09T00:00:00Z", XSD + "dateTime"), lit("1918-11-09", XSD + "date"),
                                  lit("1918-11-09T00:00:00.000+00:00", XSD + "dateTime"), "1918-11-09T00:00:00Z"])
def test_dates_at_midnight_utc_become_dates(form):
    assert normalise_answer(form) == "1918-11-09"


def test_datetimes_with_a_time_keep_it():
    assert normalise_term(lit("2001-10-26T21:32:52+00:00", XSD + "dateTime")) == "2001-10-26T21:32:52Z"
    assert normalise_term(lit("2001-10-26T21:32:52.50+02:00", XSD + "dateTime")) == "2001-10-26T21:32:52.5+02:00"
    assert normalise_term(lit("-7000-01-01T00:00:00Z", XSD + "dateTime")) == "-7000-01-01"


@pytest.mark.parametrize(("form", "expected"), [(True, "true"), (False, "false"), ("True", "true"),
                                                (lit("1", XSD + "boolean"), "true"), (lit("false", XSD + "boolean"), "false")])
def test_booleans(form, expected):
    assert normalise_answer(form) == expected


def test_language_tags_and_whitespace_are_dropped_but_case_is_kept():
    assert normalise_answer(lit("  Douglas Adams ", lang="en")) == "Douglas Adams"
    assert normalise_answer(lit("Douglas Adams", lang="de")) == normalise_answer("Douglas Adams")
    assert normalise_answer("douglas adams") != normalise_answer("Douglas Adams")


def test_other_typed_literals_keep_their_lexical_form():
    wkt = "http://www.opengis.net/ont/geosparql#wktLiteral"
    assert normalise_term(lit("Point(8.82 51.90)", wkt)) == "Point(8.82 51.90)"


def test_normalisation_is_idempotent():
    forms = ["wd:Q42", lit("1.50", XSD + "decimal"), lit("1918-11-09T00:00:00Z", XSD + "dateTime"), True, "x y"]
    for form in forms:
        once = normalise_answer(form)
        assert normalise_answer(once) == once


def test_rejects_unknown_answer_types():
    with pytest.raises(TypeError, match="cannot normalise"):
        normalise_answer(object())


def test_answer_set_collapses_variants_and_skips_none():
    assert answer_set(["wd:Q1", WD + "Q1", None, "2", lit("2.0", XSD + "decimal")]) == {WD + "Q1", "2"}


def test_companion_label_columns_are_not_answers():
    assert answer_columns(["x", "xLabel", "xDescription", "yLabel", "count"]) == ["x", "yLabel", "count"]


def test_answers_from_select_result():
    result = QueryResult("select", vars=["x", "xLabel", "n"], rows=[
        {"x": Term("uri", WD + "Q1"), "xLabel": lit("one", lang="en"), "n": lit("3", XSD + "integer")},
        {"x": Term("uri", WD + "Q2"), "xLabel": lit("two", lang="en")},
    ])
    assert answers_from_result(result) == {WD + "Q1", WD + "Q2", "3"}


def test_answers_from_ask_and_count_and_empty_results():
    assert answers_from_result(QueryResult("ask", boolean=True)) == {"true"}
    assert answers_from_result(QueryResult("ask", boolean=False)) == {"false"}
    count = QueryResult("select", vars=["c"], rows=[{"c": lit("42", XSD + "integer")}])
    assert answers_from_result(count) == {"42"}
    assert answers_from_result(QueryResult("select", vars=["x"])) == set()
