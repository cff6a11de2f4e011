"""What an endpoint sends is untrusted bytes (issue 51): a malformed result is a typed error of its query, an answer
that is no result at all stops the run, the row cap holds whatever the label says, and a graph answer cannot
expand."""

from __future__ import annotations

import json

import pytest

from sparqlab.kg import EndpointError, EndpointKG, EndpointUnavailable, QueryOptions
from sparqlab.kg.profiles import generic_profile
from support.hostile_http import hostile_server, http_reply

RESULTS_TYPE = "application/sparql-results+json"
LAUGHS = (b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa">'
          + b"".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">'.encode() for i in range(8))
          + b']><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description '
            b'rdf:about="urn:s"><p xmlns="urn:">&i;</p></rdf:Description></rdf:RDF>')


def endpoint(url: str) -> EndpointKG:
    return EndpointKG(f"{url}/sparql", generic_profile("hostile"), options=QueryOptions(timeout_s=5))


@pytest.mark.parametrize("body", [
    b'{"head": {"vars": ["a"]}, "results": {"bindings": ["x", "y"]}}',
    b'{"head": {"vars": ["a"]}, "results": {"bindings": [{"a": {"type": "literal", "value": 5}}]}}',
    b"[" * 100_000 + b"]" * 100_000,
    b'{"head": {}, "boolean": "false"}',
], ids=["bindings of strings", "a number as value", "100,000-deep nesting", "ASK boolean as a string"])
def test_a_malformed_result_is_an_endpoint_error_of_its_query(body):
    with hostile_server(http_reply(body, RESULTS_TYPE)) as url, pytest.raises(EndpointError, match="malformed"):
        endpoint(url).query("SELECT ?a WHERE { ?a ?b ?c }")


def test_an_answer_that_is_no_result_stops_the_run():
    page = http_reply(b"<html><body>Service temporarily in maintenance</body></html>", "text/html")
    with hostile_server(page) as url, pytest.raises(EndpointUnavailable, match="not a SPARQL result.*maintenance"):
        endpoint(url).query("SELECT ?a WHERE { ?a ?b ?c }")
    with hostile_server(page) as url, pytest.raises(EndpointUnavailable, match="not a SPARQL result"):
        endpoint(url).query("CONSTRUCT { ?a ?b ?c } WHERE { ?a ?b ?c }")


@pytest.mark.parametrize("content_type", ["text/plain", "APPLICATION/SPARQL-RESULTS+JSON"])
def test_the_row_cap_holds_whatever_the_content_type(content_type):
    rows = [{"a": {"type": "literal", "value": str(n)}} for n in range(50)]
    reply = http_reply(json.dumps({"head": {"vars": ["a"]}, "results": {"bindings": rows}}).encode(), content_type)
    # its last 40 bytes dripped over 20 s: only a client that stops reading at the row cap answers in time (5 s)
    with hostile_server(reply, drip_from=len(reply) - 40, interval_s=0.5) as url:
        result = endpoint(url).query("SELECT ?a WHERE { ?a ?b ?c }", max_rows=10)
    assert [row["a"].value for row in result.rows] == [str(n) for n in range(10)] and result.truncated


def test_a_graph_answer_is_capped_and_cannot_expand_entities():
    turtle = b"".join(b"<urn:s%d> <urn:p> <urn:o> .\n" % n for n in range(30))
    with hostile_server(http_reply(turtle, "Text/Turtle; charset=utf-8")) as url:
        result = endpoint(url).query("CONSTRUCT { ?a ?b ?c } WHERE { ?a ?b ?c }", max_rows=7)
    assert len(result.rows) == 7 and result.truncated and result.rows[0]["subject"].value == "urn:s0"
    laughs = http_reply(LAUGHS, "application/rdf+xml")
    with hostile_server(laughs) as url, pytest.raises(EndpointError, match="declares XML entities"):
        endpoint(url).query("DESCRIBE <urn:s>")
