"""Action parsing (model output is parsed, never evaluated) and the stand-in controller's lexical policy."""

import json

from sparqlab.methods.agents.actions import parse_action, parse_reparse
from sparqlab.methods.agents.standins import (
    answer_type_reply,
    controller_reply,
    label_score,
    mentions,
    question_concepts,
    question_form,
)


def test_actions_parse_with_nested_parentheses_fences_quotes_and_aliases():
    action = parse_action("Thought: count them\nAction: execute_sparql(SELECT (COUNT(?x) AS ?n) WHERE { ?x ?p ?o . "
                          "FILTER(?x != wd:Q1) })")
    assert (action.thought, action.name) == ("count them", "execute")
    assert action.argument == "SELECT (COUNT(?x) AS ?n) WHERE { ?x ?p ?o . FILTER(?x != wd:Q1) }"
    assert parse_action('Thought: a\nAction: search("Jack London")').argument == "Jack London"
    assert parse_action("Action: execute(```sparql\nASK { ?s ?p ?o }\n```)").argument == "ASK { ?s ?p ?o }"
    assert parse_action("Thought: x\nAction: get_wikidata_entry(wd:Q5)\nObservation: made up").render() == \
        "lookup(wd:Q5)"
    assert parse_action("Thought: done\nAction: stop").name == "stop"


def test_unreadable_outputs_give_none():
    for text in ("I will now search.", "Action: fly(home)", "Thought: x\nAction: search", ""):
        assert parse_action(text) is None, text
    assert parse_reparse('{"action_name": "search"') is None
    assert parse_reparse('{"action_name": "teleport", "action_argument": "x"}') is None
    assert parse_reparse('sure: {"x": 1} {"thought": "t", "action_name": "execute_sparql", "action_argument": '
                         '"ASK {}"}').render() == "execute(ASK {})"
    assert parse_reparse("__import__('os')") is None


def test_standin_reads_mentions_forms_and_word_forms():
    assert mentions("what films did [Ridley Scott] direct") == ["Ridley Scott"]
    assert mentions("Is White Fang set in Yukon?") == ["White Fang", "Yukon"]
    assert mentions("Who is the author of White Fang?") == ["White Fang"]
    assert [question_form(q) for q in ("Is X set in Y?", "How many works did X write?", "who wrote X")] == \
        ["ask", "count", "select"]
    wanted = question_concepts("who wrote [Alien]")
    assert label_score("written_by", wanted) == 1.0 and label_score("directed_by", wanted) == 0.0
    wanted = question_concepts("Which country is Jackson located in?")
    assert label_score("country", wanted) == 1.0 > label_score("country of citizenship", wanted) == 0.5


def test_standin_policy_steps_through_search_lookup_execute_stop():
    question = "User Question: who directed [Alien]\n"
    assert controller_reply(question).endswith("Action: search(Alien)")
    search = ("Thought: t\nAction: search(Alien)\nObservation: entities:\n"
              "- Alien (<http://m/e/Tag/Alien>): a tag [types: Tag]\n- Alien (<http://m/e/Film/Alien>): a film\n")
    assert controller_reply(question + search).endswith("Action: lookup(<http://m/e/Tag/Alien>)")
    tag = ("Thought: t\nAction: lookup(<http://m/e/Tag/Alien>)\nObservation: Alien\ntypes: Tag\n"
           "incoming properties (the entity is the object):\n- has_tags (mrel:has_tags)\n    <- X (<http://m/x>)\n")
    assert controller_reply(question + search + tag).endswith("Action: lookup(<http://m/e/Film/Alien>)")
    film = ("Thought: t\nAction: lookup(<http://m/e/Film/Alien>)\nObservation: Alien\ntypes: Film\n"
            "outgoing properties (the entity is the subject):\n- written_by (mrel:written_by)\n    -> Y\n"
            "- directed_by (mrel:directed_by)\n    -> Ridley Scott (<http://m/r>)\n")
    query = "SELECT DISTINCT ?x WHERE { <http://m/e/Film/Alien> mrel:directed_by ?x }"
    assert controller_reply(question + search + tag + film).endswith(f"Action: execute({query})")
    done = f"Thought: t\nAction: execute({query})\nObservation: ?x\nRidley Scott (<http://m/r>)\n"
    assert controller_reply(question + search + tag + film + done).endswith("Action: stop()")
    empty = f"Thought: t\nAction: execute({query})\nObservation: (no rows)\n[WARNING] none\n"
    assert controller_reply(question + search + tag + film + empty).endswith("Action: stop()")  # nothing else fits


def test_standin_answer_type_rules():
    prompt = "Types of this knowledge graph:\n- film: mclass:Film\n- person: mclass:Person\n\nQuestion: {}"
    assert json.loads(answer_type_reply(prompt.format("who directed Alien"))) == {
        "answer_type_label": "person", "answer_type_id": "mclass:Person"}
    assert json.loads(answer_type_reply(prompt.format("what films did X direct")))["answer_type_id"] == "mclass:Film"
    assert json.loads(answer_type_reply(prompt.format("Is X a film?")))["answer_type_label"] == "boolean"
    assert json.loads(answer_type_reply(prompt.format("How many films?")))["answer_type_label"] == "quantity"


def test_standin_pruning_keeps_matching_properties_in_both_directions():
    from sparqlab.methods.agents.prompts import PRUNE, PRUNE_EXAMPLE
    from sparqlab.methods.agents.standins import prune_reply

    edges = {"place of birth (wdt:P19)": ["San Francisco (wd:Q62)"], "occupation (wdt:P106)": ["writer (wd:Q36180)"],
             "(incoming) author (wdt:P50)": ["White Fang (wd:Q1045540)"]}
    prompt = PRUNE.render(example=PRUNE_EXAMPLE, entity="Jack London (wd:Q45765)", edges=json.dumps(edges),
                          question="Which novels did Jack London write?")
    assert json.loads(prune_reply(prompt)) == {"(incoming) author (wdt:P50)": ["White Fang (wd:Q1045540)"]}
    unrelated = PRUNE.render(example=PRUNE_EXAMPLE, entity="Jack London (wd:Q45765)", edges=json.dumps(edges),
                             question="Is it blue?")
    assert json.loads(prune_reply(unrelated)) == edges  # nothing matches: everything is kept
