"""The endpoint client against a service's limits: the retry policy on its own (injected clock), then
``EndpointKG`` and the search API behind local stand-ins that play Wikidata's rules (429 with Retry-After over
five in flight and at random, 500 timeout bodies, 403 without a User-Agent, ``maxlag``)."""

from __future__ import annotations

import json
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from sparqlab.graphs.profiles import WIKIDATA
from sparqlab.graphs.wikidata import WikidataApiSearch
from sparqlab.kg import EndpointKG, EndpointUnavailable, KGError, QueryOptions, QueryTimeout, open_kg
from sparqlab.kg.profiles import generic_profile
from sparqlab.kg.service import RetryPolicy, ServiceClient, Throttled, retry_after_seconds
from support.service_rules import ServiceRules, serve_service_rules

EX = "http://example.org/"
FAST = RetryPolicy(base_s=0.001, cap_s=0.01)


def scripted(answers):
    """A request function raising the given Throttled answers in turn, then returning "ok"."""
    pending = list(answers)

    def request():
        if pending:
            raise pending.pop(0)
        return "ok"

    return request


def test_retry_after_is_waited_as_given_and_back_off_grows_without_it():
    waits = []
    client = ServiceClient(RetryPolicy(base_s=1.0, cap_s=8.0), sleep=waits.append, rng=random.Random(0))
    assert client.call("u", None, scripted([Throttled(429, 3.0, "slow down")] + [Throttled(503, None, "busy")] * 4)) == "ok"
    assert 3.0 <= waits[0] <= 4.0  # Retry-After, plus the first back-off step's jitter
    assert all(0 <= w <= min(8.0, 2 ** n) for n, w in enumerate(waits[1:], start=1))
    assert len(set(waits)) == len(waits)  # jittered
    assert client.stats() == {"requests": 6, "retries": 5, "throttled": 5, "connection_failures": 0,
                              "wait_s": round(sum(waits), 3), "refused": 0, "server_timeouts": 0}


def test_the_budget_and_the_attempts_end_in_endpoint_unavailable():
    client = ServiceClient(RetryPolicy(budget_retries=3, base_s=0.0), sleep=lambda s: None)
    with pytest.raises(EndpointUnavailable, match="retry budget of this run is spent"):
        client.call("u", None, scripted([Throttled(429, 0.0, "no")] * 10))
    assert client.stats()["retries"] == 3
    client = ServiceClient(RetryPolicy(max_attempts=2, base_s=0.0), sleep=lambda s: None)
    with pytest.raises(EndpointUnavailable, match="2 tries of one request with HTTP 429"):
        client.call("u", None, scripted([Throttled(429, None, "no")] * 3))
    waited = ServiceClient(RetryPolicy(budget_wait_s=5.0), sleep=lambda s: None)
    with pytest.raises(EndpointUnavailable, match="5 s"):
        waited.call("u", None, scripted([Throttled(429, 60.0, "come back in a minute")]))


def test_retry_after_dates_and_garbage():
    assert retry_after_seconds("120") == 120.0 and retry_after_seconds(None) is None
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == 10.0


@pytest.fixture(scope="module")
def small_upstream(small_store):
    from sparqlab.engines.oxigraph_server import serve_store

    with serve_store(small_store) as url:
        yield url


def _queries() -> list[str]:
    return [f"SELECT ?s ?o WHERE {{ ?s ?p ?o }} ORDER BY ?s ?o LIMIT {n}" for n in range(1, 25)]


def test_answers_through_the_throttling_stand_in_equal_the_plain_servers(small_upstream):
    plain = EndpointKG(small_upstream, generic_profile("small"))
    expected = [plain.query(q).rows for q in _queries()]
    rules = ServiceRules(throttle_rate=0.3, delay_s=0.02)
    with serve_service_rules(small_upstream, rules) as (url, record):
        limited = EndpointKG(url, generic_profile("small"), options=QueryOptions(max_in_flight=5, retry=FAST))
        with ThreadPoolExecutor(16) as pool:
            got = list(pool.map(lambda q: limited.query(q).rows, _queries()))
        assert got == expected
        stats = limited.service.stats()
        assert record.in_flight == 0 and record.peak_in_flight <= 5  # the client never has more than five out
        assert record.random > 0 and stats["throttled"] == stats["retries"] == record.throttled
        rules.throttle_rate = 0.0  # only the in-flight rule now
        patient = RetryPolicy(max_attempts=12, base_s=0.05, cap_s=0.5)  # longer than a query takes: collisions thin out
        greedy = EndpointKG(url, generic_profile("small"), options=QueryOptions(max_in_flight=16, retry=patient))
        with ThreadPoolExecutor(16) as pool:
            assert list(pool.map(lambda q: greedy.query(q).rows, _queries())) == expected
        assert record.in_flight > 0  # over five in flight: 429s, each retried
        assert greedy.service.stats()["retries"] == greedy.service.stats()["throttled"] > 0


