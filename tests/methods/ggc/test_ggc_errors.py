"""Every error category on constructed predictions, the semantic subtypes by comparison with the gold query, and
the Table 3 layout."""

import pandas as pd
import pytest

from sparqlab.eval import categorise, categorise_record, error_table
from sparqlab.eval.errors import coarse_category, query_shape, semantic_subtype

GOLD = """PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
SELECT DISTINCT ?label ?uri WHERE {
  ?uri ?rel1 ?e1 ; ?rel2 ?e2 ; rdfs:label ?label .
  ?rel1 rdfs:label "starred_actors" . ?e1 rdfs:label "Matthias Schoenaerts" .
  ?rel2 rdfs:label "has_tags" . ?e2 rdfs:label "drama" .
}"""
GOLD_ANSWERS = ["Bullhead", "Rust and Bone"]


def test_outcome_categories():
    assert categorise(GOLD, GOLD_ANSWERS, None, GOLD_ANSWERS, GOLD) == "correct"
    assert categorise(GOLD, ["x"], None, [], GOLD, "gold_sparql") == "gold_error"
    assert categorise(GOLD, ["x"], None, None, GOLD, "error: syntax_error: bad gold") == "gold_error"
    assert categorise(None, None, "parse_failure", GOLD_ANSWERS, GOLD) == "no_query"
    assert categorise("SELEC ?x", None, "syntax_error", GOLD_ANSWERS, GOLD) == "syntax_error"
    assert categorise(GOLD, None, "final_query_timeout", GOLD_ANSWERS, GOLD) == "execution_error"
    assert categorise(GOLD, None, "endpoint_error", GOLD_ANSWERS, GOLD) == "execution_error"
    assert categorise(GOLD, [], None, GOLD_ANSWERS, GOLD) == "empty_result"


@pytest.mark.parametrize("predicted, answers, subtype", [
    (GOLD.replace('"starred_actors"', '"directed_by"'), ["Other"], "wrong_relation"),
    (GOLD.replace('"drama"', '"comedy"'), ["Other"], "wrong_entity"),
    (GOLD.replace('?rel2 rdfs:label "has_tags" . ?e2 rdfs:label "drama" .', "").replace("?rel2 ?e2 ;", ""),
     ["Bullhead", "Rust and Bone", "The Drop"], "missing_constraint"),
    (GOLD.replace("}", '  ?uri ?rel3 ?e3 . ?rel3 rdfs:label "in_language" . ?e3 rdfs:label "French" .\n}'),
     ["Rust and Bone"], "extra_constraint"),
    (GOLD.replace("SELECT DISTINCT ?label ?uri WHERE", "ASK"), ["true"], "wrong_answer_form"),
    (GOLD.replace('?e1 rdfs:label "Matthias Schoenaerts"', '?e1 rdfs:label "drama"')
         .replace('?e2 rdfs:label "drama"', '?e2 rdfs:label "Matthias Schoenaerts"'), ["Other"], "wrong_structure"),
    (GOLD.replace("}", "  ?uri ?rel1 ?other .\n}"), ["Bullhead"], "extra_constraint"),  # same constants, one more
    (GOLD.replace("}", "  ?uri ?rel1 ?other .\n}"), ["Bullhead", "Rust and Bone", "Z"], "extra_constraint"),
])
def test_semantic_subtypes(predicted, answers, subtype):
    assert categorise(predicted, answers, None, GOLD_ANSWERS, GOLD) == f"semantic:{subtype}"


def test_over_broad_and_unknown_without_a_comparable_gold_query():
    assert semantic_subtype(GOLD, None, {"a", "b"}, {"a"}) == "over_broad"
    assert semantic_subtype(GOLD, None, {"b"}, {"a"}) == "unknown"
    assert semantic_subtype("SELEC broken", GOLD, {"b"}, {"a"}) == "unknown"


def test_query_shape_reads_undeclared_prefixes_paths_and_aggregates():
    shape = query_shape("SELECT ?x WHERE { ?x wdt:P31 wd:Q5 ; wdt:P27/wdt:P17 ?c . FILTER(?c != wd:Q30) }")
    assert shape.form == "select" and shape.constraints == 3
    assert {r.rsplit("/", 1)[1] for r in shape.relations} == {"P31", "P27", "P17"}
    assert {e.rsplit("/", 1)[1] for e in shape.entities} == {"Q5", "Q30"}
    assert query_shape("SELECT (COUNT(?x) AS ?n) WHERE { ?x a <http://x/C> }").form == "count"
    assert query_shape("ASK { <http://x/a> <http://x/p> <http://x/b> }").form == "ask"
    assert query_shape("SELEC ?x") is None


def test_query_shape_counts_each_filter_and_every_iri_of_a_path():
    """Each FILTER is one constraint (also two in one group, and one inside an OPTIONAL) and every IRI of a
    property path is a relation (also under ``^``)."""
    shape = query_shape("SELECT ?x WHERE { ?x ^wdt:P40/wdt:P26 ?y . FILTER(?y != wd:Q1) FILTER(?x != wd:Q2) "
                        "OPTIONAL { ?x wdt:P1 ?z FILTER(?z > 3) } }")
    assert shape.constraints == 2 + 3
    assert {r.rsplit("/", 1)[1] for r in shape.relations} == {"P40", "P26", "P1"}
    assert {e.rsplit("/", 1)[-1] for e in shape.entities} == {"Q1", "Q2", "3"}


def test_record_categorisation_and_coarse_groups():
    record = {"predicted_sparql": GOLD, "predicted_answers": [], "error_category": None,
              "gold_answers": GOLD_ANSWERS, "gold_sparql": GOLD, "gold_source": "given"}
    assert categorise_record(record) == "empty_result"
    assert [coarse_category(c) for c in ("correct", "no_query", "syntax_error", "execution_error",
                                         "empty_result", "semantic:wrong_entity", "gold_error")] == \
        ["correct", "syntax", "syntax", "syntax", "semantic", "semantic", "gold_error"]


def test_error_table_shares_are_over_all_errors_with_gold_errors_as_their_own_share():
    """GGC Table 3: semantic + syntax + ground-truth errors = 100 % of the generator's errors; SciQA's Table 13a
    leaves gold errors out of the base (``gold_errors="exclude"``)."""
    generator = pd.DataFrame({"error_type": ["correct"] * 5 + ["empty_result"] * 3 + ["syntax_error", "gold_error"]})
    corrected = pd.DataFrame({"error_type": ["correct"] * 8 + ["semantic:wrong_entity", "gold_error"]})
    table = error_table({"generator": generator, "after correction": corrected})
    assert list(table.index) == ["gold_error", "syntax_error", "empty_result", "semantic:wrong_entity"]
    assert table.loc["empty_result", ("generator", "n")] == 3
    assert table.loc["empty_result", ("generator", "%")] == 60.0
    assert table.loc[["gold_error", "syntax_error"], ("generator", "%")].tolist() == [20.0, 20.0]
    assert table[("generator", "%")].sum() == 100.0
    assert table.loc["semantic:wrong_entity", ("after correction", "%")] == 50.0
    assert table.loc["empty_result", ("after correction", "n")] == 0
    excluded = error_table({"generator": generator}, gold_errors="exclude")
    assert excluded.loc["empty_result", ("generator", "%")] == 75.0
    assert excluded.loc["syntax_error", ("generator", "%")] == 25.0
    assert pd.isna(excluded.loc["gold_error", ("generator", "%")])
