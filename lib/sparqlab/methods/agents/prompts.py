"""The agents' prompt table (SAGA appendix F, in our own words), written for gpt-oss-120b and Llama-3.1-70B served by
vLLM as chat models: a system message with the instructions, a user message with the question and the recent
trajectory. The controller's reply is plain text ``Thought: … / Action: name(argument)``; generation stops at the
observation marker, so the model never writes an observation itself.

Templates:

- ``controller`` / ``controller_input``: SPINACH's step-by-step ReAct instructions (F.2 without the SAGA parts);
- ``saga_controller``: the same plus schema-guided property selection, the current type context (expected answer
  type, known entity types from Θ) and the knowledge log of recent outcomes (F.2's SAGA additions);
- ``saga_controller_state_last`` / ``saga_controller_input_state_last``: the same text with the type context and
  knowledge log moved from the system prompt to after the history (SAGA's ``prompt_layout=state_last``);
- ``controller_tools`` / ``saga_controller_tools`` / ``saga_controller_state_last_tools``: the same system prompts
  with ``action_format=tools``, where the actions are offered as native functions (the user message is the same);
- ``reparse``: the temperature-0 call that turns an unparseable controller reply into JSON
  ``{thought, action_name, action_argument}``;
- ``prune``: SPINACH's neighbourhood pruning (F.3): keep the part of an entity's edges that can help; its
  worked example is the KG profile's (``conventions.prune_example``: SAGA's Freebase one has MIDs, dotted
  relations and a CVT value), else :data:`PRUNE_EXAMPLE`;
- ``answer_type``: SAGA's one-off expected-answer-type call (F.1), answered as JSON ``{answer_type_label,
  answer_type_id}``.
"""

from __future__ import annotations

from sparqlab.platform.prompts import PromptTemplate, prompt_table

OBSERVATION_MARKER = "\nObservation"
"""Where the controller's generation stops (the stop sequence of the controller call)."""

_STEPS = """\
You answer questions by writing a SPARQL query over the {kg_name} knowledge graph, step by step:
1. Begin with very small fragments of the query.
2. Run each fragment to check it, and change it when the observation shows it is wrong.
3. Check every assumption about how the knowledge graph models a fact before relying on it.
4. Extend the query one piece at a time until it answers the whole question.
5. Never repeat an action you already took: its result would be the same.
6. The answer is in the knowledge graph, so keep going until you find it.
7. For a yes/no question with a single answer, finish with an ASK query.
8. Project the answer entities themselves (their ids), not only their labels.
9. If the answer was in the last lookup and you are ready to stop, first run the query that retrieves it with
   execute, then stop.

About this knowledge graph:
{kg_notes}"""

ACTION_HELP = {
    "lookup": ("ID", "the entity's label, description and types, and its properties with their values (outgoing "
                     "edges;\n  incoming edges where the knowledge graph stores facts from the other side)."),
    "search": ("text", "entities and properties whose names match the text, with their ids."),
    "examples": ("PROPERTY_ID", "a few real uses of the property (subject -> object)."),
    "execute": ("SPARQL", "run a SPARQL query and show its result, cut to the first rows."),
    "stop": ("", "end; the last query you executed is the final answer."),
}
"""What each action does, as the controller prompt lists it (and, with ``action_format=tools``, as each function's
description says it)."""

_ACTION_LIST = "\n".join(f"- {name}({argument}): {text}" for name, (argument, text) in ACTION_HELP.items())

_ACTIONS = """\
Write exactly one "Thought" and exactly one "Action", then wait for the "Observation". The actions are:
""" + _ACTION_LIST + """

Reply in this form and nothing else:
Thought: <your reasoning for the next step>
Action: <one action, e.g. search(Ridley Scott) or execute(SELECT ?x WHERE {{ ... }})>"""

_ACTIONS_TOOLS = """\
Take one step at a time: write your reasoning for the next step as the text of your reply (the "Thought"), call
exactly one of the functions below (the "Action") and wait for its result (the "Observation"). The functions:
""" + _ACTION_LIST + """

Call one function per reply, with its arguments as the function's schema says."""
"""The actions part of the controller prompt with ``action_format=tools``: the same actions, offered as functions."""

_SAGA_SCHEMA = """\
## Choosing properties with the schema
- Lookups and property search show each property as "label (ID): description domain: … range: …" where the
  knowledge graph declares which types it connects; "domain: usually …" is only what samples of its uses show.
- The domain is the type the subject (left side of the triple) must have; the range is the type of the object.
- Prefer a property whose domain fits the known type of your subject and whose range fits the expected answer
  type; use domain and range to tell apart properties with similar names.
- A lookup shows the entity's types and already leaves out properties whose domain excludes them.
- [BLOCKED] from execute means a triple pattern uses a property whose domain excludes the known type of its
  subject: pick a property that fits that type instead.
- An empty result means a wrong property, direction or entity: check the knowledge log and try something else."""

_SAGA_STATE = """\
## Current type context
Expected answer type: {answer_type}
Known types (most recent last):
{type_env}

## Knowledge log (recent outcomes)
{knowledge_log}
([ok] = the query found results; [fail] = empty or blocked; [info] = a type was learnt. Do not retry what
failed.)"""

