"""The one-shot baseline and its keyword-rule stand-in, run through the real runner on the movie KG."""

import pytest

from sparqlab.data import Question
from sparqlab.kg import open_kg
from sparqlab.kg.describe import kg_notes
from sparqlab.llm import StandinModel
from sparqlab.methods import DirectSparql, make_method
from sparqlab.methods.direct.method import build_messages
from sparqlab.runs import RunConfig, run
from sparqlab.serving.model_server import serve_in_background


@pytest.fixture(scope="module")
def movies():
    return open_kg("movies")


@pytest.fixture(scope="module")
def notes(movies):
    return kg_notes(movies)


@pytest.fixture
def config(tmp_path):
    def make(**overrides):
        base = dict(experiment="direct-test", kg="movies", model="standin-keyword-rules",
                    output_root=str(tmp_path / "runs"), cache_path=str(tmp_path / "responses.sqlite"),
                    progress=False)
        return RunConfig(**{**base, **overrides})
    return make


def labels(kg, query):
    return sorted({row["label"].value for row in kg.query(query).rows})


def test_notes_list_the_declared_schema(notes):
    assert "- directed_by: Film -> Person" in notes
    assert "- class Film:" in notes
    assert "rdfs:label" in notes  # the profile's notes on label-based queries


def test_prompt_has_system_examples_and_question(notes):
    example = Question("ex1", "who directed [Alien]", gold_sparql="SELECT ?x WHERE { ?x ?p ?o }")
    messages = build_messages(Question("q", "what films did [Ridley Scott] direct"), "movies", notes, [example])
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[2]["content"] == "```sparql\nSELECT ?x WHERE { ?x ?p ?o }\n```"
    assert messages[-1]["content"] == "Question: what films did [Ridley Scott] direct"
    with pytest.raises(ValueError, match="no gold SPARQL"):
        build_messages(Question("q", "x"), "movies", notes, [Question("bad", "y")])


def test_run_answers_from_executing_the_final_query(movies, config):
    question = Question("q1", "which movies did [Ridley Scott] direct", kg="movies",
                        gold_answers=labels(movies, 'SELECT ?label WHERE { ?f mrel:directed_by ?p . '
                                                    '?p rdfs:label "Ridley Scott" . ?f rdfs:label ?label }'))
    result = run(DirectSparql(), [question], config())
    record = result.predictions().iloc[0]
    assert sorted(record["predicted_answers"]) == question.gold_answers
    assert record["f1"] == 1.0 and record["em"] == 1.0
    assert record["model_calls"] == {"generate": 1}
    assert result.metrics["model_is_standin"] is True


class ProseThenQuery(StandinModel):
    """Answers the first request with prose and a re-parse request with a query."""

    name = "standin-prose-then-query"

    def respond(self, request):
        if "did not contain a SPARQL query" in request.last_user_message:
            return "```sparql\nASK { ?s ?p ?o }\n```"
        return "Let me think about the film first."


class OnlyProse(StandinModel):
    name = "standin-only-prose"

    def respond(self, request):
        return "No idea."


def test_reparse_call_recovers_a_query(config):
    question = Question("q2", "is there anything", kg="movies", gold_answers=["true"], answer_form="ask")
    record = run(DirectSparql(), [question], config(model=None), model=ProseThenQuery()).predictions().iloc[0]
    assert record["model_calls"] == {"generate": 1, "reparse": 1}
    assert record["predicted_sparql"] == "ASK { ?s ?p ?o }"
    assert record["f1"] == 1.0


def test_no_query_after_reparse_is_a_parse_failure(config):
    question = Question("q3", "anything", kg="movies", gold_answers=["x"])
    record = run(DirectSparql(reparse_attempts=2), [question], config(model=None), model=OnlyProse()).predictions().iloc[0]
    assert record["error_category"] == "parse_failure"
    assert record["model_calls"] == {"generate": 1, "reparse": 2}
    assert record["f1"] == 0.0


def test_served_standin_gives_the_same_predictions_over_http(config):
    from sparqlab.data import load

    questions = load("metaqa-1hop", limit=12)
    local = run(DirectSparql(), questions, config(experiment="local")).predictions()
    with serve_in_background("standin-keyword-rules") as url:
        served = run(DirectSparql(), questions, config(experiment="served", model_url=url, cache="off")).predictions()
    columns = ["id", "predicted_sparql", "f1", "error_category"]
    assert local.sort_values("id")[columns].values.tolist() == served.sort_values("id")[columns].values.tolist()


def test_methods_are_known_by_name():
    assert isinstance(make_method("direct", reparse_attempts=0), DirectSparql)
    with pytest.raises(ValueError, match="known: .*direct"):
        make_method("nope")


def test_standin_token_counts_are_flagged_as_estimates(config):
    question = Question("q4", "which movies did [Ridley Scott] direct", kg="movies", gold_answers=["x"])
    result = run(DirectSparql(), [question], config(experiment="estimates"))
    record = result.predictions().iloc[0]
    assert record["tokens_estimated"] and record["tokens"]["total"] > 0
    assert result.metrics["tokens_estimated"] is True


def test_model_from_environment_is_the_same_run_as_naming_it(config, monkeypatch):
    question = Question("q5", "which movies did [Ridley Scott] direct", kg="movies", gold_answers=["x"])
    named = run(DirectSparql(), [question], config(experiment="env"))
    monkeypatch.setenv("SPARQLAB_MODEL", "standin-keyword-rules")
    from_env = run(DirectSparql(), [question], config(experiment="env", model=None))
    assert from_env.run_id == named.run_id and from_env.answered == 0
    monkeypatch.delenv("SPARQLAB_MODEL")
    with pytest.raises(ValueError, match="SPARQLAB_MODEL"):
        run(DirectSparql(), [question], config(experiment="env", model=None))
