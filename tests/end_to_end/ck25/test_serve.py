"""`sparqlab serve`: the TEXT2SPARQL API (GET / and /text2sparql), its errors, concurrency, and the run folder
every request is recorded in."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from sparqlab.platform.base import Method, MethodOutput
from sparqlab.text2sparql.ck25_questions import DATASET_IRI


class EchoQuery(Method):
    """Sends the question to the model (``standin-echo`` answers with it) and returns the reply as the query:
    the whole per-question path (model call, counted usage, final query on the KG) without an LLM."""

    name = "test-echo-query"

    async def answer(self, question, ctx):
        reply = await ctx.chat([{"role": "user", "content": question.text}], role="generator", kind="generate")
        if "fail" in question.text:
            raise RuntimeError("the method broke on this question")
        return MethodOutput(reply.text)


def _lines(path):
    """JSONL records (split at newlines only: a question may hold U+2028, which str.splitlines splits at)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]


@pytest.fixture()
def client(tmp_path, monkeypatch):
    from fastapi.testclient import TestClient

    from sparqlab.runs import RunConfig
    from sparqlab.text2sparql.endpoint import ServedRun, create_app

    config = RunConfig(experiment="serve", kg="ck25", model="standin-echo", output_root=tmp_path, cache="off",
                       progress=False, concurrency=3)
    served = ServedRun(EchoQuery(), config)
    with TestClient(create_app(served)) as test_client:
        test_client.served = served
        yield test_client


def test_answers_in_the_challenge_shape_on_both_paths(client):
    for path in ("/", "/text2sparql"):
        response = client.get(path, params={"question": "SELECT ?x WHERE { ?x a pv:Department }",
                                            "dataset": DATASET_IRI})
        assert response.status_code == 200
        body = response.json()
        assert body["dataset"] == DATASET_IRI and body["question"].startswith("SELECT")
        # the query as the method wrote it, after the KG's predefined prefixes: it runs on any plain endpoint
        assert body["query"].endswith("\nSELECT ?x WHERE { ?x a pv:Department }")
        assert "PREFIX pv: <http://ld.company.org/prod-vocab/>" in body["query"]


def test_missing_parameter_is_422_and_unknown_dataset_a_json_error(client):
    assert client.get("/", params={"question": "Who?"}).status_code == 422
    assert client.get("/text2sparql", params={"dataset": DATASET_IRI, "question": ""}).status_code == 422
    response = client.get("/", params={"question": "Who?", "dataset": "https://example.org/other/"})
    assert response.status_code == 404 and "unknown dataset" in response.json()["detail"]


def test_bad_questions_are_answered_not_500(client):
    for question in ("DELETE WHERE { ?s ?p ?o }", "}{" * 50, "\u0000\u2028", "x" * 1999, "fail now"):
        response = client.get("/", params={"question": question, "dataset": DATASET_IRI})
        assert response.status_code == 200 and isinstance(response.json()["query"], str)
    lines = _lines(client.served.run_dir / "predictions.jsonl")
    assert lines[-1]["error_category"] == "method_error" and lines[-1]["predicted_sparql"] is None
    assert lines[0]["error_category"] == "update_refused"  # the guard refused the DELETE as final query


def test_concurrent_requests_each_become_a_run_folder_line(client):
    questions = [f"SELECT ?x WHERE {{ ?x pv:id \"{n}\" }}" for n in range(8)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        responses = list(pool.map(lambda q: client.get("/", params={"question": q, "dataset": DATASET_IRI}),
                                  questions))
    assert [r.json()["question"] for r in responses] == questions
    lines = _lines(client.served.run_dir / "predictions.jsonl")
    assert sorted(line["question"] for line in lines) == sorted(questions)
    assert len({line["id"] for line in lines}) == len(lines)
    assert all(line["gold_answers"] is None and line["f1"] is None for line in lines)  # served: no gold
    traces = _lines(client.served.run_dir / "traces.jsonl")
    assert len(traces) == len(lines)


def test_a_served_session_is_a_run_to_browse(tmp_path, client):
    from sparqlab.runs.results import list_runs

    client.get("/", params={"question": "ASK {}", "dataset": DATASET_IRI})
    folder = client.served.run_dir
    client.__exit__(None, None, None)  # shutdown: metrics.json and the final manifest
    (row,) = [r for r in list_runs(root=tmp_path) if r["run"] == folder.name]
    assert row["status"] == "complete" and row["done"] == "1/1" and row["method"] == "test-echo-query"


def test_2026_dataset_iris_and_the_questions_language(client):
    from sparqlab.text2sparql.editions import EDITIONS, question_language

    served = client.served
    assert set(served.datasets) == {EDITIONS["ck25"].iri, EDITIONS["ck26"].iri}  # the IRIs of the served KG
    response = client.get("/text2sparql", params={"question": "Zu welcher Abteilung gehört Frau Brant?",
                                                  "dataset": EDITIONS["ck26"].iri})
    assert response.status_code == 200 and response.json()["dataset"] == EDITIONS["ck26"].iri
    record = _lines(served.run_dir / "predictions.jsonl")[-1]
    assert record["metadata"] == {"dataset": EDITIONS["ck26"].iri, "language": "de"}
    assert client.get("/", params={"question": "x", "dataset": EDITIONS["db26"].iri}).status_code == 404
    assert question_language("¿Quiénes son todos los Presidentes de Francia?", ("en", "es")) == "es"
    assert question_language("Who are all the Presidents of France?", ("en", "es")) == "en"
    assert question_language("Brant?", ("en", "de")) is None
