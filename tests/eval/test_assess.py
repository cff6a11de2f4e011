"""`sparqlab.eval.assess`: one call gives every per-question score field of a prediction line, from the registry."""

from sparqlab.data.question import Question
from sparqlab.eval.assess import Outcome, assess, score_fields
from sparqlab.eval.metrics import METRICS, NOT_EXECUTED, register_metric
from sparqlab.kg.results import QueryResult
from sparqlab.text2sparql.metric import OFFICIAL_KEYS, OFFICIAL_METRIC

EX = "http://example.org/"
SPARQL = f"SELECT ?x WHERE {{ <{EX}film> <{EX}director> ?x }}"


def select_result(*values):
    return QueryResult.from_json({"head": {"vars": ["x"]},
                                  "results": {"bindings": [{"x": {"type": "uri", "value": EX + v}} for v in values]}})


def outcome(values, gold, source="given"):
    answers = None if values is None else sorted(EX + v for v in values)
    return Outcome(SPARQL, None if values is None else select_result(*values), answers, None,
                   [EX + g for g in gold], source)


def test_assess_gives_the_registered_score_fields_the_error_type_and_both_complexities():
    question = Question(id="q1", text="who directed it?", gold_sparql=SPARQL)
    assessed = assess(question, outcome(["a", "b"], ["a"]))
    assert set(assessed) == {*score_fields(), "error_type", "scores", "gold_complexity", "predicted_complexity"}
    assert assessed["precision"] == 0.5 and assessed["recall"] == 1.0 and assessed["em"] is False
    assert assessed["error_type"].startswith("semantic:")
    assert assessed["scores"] == {}  # not a TEXT2SPARQL question: no outcome metric applies
    assert assessed["gold_complexity"]["triples"] == 1 == assessed["predicted_complexity"]["triples"]


def test_a_generation_only_line_is_not_scored():
    question = Question(id="q1", text="who directed it?", gold_sparql=SPARQL,
                        metadata={"official_metric": OFFICIAL_METRIC})
    assessed = assess(question, Outcome(SPARQL, None, None, None, None, NOT_EXECUTED))
    assert all(assessed[field] is None for field in score_fields()) and assessed["error_type"] is None
    assert assessed["scores"] == {}


def test_the_official_text2sparql_measures_are_scored_from_the_outcome_through_the_registry():
    """Two values retrieved, one relevant: set_P 1/2, set_recall 1, set_F 2/3; an order-sensitive question also
    gets nDCG, which ranks the values in reverse byte order (b before a: the hit is at rank 2)."""
    import math

    plain = Question(id="ck:1", text="q", gold_sparql=SPARQL, metadata={"official_metric": OFFICIAL_METRIC})
    scores = assess(plain, outcome(["a", "b"], ["a"]))["scores"]
    assert scores == {OFFICIAL_KEYS["set_F"]: 2 / 3, OFFICIAL_KEYS["set_P"]: 0.5, OFFICIAL_KEYS["set_recall"]: 1.0}
    ordered = Question(id="ck:2", text="q", gold_sparql=SPARQL,
                       metadata={"official_metric": OFFICIAL_METRIC, "order_matters": True})
    ndcg = assess(ordered, outcome(["a", "b"], ["a"]))["scores"][OFFICIAL_KEYS["ndcg"]]
    assert math.isclose(ndcg, 1 / math.log2(3))
    assert METRICS[OFFICIAL_METRIC].outcome is not None  # the registered metric scores it, not the runner


def test_a_registered_outcome_metric_sees_the_result_rows_in_order():
    def first_row(question, outcome):
        return {"first_row": outcome.result.rows[0]["x"].value if outcome.result else None}

    question = Question(id="q1", text="who directed it?", gold_sparql=SPARQL)
    with METRICS.restored():
        register_metric("first_row", "First row", aggregate=lambda records: None, field="scores.first_row",
                        outcome=first_row, judged=False, optional=True)
        assert assess(question, outcome(["b", "a"], ["a"]))["scores"] == {"first_row": EX + "b"}
        assert assess(question, outcome(None, ["a"]))["scores"] == {"first_row": None}
    assert assess(question, outcome(["b", "a"], ["a"]))["scores"] == {}
