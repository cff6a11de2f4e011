"""The read-only guard at the stores: a refused update leaves the store unchanged and never reaches an endpoint,
and the store's own parser names where a query breaks. The screen's decisions themselves are
tests/sparql/test_screen.py."""

from __future__ import annotations

import pytest

from sparqlab.kg import SparqlSyntaxError, UpdateRefused, open_kg
from sparqlab.kg.profiles import generic_profile


def test_syntax_error_names_position_and_line(small_ttl):
    """The parser (in the worker) reports where the error is and quotes the line, with its ranges summarised."""
    with open_kg(small_ttl, cache=False) as kg, pytest.raises(SparqlSyntaxError) as caught:
        kg.query("SELECT ?s\nWHERE { ?s ?p ?o } LIMT 3")
    message = str(caught.value)
    assert "error at 2:" in message
    assert "line 2: WHERE { ?s ?p ?o } LIMT 3" in message
    assert "\\u{" not in message  # the parser's Unicode ranges are summarised


def test_refused_update_leaves_the_store_unchanged(small_ttl):
    kg = open_kg(small_ttl, cache=False)
    try:
        count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
        before = kg.query(count).rows[0]["n"].value
        for update in ["INSERT DATA { <http://example.org/new> <http://example.org/p> 1 }",
                       "DELETE WHERE { ?s ?p ?o }", "CLEAR ALL", "DROP ALL"]:
            with pytest.raises(UpdateRefused):
                kg.query(update)
        assert kg.query(count).rows[0]["n"].value == before
        assert int(before) > 0
        assert kg.query("ASK { <http://example.org/new> ?p ?o }").boolean is False
    finally:
        kg.close()


def test_guard_runs_before_any_endpoint(refused_url):
    """An update to an unreachable endpoint is refused by the guard, not reported as a connection error (the
    profile is given: deriving one would read the endpoint, and an unreachable one stops that with
    EndpointUnavailable, as `sparqlab query --kg URL` shows in test_kg_cli)."""
    kg = open_kg(refused_url, profile=generic_profile("unreachable"), cache=False)
    with pytest.raises(UpdateRefused):
        kg.query("DROP ALL")
