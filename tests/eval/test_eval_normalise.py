"""Answer normalisation: surface variants of one answer become one canonical string."""

from __future__ import annotations

from decimal import Decimal

import pytest

from sparqlab.eval import answer_columns, answer_set, answers_from_result, normalise_answer, normalise_term, set_f1
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
                                  lit("+01", XSD + "int"), lit("1.000", XSD + "float"), 1, 1.0, Decimal("1.00"), "1"])
def test_numbers_compare_by_value(term):
    assert normalise_answer(term) == "1"


@pytest.mark.parametrize("plain", ["007", "1.0", "1e3", " 42 ", "+5"])
def test_only_numeric_datatypes_are_read_as_numbers(plain):
    """A plain literal (or a text answer) that looks like a number keeps its text: "007" is a name, not 7."""
    assert normalise_answer(lit(plain)) == plain.strip()
    assert normalise_answer(plain) == plain.strip()
    assert normalise_answer(lit(plain, lang="en")) == plain.strip()
    assert normalise_answer(lit("007")) != normalise_answer(lit("7", XSD + "integer"))


@pytest.mark.parametrize(("form", "expected"), [
    (lit("NaN", XSD + "double"), "NaN"), (lit("NaN", XSD + "float"), "NaN"), (float("nan"), "NaN"),
    (lit("INF", XSD + "double"), "INF"), (lit("+INF", XSD + "float"), "INF"), (float("inf"), "INF"),
    (Decimal("Infinity"), "INF"), (lit("-INF", XSD + "double"), "-INF"), (-float("inf"), "-INF"),
])
def test_float_special_values(form, expected):
    assert normalise_answer(form) == expected
    assert set_f1([form], [expected]) == 1.0  # one NaN answer equals another: answers are terms, not IEEE values


ILL_TYPED = [
    ("abc", "integer"), ("1.5", "integer"), ("1e3", "decimal"), ("INF", "decimal"), ("NaN", "integer"),
    ("Infinity", "double"), ("inf", "double"), ("300", "byte"), ("-1", "nonNegativeInteger"), ("0", "positiveInteger"),
    ("yes", "boolean"), ("TRUE", "boolean"), ("2021-02-29", "date"), ("2021-13-01", "date"), ("not a date", "date"),
    ("2021-01-01T10:00:00", "date"), ("2021-01-01", "dateTime"), ("2021-01-01T25:00:00Z", "dateTime"),
    ("2021-01-01T24:00:01Z", "dateTime"), ("2021-01-01T10:60:00Z", "dateTime"), ("2021-01-01T10:00:00+15:00", "dateTime"),
    ("2021-01-01T10:00:00", "dateTimeStamp"), ("-0001-02-29", "date"), ("02021-01-01", "date"),
]


@pytest.mark.parametrize(("lexical", "datatype"), ILL_TYPED)
def test_ill_typed_literals_keep_lexical_form_and_datatype(lexical, datatype):
    """Outside its datatype's lexical space a literal has no value: it equals only itself, never a plain string."""
    canonical = normalise_term(lit(lexical, XSD + datatype))
    assert canonical == f'"{lexical}"^^<{XSD}{datatype}>'
    assert canonical != normalise_answer(lexical)
    assert normalise_answer(canonical) == canonical


def test_values_at_the_edge_of_their_lexical_space_are_valid():
    assert normalise_term(lit("127", XSD + "byte")) == "127"
    assert normalise_term(lit("-9223372036854775808", XSD + "long")) == "-9223372036854775808"
    assert normalise_term(lit("0", XSD + "boolean")) == "false"
    assert normalise_term(lit("2020-02-29", XSD + "date")) == "2020-02-29"
    assert normalise_term(lit("0000-02-29", XSD + "date")) == "0000-02-29"  # XSD 1.1: year 0 = 1 BCE, a leap year
    assert normalise_term(lit("1900-02-28", XSD + "date")) == "1900-02-28"
    assert normalise_term(lit("1900-02-29", XSD + "date")).startswith('"')  # 1900 is not a leap year


def test_number_forms():
    assert normalise_term(lit("1.5E3", XSD + "double")) == "1500"
    assert normalise_term(lit("0.00100", XSD + "decimal")) == "0.001"
    assert normalise_term(lit("-0.0", XSD + "decimal")) == "0"
    assert normalise_term(lit("12345678901234567890", XSD + "integer")) == "12345678901234567890"


@pytest.mark.parametrize("form", [lit("1918-11-09T00:00:00Z", XSD + "dateTime"), lit("1918-11-09", XSD + "date"),
                                  lit("1918-11-09T00:00:00.000+00:00", XSD + "dateTime"), lit("1918-11-09Z", XSD + "date"),
                                  lit("1918-11-09T00:00:00", XSD + "dateTime"), lit("1918-11-08T24:00:00Z", XSD + "dateTime"),
                                  lit("1918-11-09T02:00:00+02:00", XSD + "dateTimeStamp"), "1918-11-09"])
