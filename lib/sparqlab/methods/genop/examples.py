"""The paper's worked examples and a movie-KG demo as data: queries, the small RDF graph they run on, and the
scripts of the scripted model (the "assumed model outputs" of the paper, written out). Used by the notebook
``08_generative_sparql`` and by ``sparqlab genop run`` demos; the tests keep their own copies of what they assert.
"""

from __future__ import annotations

import json
from pathlib import Path

from sparqlab.data.question import Question

PAPER_GRAPH = """\
@prefix : <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
:Paris a :City ; rdfs:label "Paris" ; :hasTopic :Art .
:Art rdfs:label "Art" .
:Lyon a :Town ; rdfs:label "Lyon" .
:s1 :p :a ; :q :c .
:s2 :p :b .
:a rdfs:label "A" . :b rdfs:label "B" . :c rdfs:label "C" .
"""
"""Example 1's graph ``{:Paris a :City}`` plus what Examples 3–5 need (a topic of Paris for the MINUS variant,
the P1 / P2 data of Example 4) and a town for the non-stratified example. Labels give ``Canon``."""

_P = "PREFIX : <http://example.org/>\n"
_TOPIC_CITY = {"Find topic for Paris": ["art", "fashion"], "Find city for art": ["Florence"],
               "Find city for fashion": ["Milan"]}
"""The script of Example 3 and its MINUS variant."""
_DESCRIBE = {"Describe A": ["first letter"], "Describe B": ["second letter"]}
"""The script of the three Example 4 variants."""

EXAMPLES: dict[str, dict] = {
    "example1": {
        "title": "Example 1 / 6: two mutually dependent GenOps (one positive cycle)",
        "query": _P + """SELECT ?x ?y ?z WHERE {
  ?x a :City .
  GENOP("Suggest a topic related to ?x and ?z" AS ?y, "GPT-4o") .
  GENOP("Suggest a city related to topic ?y" AS ?z, "Gemini 1.5 Pro") .
}""",
        "script": {
            "Suggest a topic related to Paris and <unknown:?z>": ["art", "cuisine"],
            "Suggest a city related to topic art": ["Florence", "Rome"],
            "Suggest a city related to topic cuisine": ["Bologna"],
            "Suggest a topic related to Paris and Florence": ["art"],
            "Suggest a topic related to Paris and Rome": ["history"],
            "Suggest a topic related to Paris and Bologna": ["food"],
        },
    },
    "example2": {
        "title": "Example 2: one GenOp, two outputs",
        "query": _P + 'SELECT ?x ?y WHERE { ?x a :City . GENOP("Describe the city ?x" AS ?y, '
                      '"GPT-4o") }',
        "script": {"Describe the city Paris": ["capital of France", "cultural center"]},
    },
    "example3": {
        "title": "Example 3: a positive dependency g1 -> g2",
        "query": _P + """SELECT ?x ?y ?z WHERE {
  ?x a :City .
  GENOP("Find topic for ?x" AS ?y, "GPT-4o") .
  GENOP("Find city for ?y" AS ?z, "GPT-4o") .
}""",
        "script": _TOPIC_CITY,
    },
    "example3-minus": {
        "title": "Example 3, MINUS variant: the dependency becomes negative, sigma(g1) < sigma(g2)",
        "query": _P + """SELECT ?x ?y ?z WHERE {
  ?x a :City .
  GENOP("Find topic for ?x" AS ?y, "GPT-4o") .
  GENOP("Find city for ?y" AS ?z, "GPT-4o") .
  MINUS { ?x :hasTopic ?y . }
}""",
        "script": _TOPIC_CITY,
    },
    "example4-original": {
        "title": "Example 4: (P1 Join P2) Join g",
        "query": _P + 'SELECT * WHERE { ?s :p ?x . ?s :q ?z . GENOP("Describe ?x" AS ?y) }',
        "script": _DESCRIBE,
    },
    "example4-unsafe": {
        "title": "Example 4/5: P1 Join (P2 Join g), unsafe: P2 gives g no ?x",
        "query": _P + 'SELECT * WHERE { ?s :p ?x . { ?s :q ?z . GENOP("Describe ?x" AS ?y) } }',
        "script": _DESCRIBE,
    },
    "example4-safe": {
        "title": "Proposition 6: (P1 Join g) Join P2, safe since X is bound by P1 and P2 does not touch X",
        "query": _P + 'SELECT * WHERE { ?s :q ?z . { ?s :p ?x . GENOP("Describe ?x" AS ?y) } }',
        "script": _DESCRIBE,
    },
    "even-loop": {
        "title": "Non-stratified: a place survives unless a surviving row's topic names it (well-founded)",
        "query": _P + """SELECT ?x ?w WHERE {
  { ?x a ?type . MINUS { GENOP("Which city has the topic ?w" AS ?x) } }
  GENOP("Name a topic of ?x" AS ?w)
}""",
        "script": {"Name a topic of Paris": ["art"], "Name a topic of Lyon": ["silk"],
                   "Which city has the topic art": ["Lyon"], "Which city has the topic silk": ["Paris"]},
    },
}
"""Worked examples by name: ``title``, ``query`` (over :data:`PAPER_GRAPH`) and ``script``."""