_CONTROLLER_BLOCKS = {
    "controller": (_STEPS,),
    "saga_controller": (_STEPS, _SAGA_SCHEMA, _SAGA_STATE),
    "saga_controller_state_last": (_STEPS, _SAGA_SCHEMA),
}
"""The blocks of each controller system prompt before its actions part, which are the same in both action
formats."""


def _controller(name: str, action_format: str = "text") -> PromptTemplate:
    """The controller system prompt ``name``: its blocks, then the actions part of ``action_format`` (``tools``:
    the prompt ``<name>_tools``)."""
    actions = _ACTIONS_TOOLS if action_format == "tools" else _ACTIONS
    suffix = "_tools" if action_format == "tools" else ""
    return PromptTemplate(name + suffix, "\n\n".join((*_CONTROLLER_BLOCKS[name], actions)))


CONTROLLER = _controller("controller")

SAGA_CONTROLLER = _controller("saga_controller")
"""SAGA's controller system prompt in the paper's layout: the type context and knowledge log, which change at
every step, in the middle."""

SAGA_CONTROLLER_STATE_LAST = _controller("saga_controller_state_last")
"""The same system prompt without the changing blocks (``prompt_layout=state_last``): identical for every step of
every question on one KG, so a server's prefix cache keeps all of it."""

CONTROLLER_INPUT = PromptTemplate("controller_input", """\
User Question: {question}
{action_history}
Write one "Thought" and one "Action":""")

SAGA_CONTROLLER_INPUT_STATE_LAST = PromptTemplate("saga_controller_input_state_last", """\
User Question: {question}
{action_history}

""" + _SAGA_STATE + """

Write one "Thought" and one "Action":""")
"""The user message of ``prompt_layout=state_last``: the paper's type context and knowledge log after the history."""

REPARSE = PromptTemplate("reparse", """\
Below is the output of an agent that should have written one thought and one action. Rewrite it as a JSON object
with three fields:
- "thought": the agent's reasoning, as a string;
- "action_name": one of {action_names};
- "action_argument": the action's argument as a string (the full SPARQL query for execute, "" for stop).
Return only the JSON object.

Agent output:
{output}""")

PRUNE = PromptTemplate("prune", """\
You help write a SPARQL query that answers a question. Below is one entity of the knowledge graph with its
properties and values, as a JSON object. Remove every property that cannot help to write the query, and return
the rest as a JSON object of the same shape (same keys, same values). Return only the JSON object.

Example:
{example}

Entity: {entity}
{edges}
Question: {question}
Output:""")

PRUNE_EXAMPLE = """\
Entity: OneRepublic (wd:Q1438730): American pop rock band formed in 2002
{"instance of (wdt:P31)": ["musical group (wd:Q215380)"], "genre (wdt:P136)": ["pop rock (wd:Q484641)"],
 "record label (wdt:P264)": ["Columbia Records (wd:Q183387)"], "discography (wdt:P358)": ["OneRepublic
 discography (wd:Q935670)"]}
Question: What is the title of the second single on OneRepublic's third album?
Output:
{"instance of (wdt:P31)": ["musical group (wd:Q215380)"], "discography (wdt:P358)": ["OneRepublic discography
 (wd:Q935670)"]}"""
"""The pruning prompt's worked example (SPINACH's, appendix F.3) for KGs whose profile gives none."""

ANSWER_TYPE = PromptTemplate("answer_type", """\
What type of thing does the question ask for? Return only a JSON object with two fields:
- "answer_type_label": a short English name of the type (for example person, country, city, film, date, number);
- "answer_type_id": the most relevant class id of that type in the {kg_name} knowledge graph (any class of the
  graph; common ones are listed below as examples), or "" if unknown.
For a yes/no question return {{"answer_type_label": "boolean", "answer_type_id": ""}}; for a count or another
number return {{"answer_type_label": "quantity", "answer_type_id": ""}}.

Common types of this knowledge graph (examples, not a complete list):
{type_catalogue}

Question: Who directed the film Alien?
{{"answer_type_label": "person", "answer_type_id": "{person_example}"}}
Question: How many films did Stanley Kubrick direct?
{{"answer_type_label": "quantity", "answer_type_id": ""}}
Question: {question}""")

PROMPTS = prompt_table(CONTROLLER, SAGA_CONTROLLER, CONTROLLER_INPUT, REPARSE, PRUNE, ANSWER_TYPE)
"""Every agent prompt by name; SPINACH uses all but ``saga_controller`` and ``answer_type``."""

SAGA_STATE_LAST_PROMPTS = prompt_table(SAGA_CONTROLLER_STATE_LAST, SAGA_CONTROLLER_INPUT_STATE_LAST)
"""SAGA's controller prompts of ``prompt_layout=state_last`` (in its prompt table only with that layout)."""

ACTION_TOOLS_PROMPTS = prompt_table(*(_controller(name, "tools") for name in _CONTROLLER_BLOCKS))
"""The controller system prompts of ``action_format=tools`` (``<name>_tools`` beside each text-format one, in a
method's prompt table only with that format): the actions are described as functions to call."""