def test_the_wikidata_profile_holds_five_in_flight(small_upstream):
    with serve_service_rules(small_upstream, ServiceRules(delay_s=0.05)) as (url, record):
        kg = EndpointKG(url, WIKIDATA, options=QueryOptions(retry=FAST))
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda q: kg.query(q), _queries()))
        assert record.in_flight == 0 and record.peak_in_flight == 5


def test_a_timeout_body_is_a_query_timeout_and_is_not_retried(small_upstream):
    with serve_service_rules(small_upstream, ServiceRules(timeout_pattern="LIMIT 7\\b")) as (url, record):
        kg = EndpointKG(url, generic_profile("small"), options=QueryOptions(retry=FAST))
        with pytest.raises(QueryTimeout, match="its own time limit"):
            kg.query(_queries()[6])
        assert record.timeouts == 1 and kg.service.stats()["retries"] == 0
        assert kg.service.stats()["server_timeouts"] == 1


def test_a_client_without_user_agent_is_refused_and_this_one_always_sends_it(small_upstream):
    with serve_service_rules(small_upstream) as (url, record):
        assert len(EndpointKG(url, generic_profile("small")).query(_queries()[0]).rows) == 1
        anonymous = EndpointKG(url, generic_profile("small"), user_agent="")
        with pytest.raises(EndpointUnavailable, match="HTTP 403"):
            anonymous.query(_queries()[0])
        assert record.forbidden == 1 and anonymous.service.stats()["refused"] == 1


def test_a_service_refusing_everything_stops_the_client_with_one_clear_error(small_upstream):
    with serve_service_rules(small_upstream, ServiceRules(refuse_all=True)) as (url, record):
        kg = EndpointKG(url, generic_profile("small"), options=QueryOptions(retry=RetryPolicy(max_attempts=4,
                                                                                              base_s=0.001)))
        with pytest.raises(EndpointUnavailable) as caught:
            kg.query(_queries()[0])
        assert not isinstance(caught.value, KGError) and "\n" not in str(caught.value)
        assert "4 tries of one request with HTTP 429, Retry-After 0 s" in str(caught.value)
        assert record.refused == 4 and record.forwarded == 0


class _FakeSearchApi(BaseHTTPRequestHandler):
    """A wbsearchentities stand-in: ``maxlag`` once, a 429 once, then hits in the API's order (an alias match
    first, as Wikidata ranks "wife" -> spouse)."""

    answers: list = []
    seen: list = []

    def log_message(self, *args):
        pass

    def do_GET(self):  # noqa: N802
        type(self).seen.append((self.path, self.headers.get("User-Agent")))
        status, headers, body = type(self).answers.pop(0) if type(self).answers else (200, {}, RESULT)
        data = json.dumps(body).encode()
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", **headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


RESULT = {"search": [
    {"id": "P26", "concepturi": "http://www.wikidata.org/entity/P26", "label": "spouse",
     "description": "the subject has the object as their spouse", "match": {"type": "alias", "language": "en",
                                                                          "text": "wife"}},
    {"id": "P451", "concepturi": "http://www.wikidata.org/entity/P451", "label": "unmarried partner",
     "match": {"type": "alias", "language": "en", "text": "wife (common-law)"}},
    {"id": "P9999", "concepturi": "http://www.wikidata.org/entity/P9999", "label": "wife of",
     "match": {"type": "label", "language": "en", "text": "wife of"}},
]}


def test_the_search_api_keeps_its_order_and_alias_matches_and_waits_out_maxlag(tmp_path):
    _FakeSearchApi.answers = [(200, {"Retry-After": "0"}, {"error": {"code": "maxlag", "info": "lagged", "lag": 7}}),
                              (429, {"Retry-After": "0"}, {"error": "too many"})]
    _FakeSearchApi.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeSearchApi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    empty = tmp_path / "empty.ttl"
    empty.write_text("", encoding="utf-8")
    kg = open_kg(empty, profile="wikidata", cache=False, retry={"base_s": 0.001})
    try:
        search = WikidataApiSearch(kg, f"http://127.0.0.1:{server.server_address[1]}/w/api.php")
        hits = search.search("wife", kind="property", limit=5)
        assert [h.label for h in hits] == ["spouse", "unmarried partner", "wife of"]  # no re-ranking by label
        assert hits[0].matched == "wife" and hits[0].score == 100.0 and hits[2].matched == ""
        assert kg.service.stats()["throttled"] == 2 and kg.service.stats()["retries"] == 2
        assert all("maxlag=5" in path and agent.startswith("sparqlab/") for path, agent in _FakeSearchApi.seen)
    finally:
        server.shutdown()
        server.server_close()
        kg.close()