MOVIE_QUERY = """\
SELECT ?film ?genre ?related WHERE {
  ?director rdfs:label "Ridley Scott" .
  ?film mrel:directed_by ?director ; mrel:has_genre ?genre .
  GENOP("Name a film genre that is closely related to ?genre" AS ?related, "gpt-oss-120b") .
  { ?related a mclass:Genre }
}"""
"""A generative query over the movie KG: a related genre for each genre of each Ridley Scott film, joined back to
the KG's genres by similarity (a generated ``?related`` meets the KG genre whose label matches it)."""

MOVIE_SCRIPT = {
    "Name a film genre that is closely related to Action": ["Adventure", "thriller", "Martial arts"],
    "Name a film genre that is closely related to Drama": ["Romance", "Melodrama"],
    "Name a film genre that is closely related to Comedy": ["Romance", "Parody"],
    "Name a film genre that is closely related to Sport": ["Drama"],
    "Name a film genre that is closely related to Crime": ["Thriller", "Mystery", "Heist"],
    "Name a film genre that is closely related to Adventure": ["Action", "Fantasy"],
    "Name a film genre that is closely related to War": ["Action", "History"],
    "Name a film genre that is closely related to Horror": ["Thriller", "Mystery"],
    "Name a film genre that is closely related to Thriller": ["Crime", "Mystery"],
    "Name a film genre that is closely related to Fantasy": ["Adventure", "Science fiction"],
}
"""Scripted outputs of the movie demo (offline default); some names are not KG genres and find no partner."""


EXAMPLE_QUESTION = Question(
    "example1-topic", "Which topic supports Paris and a city that supports it back?", gold_answers=["art"],
    metadata={"query": EXAMPLES["example1"]["query"].replace("SELECT ?x ?y ?z", "SELECT ?y")})
"""Example 1 as a question for ``sparqlab run genop`` (its ``query`` field; the fixpoint's topic is ``art``)."""


def write_example_files(folder: str | Path) -> dict[str, Path]:
    """Write :data:`PAPER_GRAPH` (``paper.ttl``), each example's query (``NAME.rq``) and script
    (``NAME.json``), the movie demo (``movie-demo.rq``, ``movie-demo.json``), and Example 1 as a question file
    (``questions.jsonl``; its script is ``example1.json``) into ``folder``; returns name -> path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"graph": folder / "paper.ttl"}
    paths["graph"].write_text(PAPER_GRAPH, encoding="utf-8")
    for name, example in {**EXAMPLES, "movie-demo": {"query": MOVIE_QUERY, "script": MOVIE_SCRIPT}}.items():
        (folder / f"{name}.rq").write_text(example["query"], encoding="utf-8")
        (folder / f"{name}.json").write_text(json.dumps(example["script"], indent=1), encoding="utf-8")
        paths[name] = folder / f"{name}.rq"
    paths["questions"] = folder / "questions.jsonl"
    paths["questions"].write_text(json.dumps(EXAMPLE_QUESTION.to_dict()) + "\n", encoding="utf-8")
    return paths
