"""The template memory and the GGC stand-ins on their own: entity re-filling, prompt parsing, and the corrector's
fallback to the generated query; the prompts render with each KG's conventions."""

import pytest
from ggc_helpers import MEMORY

from sparqlab.kg.profiles import get_profile
from sparqlab.llm import get_model
from sparqlab.methods.ggc.prompts import (
    PROMPTS,
    PromptAdditions,
    conventions_for,
    corrector_messages,
    generator_messages,
)
from sparqlab.methods.ggc.standins import question_in
from sparqlab.methods.ggc.template_memory import bracketed, fill_template, mask_entities, same_query
from sparqlab.platform.parsing import extract_sparql

EVERY_ADDITION = PromptAdditions(kg_rules=True, schema_listing=True, reply_fence=True)

TEMPLATE = 'SELECT ?uri WHERE { ?a rdfs:label "Alien" . ?b rdfs:label "Sigourney \\"S\\" Weaver" . FILTER(?l != "Alien") }'


def test_fill_template_maps_entities_in_order_and_escapes():
    filled = fill_template(TEMPLATE, ["Alien", 'Sigourney "S" Weaver'], ["Heat", 'Al "P" Pacino'])
    assert filled == ('SELECT ?uri WHERE { ?a rdfs:label "Heat" . ?b rdfs:label "Al \\"P\\" Pacino" . '
                      'FILTER(?l != "Heat") }')
    assert fill_template(TEMPLATE, ["Alien"], ["Heat", "Pacino"]) is None
    assert bracketed("films by [Ridley Scott] tagged [sci-fi]") == ["Ridley Scott", "sci-fi"]
    assert mask_entities("films by [Ridley Scott] tagged [sci-fi]") == "films by [X] tagged [X]"
    assert same_query("SELECT  ?x\n{ }", "SELECT ?x { }") and not same_query(None, "SELECT")


def test_prompts_render_with_each_kgs_conventions():
    for name in ("movies", "wikidata", "freebase", "ck25"):
        conventions = conventions_for(get_profile(name))
        system, user = generator_messages("who directed [Heat]?", name, "NOTES", conventions, EVERY_ADDITION)
        assert "NOTES" in system["content"] and question_in(user["content"]) == "who directed [Heat]?"
        assert conventions.query_rules in system["content"] and ("about films" in system["content"]) == (name == "movies")
        paper, _ = generator_messages("who directed [Heat]?", name, "NOTES", conventions)
        assert "NOTES" not in paper["content"] and f"knowledge graph is {name}" in paper["content"]
        system, user = corrector_messages("who directed [Heat]?", "SELECT ?x {}", name, "NOTES", conventions,
                                          feedback="the query executes but returns no results")
        assert extract_sparql(user["content"]) == "SELECT ?x {}" and "returns no results" in user["content"]
    ck25 = conventions_for(get_profile("ck25")).query_rules  # no rules of its own: read off its profile
    assert "pv: <http://ld.company.org/prod-vocab/>" in ck25 and "rdfs:label" in ck25
    plain = corrector_messages("q", "SELECT ?x {}", "m", "n", conventions_for(get_profile("movies")))
    assert "Execution feedback" not in plain[1]["content"]
    assert all(template.digest for template in PROMPTS.values())


def test_standins_answer_from_memory_and_corrector_keeps_what_it_cannot_improve(movies):
    rules = conventions_for(get_profile("movies"))
    with pytest.raises(ValueError, match="no questions to remember: run it inside a run"):
        get_model("standin-knn", **MEMORY).chat_sync(generator_messages("q [X]?", "movies", "notes", rules))
    generator = get_model("standin-knn", dataset="mcqa-movies", **MEMORY)
    corrector = get_model("standin-corrector", dataset="mcqa-movies", kg="movies", **MEMORY)
    question = "which [Drama] movies did [Ridley Scott] direct?"
    reply = generator.chat_sync(generator_messages(question, "movies", "notes", rules))
    query = extract_sparql(reply.text)
    assert query and '"Ridley Scott"' in query and generator.is_standin
    assert generator.chat_sync([{"role": "user", "content": "no question here"}]).text.startswith("I could not")
    unanswerable = "which [Nothing] movies did [Nobody Atall] direct?"
    kept = corrector.chat_sync(corrector_messages(unanswerable, query, "movies", "notes", rules))
    assert extract_sparql(kept.text) == query  # no candidate executes non-empty: the input comes back unchanged
    with pytest.raises(ValueError, match="k must be"):
        get_model("standin-corrector", k=0, **MEMORY)
