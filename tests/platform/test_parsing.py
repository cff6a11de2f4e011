"""SPARQL extraction from untrusted model output."""

import pytest

from sparqlab.platform.parsing import extract_sparql


@pytest.mark.parametrize("reply, expected", [
    ("```sparql\nSELECT ?x WHERE { ?x ?p ?o }\n```", "SELECT ?x WHERE { ?x ?p ?o }"),
    ("Here it is:\n```\nASK { <a> <b> <c> }\n```\nHope this helps.", "ASK { <a> <b> <c> }"),
    ("First try:\n```sparql\nSELECT ?a WHERE { ?a ?b ?c }\n```\nBetter:\n```sparql\nSELECT ?b WHERE { ?a ?b ?c }\n```",
     "SELECT ?b WHERE { ?a ?b ?c }"),
    ("Thought: simple.\nPREFIX r: <http://x/>\nSELECT ?x WHERE { ?x r:p ?o . }\nLIMIT 5\n\nThe query returns x.",
     "PREFIX r: <http://x/>\nSELECT ?x WHERE { ?x r:p ?o . }\nLIMIT 5"),
    ("select distinct ?x where { ?x ?p ?o }", "select distinct ?x where { ?x ?p ?o }"),
])
def test_extracts_query(reply, expected):
    assert extract_sparql(reply) == expected


@pytest.mark.parametrize("reply", ["", "I do not know.", "```python\nprint('hi')\n```"])
def test_no_query_gives_none(reply):
    assert extract_sparql(reply) is None
