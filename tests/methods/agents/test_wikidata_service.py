"""SPINACH and SAGA against a stand-in for Wikidata's query service (429 with Retry-After over five in flight and
at random, in front of ``oxigraph serve-read-only``) at concurrency 16: the same answers and scores as against the
plain server, every throttle retried and counted in metrics.json; a service that refuses everything stops the
run with one clear error and loses nothing — the same call resumes once the service answers again."""

from __future__ import annotations

import json

import pytest

from sparqlab.core.paths import PROJECT_ROOT
from sparqlab.data import load
from sparqlab.engines.oxigraph_server import serve_store
from sparqlab.methods import make_method
from sparqlab.runs import RunAborted, RunConfig, run
from sparqlab.runs.results import identity_changes
from support.service_rules import ServiceRules, serve_service_rules

QUESTIONS = PROJECT_ROOT / "data" / "wikidata_test" / "questions.jsonl"
RETRY = {"base_s": 0.01, "cap_s": 0.1, "max_attempts": 12}
SAME = ("predicted_sparql", "predicted_answers", "gold_answers", "f1", "em", "error_category", "model_calls")


def saved_identity(result) -> dict:
    return json.loads((result.run_dir / "config.json").read_text(encoding="utf-8"))["identity"]


def outcomes(result) -> dict[str, dict]:
    """Question id -> what must not depend on the endpoint (queries, answers, scores, model calls, actions)."""
    lines = (result.run_dir / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: {**{k: r[k] for k in SAME}, "actions": r["extra"]["actions"]} for r in map(json.loads, lines)}


def _runner(model_url: str, folder):
    """Run a configuration of an agent over the Wikidata-shaped questions, results and caches under ``folder``."""
    settings = {"output_root": str(folder / "runs"), "cache_path": str(folder / "responses.sqlite"),
                "progress": False}
    questions = load(str(QUESTIONS))

    def go(name: str, url: str, experiment: str, retry: dict = RETRY, concurrency: int = 16):
        config = RunConfig(experiment=experiment, kg="wikidata", kg_url=url,
                           kg_options={"search": "local", "retry": retry}, model="standin-agent",
                           model_url=model_url, concurrency=concurrency, **settings)
        return run(make_method(name), questions, config)

    return go


@pytest.fixture(scope="module")
def plain(wd_store, agent_model_url, tmp_path_factory):
    """Each agent's run against the plain server (once per fixture and method), and the server's URL."""
    folder = tmp_path_factory.mktemp("plain")
    done = {}
    with pytest.MonkeyPatch.context() as patch, serve_store(wd_store) as url:
        patch.setenv("SPARQLAB_CACHE", str(folder / "cache"))
        go = _runner(agent_model_url, folder)

        def get(method: str):
            if method not in done:
                done[method] = go(method, url, "plain")
            return done[method], url

        yield get


@pytest.fixture
def wd_run(agent_model_url, tmp_path, monkeypatch):
    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    return _runner(agent_model_url, tmp_path)


@pytest.mark.parametrize("method", ["spinach", "saga"])
def test_the_throttling_service_gives_the_plain_servers_answers_and_counts_every_retry(plain, wd_run, method):
    plain, plain_url = plain(method)
    rules = ServiceRules(throttle_rate=0.2, retry_after_s=0)
    with serve_service_rules(plain_url, rules) as (url, record):
        throttled = wd_run(method, url, "throttled")
    # another endpoint is another KG location (a new run id); its retry options are not the run's identity
    assert identity_changes(saved_identity(plain), saved_identity(throttled)) == ["kg content", "kg_url"]
    assert outcomes(throttled) == outcomes(plain) and throttled.metrics["f1"] == plain.metrics["f1"]
    metrics = throttled.metrics
    assert record.random > 0 and record.in_flight == 0 and record.peak_in_flight <= 5  # the profile's limit
    assert metrics["kg_throttled"] == record.throttled == metrics["kg_retries"]  # every throttle retried, counted
    assert metrics["kg_requests"] == record.forwarded + record.throttled and metrics["kg_wait_s"] > 0
    assert plain.metrics["kg_retries"] == plain.metrics["kg_throttled"] == 0
    assert metrics["n_gold_errors"] == plain.metrics["n_gold_errors"]


@pytest.mark.parametrize(("method", "refuse_after", "concurrency"), [("saga", 0, 16), ("spinach", 50, 1)])
def test_a_refusing_service_stops_the_run_and_the_same_call_resumes(plain, wd_run, tmp_path, method, refuse_after,
                                                                    concurrency):
    """SAGA stopped while it prepares (the schema index: nothing written), SPINACH one question at a time after
    about half of its queries (some questions saved)."""
    plain, plain_url = plain(method)
    rules = ServiceRules(refuse_after=refuse_after)
    with serve_service_rules(plain_url, rules) as (url, record):
        with pytest.raises(RunAborted) as caught:
            wd_run(method, url, "refused", {"base_s": 0.001, "max_attempts": 3}, concurrency)
        message = str(caught.value)
        assert "\n" not in message and "HTTP 429" in message and "the same call" in message
        written = list((tmp_path / "runs" / "refused").glob("*/predictions.jsonl"))
        lines = written[0].read_text(encoding="utf-8").splitlines() if written else []
        assert all('"endpoint_' not in line for line in lines)  # nothing scored as a failure
        assert (0 < len(lines) < 6) if refuse_after else (lines == [] and "preparing the run" in message)
        rules.refuse_after = None
        resumed = wd_run(method, url, "refused")
    assert resumed.answered == 6 - len(lines) and resumed.metrics["n_done"] == 6
    assert [path.parent for path in written] in ([], [resumed.run_dir])
    assert outcomes(resumed) == outcomes(plain) and resumed.metrics["f1"] == plain.metrics["f1"]
    assert record.refused > 0
