"""`sparqlab run external`: a scripted TEXT2SPARQL system on 127.0.0.1, asked every CK25 question under the
challenge's request policy, gives a run whose official scores are exactly `sparqlab eval`'s on the same answers."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from sparqlab.cli import main
from sparqlab.core.paths import data_dir
from sparqlab.text2sparql.ck25_questions import DATASET_IRI

TIMEOUT_S = 1.5
"""Long enough for an answer on a loaded machine; the slow question takes twice as long."""


class ScriptedSystem(ThreadingHTTPServer):
    """A TEXT2SPARQL system with fixed answers by question text; ``slow`` questions get no answer within the
    client's timeout, ``flaky`` ones fail with HTTP 500 on their first request; ``broken`` ones always fail."""

    daemon_threads = True

    def __init__(self, answers, slow=(), flaky=(), broken=()):
        super().__init__(("127.0.0.1", 0), Handler)
        self.answers, self.slow, self.flaky, self.broken = answers, set(slow), set(flaky), set(broken)
        self.requests: Counter = Counter()
        self.datasets: set[str] = set()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}/"


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def _json(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802 - http.server's name
        system: ScriptedSystem = self.server  # type: ignore[assignment]
        url = urlparse(self.path)
        if url.path == "/openapi.json":
            return self._json(200, {"openapi": "3.1.0", "info": {"title": "scripted TEXT2SPARQL system",
                                                                 "version": "1.0"}, "paths": {"/": {}}})
        params = {k: v[0] for k, v in parse_qs(url.query).items()}
        question = params.get("question", "")
        system.requests[question] += 1
        system.datasets.add(params.get("dataset"))
        if question in system.broken or (question in system.flaky and system.requests[question] == 1):
            return self._json(500, {"detail": "internal error"})
        if question in system.slow:  # past the client's timeout: it has hung up by then
            time.sleep(TIMEOUT_S * 2)
            return None
        return self._json(200, {"dataset": params.get("dataset"), "question": question,
                                "query": system.answers.get(question, "")})


@pytest.fixture()
def system(ck25_questions):
    """AIFB's published CK25 answers served by question text: the second question is slow, the third fails once."""
    published = json.loads((data_dir() / "text2sparql/published/ck25/AIFB/ck25_answers.json").read_text())
    by_qname = {entry["qname"]: entry["query"] for entry in published}
    answers = {q.text: by_qname[q.id] for q in ck25_questions}
    server = ScriptedSystem(answers, slow=[ck25_questions[1].text], flaky=[ck25_questions[2].text])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    server.by_qname = by_qname
    yield server
    server.shutdown()
    server.server_close()


def _records(run_dir):
    return {r["id"]: r for r in map(json.loads, (run_dir / "predictions.jsonl").read_text().splitlines())}


def _policy(url):
    return ["-o", f"endpoint={url}", "-o", f"timeout_s={TIMEOUT_S}", "-o", "retries=1", "-o", "retry_sleep_s=0"]


ASKED = 12
"""The first CK25 questions asked (the whole run costs seconds per question's bookkeeping on a loaded machine)."""


def test_external_run_scores_exactly_as_eval_on_the_same_answers(system, ck25_questions, tmp_path, capsys):
    assert main(["run", "external", *_policy(system.url), "-d", "ck25", "--kg", "ck25", "-e", "peers",
                 "--limit", str(ASKED), "--output-root", str(tmp_path), "--concurrency", "4",
                 "--progress", "false"]) == 0
    run_dir = next((tmp_path / "peers").iterdir())
    records = _records(run_dir)
    asked = ck25_questions[:ASKED]
    slow, flaky = asked[1].id, asked[2].id
    # the slow question: every attempt past the timeout, recorded as that question's outcome
    assert records[slow]["error_category"] == "external_timeout" and records[slow]["predicted_sparql"] is None
    assert records[slow]["extra"] == {**records[slow]["extra"], "outcome": "timeout", "retries": 1}
    assert system.requests[asked[1].text] == 2
    # the HTTP 500 recovered on its retry, counted
    assert records[flaky]["extra"]["retries"] == 1 and records[flaky]["extra"]["http_status"] == 200
    assert records[flaky]["predicted_sparql"] == system.by_qname[flaky]
    assert sum(r["extra"]["retries"] for r in records.values()) == 2
    assert all(r["latency_s"] > 0 for r in records.values()) and system.datasets == {DATASET_IRI}
    config = json.loads((run_dir / "config.json").read_text())
    assert config["method"]["config"]["endpoint"] == system.url and config["method"]["config"]["retries"] == 1
    assert config["method"]["self_description"]["info"]["title"] == "scripted TEXT2SPARQL system"
    # the answers the system gave, as the official client writes them, scored by `sparqlab eval`
    answers = [{"qname": q.id, "query": system.by_qname[q.id]} for q in asked if q.id != slow]
    answers_file = tmp_path / "answers.json"
    answers_file.write_text(json.dumps(answers))
    capsys.readouterr()
    assert main(["eval", str(answers_file), "-d", "ck25", "--kg", "ck25", "--metric", "text2sparql", "--json"]) == 0
    evaluated = json.loads(capsys.readouterr().out)["questions"]
    for question in asked:
        row, scores = evaluated[question.id], records[question.id]["scores"]
        assert (scores["text2sparql"], scores["text2sparql_set_P"], scores["text2sparql_set_recall"]) == \
            (row["set_F"], row["set_P"], row["set_recall"]), question.id
    # the run is a leaderboard row beside the published teams, with the means of those scores
    from sparqlab.text2sparql.leaderboard import build_leaderboard

    table = build_leaderboard(["ck25"], runs={"scripted": run_dir})
    name = next(row for row in table.rows if row.startswith("scripted"))
    assert "INFAI" in table.rows
    for measure in ("set_F", "set_P"):
        mean = sum(evaluated[q.id][measure] for q in asked) / ASKED
        assert table.value(name, "ck25", measure) == pytest.approx(mean, abs=1e-12), measure


def test_a_system_that_keeps_failing_stops_the_run_or_is_recorded(ck25_questions, tmp_path):
    from sparqlab.runs import RunAborted, RunConfig, run
    from sparqlab.text2sparql.external import ExternalSystem

    questions = ck25_questions[:3]
    server = ScriptedSystem({q.text: "ASK {}" for q in questions}, broken=[questions[1].text])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        policy = {"endpoint": server.url, "timeout_s": TIMEOUT_S, "retries": 2, "retry_sleep_s": 0}
        config = RunConfig(experiment="peers", kg="ck25", output_root=str(tmp_path), concurrency=1, progress=False)
        with pytest.raises(RunAborted, match="failed on ck25:.*after 3 attempts: http_error 500"):
            run(ExternalSystem(**policy), questions, config)
        assert server.requests[questions[1].text] == 3
        recorded = run(ExternalSystem(**policy, on_http_error="record"), questions, config)
        records = _records(recorded.run_dir)
        assert records[questions[1].id]["error_category"] == "external_http_error"
        assert records[questions[1].id]["extra"]["http_status"] == 500
        assert records[questions[0].id]["predicted_sparql"] == "ASK {}"
        assert len(list((tmp_path / "peers").iterdir())) == 2  # another policy, another run
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(Exception, match="cannot be reached"):  # the endpoint is gone: refused before any question
        run(ExternalSystem(**policy), questions, config)


def test_an_external_system_is_a_grid_row_beside_our_methods(system, tmp_path):
    from sparqlab.experiments.executors import run_local
    from sparqlab.experiments.grid import load_grid
    from sparqlab.experiments.table import build_table

    grid_file = tmp_path / "peers.yaml"
    grid_file.write_text(f"""\
name: peers
run: {{limit: 4, output_root: {tmp_path / 'runs'}, progress: false}}
methods:
  direct: {{method: direct, model: standin-schema-rules}}
  scripted: {{method: external, options: {{endpoint: "{system.url}", timeout_s: {TIMEOUT_S}, retries: 1,
                                           retry_sleep_s: 0}}}}
datasets:
  ck25: {{dataset: ck25, kg: ck25}}
""")
    grid = load_grid(grid_file)
    run_local(grid, grid.cells, workers=0)
    table = build_table(grid)
    assert set(table.rows) == {"direct [standin]", "scripted"}
    assert table.value("scripted", "ck25", "f1") is not None
    # the system's model calls are not ours to count: unknown, not zero; our stand-in's are counted
    assert table.value("scripted", "ck25", "model_calls") is None
    assert table.value("direct [standin]", "ck25", "model_calls") >= 1.0


def test_a_declared_example_pool_gets_its_leakage_report(tmp_path):
    """The pool a system declares is read and reported in metrics.json like our methods' pools (a pool sharing
    no words with the questions here, so no embedding model is loaded; the near-duplicate search itself, e.g.
    CK25's questions in a pool for CK26, is tests/end_to_end/text2sparql/test_leakage.py's)."""
    from sparqlab.data import registry
    from sparqlab.runs import RunConfig, run
    from sparqlab.text2sparql.external import ExternalSystem

    questions = registry.load("ck26", language="en")[:2]
    pool = tmp_path / "pool.jsonl"
    pool.write_text(json.dumps({"id": "p1", "text": "Zebras graze?", "gold_sparql": "ASK { ?z a ?y }"}) + "\n")
    server = ScriptedSystem({q.text: q.gold_sparql for q in questions})
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = run(ExternalSystem(endpoint=server.url, example_pool=str(pool)), questions,
                     RunConfig(experiment="peers", kg="ck25", output_root=str(tmp_path), progress=False))
    finally:
        server.shutdown()
        server.server_close()
    report = json.loads((result.run_dir / "metrics.json").read_text())["leakage"][str(pool)]
    assert (report["n_pool"], report["n_test"], report["near_duplicates"]) == (1, 2, 0)
    assert server.datasets == {"https://text2sparql.aksw.org/2026/corporate/"}  # CK26's IRI, from the questions


def test_questions_naming_no_dataset_iri_are_refused_naming_the_option(tmp_path, capsys):
    """A researcher's own questions (no edition's qname, no dataset metadata) cannot tell the system which dataset
    to answer: the run is refused before the system is called, naming ``-o dataset_iri``."""
    from sparqlab.cli import main

    questions = tmp_path / "own.jsonl"
    questions.write_text(json.dumps({"id": "own-1", "text": "Who supplies bolts?", "kg": "ck25"}) + "\n")
    code = main(["run", "external", "-o", "endpoint=http://127.0.0.1:9/", "-d", str(questions), "--kg", "ck25",
                 "--output-root", str(tmp_path / "runs"), "--progress", "false"])
    assert code == 1 and not (tmp_path / "runs").exists()
    assert ("MethodCannotAnswer: external cannot answer these questions: 1 of 1 questions (e.g. 'own-1') name no "
            "TEXT2SPARQL dataset IRI") in capsys.readouterr().err
