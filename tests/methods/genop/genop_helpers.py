"""Shared data of the GenOp tests: the paper's examples as an RDF graph and queries, the scripted model of Examples
1/6, and a helper that evaluates a query with a script. (A named module, not ``conftest``: test folders share the
name ``conftest``, so importing from it picks whichever folder's came first.)"""

from __future__ import annotations

from sparqlab.methods.genop import EvalSettings, Oracle, ScriptedModel, run_genop

EXAMPLES_TTL = """\
@prefix : <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
:Paris a :City ; rdfs:label "Paris" .
:Lyon a :Town ; rdfs:label "Lyon" ; :hasTopic :Silk .
:Art rdfs:label "Art" .
:Silk rdfs:label "silk" .
:s1 :p :a ; :q :c .
:s2 :p :b .
:a rdfs:label "A" . :b rdfs:label "B" . :c rdfs:label "C" .
"""

PREFIX = "PREFIX : <http://example.org/>\n"

EXAMPLE1 = PREFIX + """SELECT ?x ?y ?z WHERE {
  ?x a :City .
  GENOP("Suggest a topic related to ?x
         and ?z" AS ?y, "GPT-4o") .
  GENOP("Suggest a city related to
         topic ?y" AS ?z, "Gemini 1.5 Pro") .
}"""

EXAMPLE1_SCRIPT = {
    # Round 1 (App. A.1): ?z unknown, so the sentinel stands in its place.
    "Suggest a topic related to Paris and <unknown:?z>": ["art", "cuisine"],
    # Round 2: conditional proposals for ?z.
    "Suggest a city related to topic art": ["Florence", "Rome"],
    "Suggest a city related to topic cuisine": ["Bologna"],
    # Fully instantiated prompts of g1: only (art, Florence) supports itself (Example 6).
    "Suggest a topic related to Paris and Florence": ["art"],
    "Suggest a topic related to Paris and Rome": ["history"],
    "Suggest a topic related to Paris and Bologna": ["food"],
}


def scripted(script: dict, **options) -> Oracle:
    """An oracle over the scripted model (``options``: memoise, aggregation)."""
    return Oracle.for_model(ScriptedModel(script), **options)


def run(kg, text: str, script: dict, memoise: bool = True, **settings):
    """Evaluate ``text`` on ``kg`` with a scripted oracle; returns (result, oracle)."""
    oracle = scripted(script, memoise=memoise)
    return run_genop(text, kg, oracle, EvalSettings(**settings)), oracle


def values(result) -> list[dict[str, tuple[str, str]]]:
    """The rows as {var: (value, origin)}."""
    return [{v: (t.value, t.origin) for v, t in row.items()} for row in result.rows]