def test_dates_at_midnight_utc_become_dates(form):
    assert normalise_answer(form) == "1918-11-09"


def test_datetimes_with_a_time_are_utc_instants():
    assert normalise_term(lit("2001-10-26T21:32:52+00:00", XSD + "dateTime")) == "2001-10-26T21:32:52Z"
    assert normalise_term(lit("2001-10-26T21:32:52.50+02:00", XSD + "dateTime")) == "2001-10-26T19:32:52.5Z"
    assert normalise_term(lit("2001-10-26T21:32:52", XSD + "dateTime")) == "2001-10-26T21:32:52Z"  # no zone = UTC
    assert normalise_term(lit("2001-12-31T23:30:00-01:00", XSD + "dateTime")) == "2002-01-01T00:30:00Z"
    assert normalise_term(lit("-7000-01-01T00:00:00Z", XSD + "dateTime")) == "-7000-01-01"
    assert normalise_term(lit("-7000-03-01T01:00:00+02:00", XSD + "dateTime")) == "-7000-02-28T23:00:00Z"
    assert normalise_term(lit("12345-06-07T08:09:10Z", XSD + "dateTime")) == "12345-06-07T08:09:10Z"


def test_a_zoned_date_and_a_zoned_midnight_are_one_instant():
    """A date with a zone starts at midnight in that zone: the same instant as a dateTime at that midnight, so the
    two are one answer (neither drops the zone or keeps a local time)."""
    date = normalise_term(lit("2020-01-01+02:00", XSD + "date"))
    midnight = normalise_term(lit("2020-01-01T00:00:00+02:00", XSD + "dateTime"))
    assert date == midnight == "2019-12-31T22:00:00Z"
    assert normalise_term(lit("2020-01-01-05:00", XSD + "date")) == "2020-01-01T05:00:00Z"
    assert date != normalise_term(lit("2020-01-01", XSD + "date"))


def test_text_that_looks_like_a_date_is_text():
    assert normalise_answer("1918-11-09T00:00:00Z") == "1918-11-09T00:00:00Z"
    assert normalise_answer(lit("1918-11-09T00:00:00Z")) == "1918-11-09T00:00:00Z"


@pytest.mark.parametrize(("form", "expected"), [(True, "true"), (False, "false"), ("true", "true"), ("True", "True"),
                                                (lit("1", XSD + "boolean"), "true"), (lit("false", XSD + "boolean"), "false"),
                                                (lit(" true ", XSD + "boolean"), "true"), (lit("0", XSD + "boolean"), "false")])
def test_booleans(form, expected):
    assert normalise_answer(form) == expected


def test_language_tags_and_whitespace_are_dropped_but_case_is_kept():
    assert normalise_answer(lit("  Douglas Adams ", lang="en")) == "Douglas Adams"
    assert normalise_answer(lit("Douglas Adams", lang="de")) == normalise_answer("Douglas Adams")
    assert normalise_answer(lit("Paris", lang="en-GB")) == normalise_answer(lit("Paris", lang="fr"))
    assert normalise_answer(lit("Paris", XSD + "string")) == normalise_answer(lit("Paris")) == "Paris"
    assert normalise_answer("douglas adams") != normalise_answer("Douglas Adams")
    assert normalise_answer(lit("Cafe\u0301")) == normalise_answer("Caf\u00e9")  # Unicode NFC


def test_blank_nodes_equal_only_the_same_blank_node():
    node = normalise_answer(Term("bnode", "b0"))
    assert node == "_:b0" == normalise_answer({"type": "bnode", "value": "b0"}) == normalise_answer(Term("bnode", "_:b0"))
    assert node not in {normalise_answer(Term("uri", "b0")), normalise_answer(lit("b0")), normalise_answer("b0")}
    assert normalise_answer(node) == node
    assert set_f1([Term("bnode", "b0")], [Term("bnode", "b1")]) == 0.0


def test_other_typed_literals_keep_their_lexical_form():
    wkt = "http://www.opengis.net/ont/geosparql#wktLiteral"
    assert normalise_term(lit("Point(8.82 51.90)", wkt)) == "Point(8.82 51.90)"


def test_normalisation_is_idempotent():
    forms = ["wd:Q42", lit("1.50", XSD + "decimal"), lit("1918-11-09T00:00:00Z", XSD + "dateTime"), True, "x y",
             lit("2001-10-26T21:32:52.50+02:00", XSD + "dateTime"), lit("abc", XSD + "integer"), lit("NaN", XSD + "double"),
             Term("bnode", "b7"), lit("007"), lit("1E-7", XSD + "double")]
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
