"""``standin-agent``: a deterministic, non-LLM controller for the agents, so the whole pipeline runs offline and as
a lexical baseline. It is never an LLM result.

It reads exactly the messages a model gets and answers in the same formats:

- controller prompt: a fixed lexical policy recomputed from the visible trajectory — search the topic entity
  (the bracketed mention, else the capitalised word sequences), look up its candidates in search order (exact
  label matches first), take the shown property whose label best matches the question's words (a small table
  of word forms, e.g. wrote/writer/author), execute a SELECT, ASK (second mention as object) or COUNT query by
  the question's form, and stop after the first non-empty result; an empty or blocked result moves on to the
  next property, then to the next candidate entity;
- answer-type prompt: a wh-word rule (who -> person, how many -> quantity, yes/no -> boolean, which/what X ->
  the listed type named X);
- pruning prompt: keeps the properties whose labels match the question (all of them when none does);
- re-parse prompt: re-reads the output with the agent's own action parser;
- with the actions offered as functions (``tools`` in the request, the agents' ``action_format=tools``): the same
  controller step as a native function call (OpenAI's ``tool_calls``), the thought as the reply's text.

It is type-blind by construction: it never reads domains, ranges or the type context, so what SAGA's filtering
removes from an observation is exactly what changes its choices.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sparqlab.llm import ChatRequest, StandinModel, register_standin
from sparqlab.llm.standins import tool_call
from sparqlab.methods.agents.actions import parse_action
from sparqlab.methods.agents.prompts import ANSWER_TYPE, CONTROLLER_INPUT, PRUNE, REPARSE
from sparqlab.platform.parsing import first_json_object

WORD_FORMS = {
    "direct": "direct directed directs director directors directing",
    "write": "write wrote written writes writer writers writing author authors authored screenplay screenwriter",
    "star": "star stars starred starring actor actors actress act acted acts acting appear appears appeared cast",
    "genre": "genre genres sort kind",
    "release": "release released year premiered",
    "language": "language languages spoken",
    "tag": "tag tags tagged keyword keywords topics describe described describes words",
    "rating": "rating rated",
    "votes": "votes voted popular famous popularity",
    "narrative": "set setting narrative",
    "birth": "born birth birthplace",
    "citizen": "citizen citizenship nationality",
    "population": "population inhabitants",
}
"""Word forms that mean the same relation word (an irregular-verb and synonym table, the stand-in's lexicon)."""

_CONCEPT = {form: concept for concept, forms in WORD_FORMS.items() for form in forms.split()}
FUNCTION_WORDS = frozenset(["a", "an", "and", "are", "by", "did", "do", "does", "for", "from", "has", "have", "how", "in", "into", "is", "it", "its", "of", "on", "or", "the", "this", "that", "to", "was", "were", "what", "when", "where", "which", "who", "whom", "whose", "with", "many", "much", "imdb", "me", "give", "list", "name", "tell"])
_BOOLEAN_START = {"is", "was", "does", "did", "are", "were", "has", "have", "can", "do"}
_WORD = re.compile(r"[^\W\d_]+")
_NAMED = re.compile(r"^- (.+?) \((<[^>\s]+>|[^\s()]+)\)(?=$|:| \[| domain| range)")
_MENTION = re.compile(r"\[([^\]]+)\]")


def concept(word: str) -> str:
    """A word's relation concept: its entry in :data:`WORD_FORMS`, else its first five letters."""
    word = word.lower()
    return _CONCEPT.get(word, word[:5])


def concepts(text: str) -> set[str]:
    return {concept(w) for w in _WORD.findall(text.lower()) if w not in FUNCTION_WORDS}


def label_score(label: str, question_concepts: set[str]) -> float:
    """Share of the label's content concepts that the question mentions (1.0 beats a partial match)."""
    mine = concepts(label.replace("_", " "))
    return len(mine & question_concepts) / len(mine) if mine else 0.0


def question_form(question: str) -> str:
    """``ask``, ``count`` or ``select`` from the question's wording."""
    words = _WORD.findall(question.lower())
    if words and words[0] in _BOOLEAN_START:
        return "ask"
    return "count" if "how many" in " ".join(words) else "select"


def mentions(question: str) -> list[str]:
    """Topic mentions: bracketed spans (MetaQA / MCQA style), else runs of capitalised words (the first word of
    the question only when more capitalised words follow it)."""
    bracketed = _MENTION.findall(question)
    if bracketed:
        return bracketed
    tokens = re.findall(r"[\w'.,-]+", question)
    found, run = [], []
    for index, token in enumerate(tokens):
        clean = token.strip(",.?")
        starts_question = index == 0 and clean.lower() in FUNCTION_WORDS | _BOOLEAN_START
        if clean[:1].isupper() and not starts_question:
            run.append(clean)
        elif run:
            found.append(" ".join(run))
            run = []
        if token.endswith((",", "?")) and run:
            found.append(" ".join(run))
            run = []
    if run:
        found.append(" ".join(run))
    return found


def question_concepts(question: str) -> set[str]:
    """Concepts of the question's words outside its mentions."""
    text = question
    for mention in mentions(question):
        text = text.replace(mention, " ")
    return concepts(text)


def parse_history(user: str) -> tuple[str, list[tuple[str, str, str]]]:
    """The question and the visible ``(action, argument, observation)`` steps of a controller input."""
    head, _, rest = user.partition("\n")
    question = head.removeprefix("User Question:").strip()
    steps = []
    for block in re.split(r"\n(?=Thought: )", "\n" + rest):
        action_at = block.find("\nAction: ")
        obs_at = block.find("\nObservation: ")
        if action_at < 0 or obs_at < 0:
            continue
        action = parse_action(block[action_at:obs_at])
        observation = block[obs_at + len("\nObservation: "):]
        observation = observation.split('\nWrite one "Thought"')[0]
        if action:
            if observation.startswith("[REPEATED]"):
                observation = observation.split("\n", 1)[1] if "\n" in observation else ""
            steps.append((action.name, action.argument, observation))
    return question, steps


def search_candidates(observation: str, mention: str) -> list[str]:
    """Entity ids of a search observation: exact label matches in listed order, else the first two hits."""
    hits, section = [], ""
    for line in observation.splitlines():
        if not line.startswith("- "):
            section = line
            continue
        match = _NAMED.match(line)
        if match and section.startswith("entities"):
            hits.append((match.group(1), match.group(2)))
    exact = [hit_id for label, hit_id in hits if label.casefold() == mention.casefold()]
    return exact or [hit_id for _, hit_id in hits[:2]]


def shown_properties(observation: str) -> list[tuple[str, str, str]]:
    """``(label, id, direction)`` of the properties a lookup observation shows, in order."""
    found, direction = [], None
    for line in observation.splitlines():
        if line.startswith(("outgoing", "incoming")):
            direction = "out" if line.startswith("outgoing") else "in"
            continue
        match = _NAMED.match(line)
        if match and direction:
            found.append((match.group(1), match.group(2), direction))
    return found


def compose(form: str, entity: str, prop: str, direction: str, other: str | None) -> str | None:
    """The one-hop query of the policy; ``None`` for an ASK without a second entity."""
    pattern = f"{entity} {prop} ?x" if direction == "out" else f"?x {prop} {entity}"
    if form == "ask":
        if other is None:
            return None
        return f"ASK WHERE {{ {pattern.replace('?x', other)} }}"
    if form == "count":
        return f"SELECT (COUNT(DISTINCT ?x) AS ?count) WHERE {{ {pattern} }}"
    return f"SELECT DISTINCT ?x WHERE {{ {pattern} }}"


def _succeeded(observation: str) -> bool:
    return not observation.startswith(("(no rows)", "[BLOCKED]", "Error", "[REPEATED]"))


def _reply(thought: str, action: str, argument: str = "") -> str:
    return f"Thought: {thought}\nAction: {action}({argument})"


def controller_reply(user: str) -> str:
    """The policy's next step for a controller input (see the module docstring)."""
    question, steps = parse_history(user)
    form = question_form(question)
    names = mentions(question)
    if not names:
        return _reply("I cannot find an entity name in the question.", "stop")
    searched = {arg: obs for name, arg, obs in steps if name == "search"}
    looked_up = {arg: obs for name, arg, obs in steps if name == "lookup"}
    executed = {arg: obs for name, arg, obs in steps if name == "execute"}
    for mention in names[:2 if form == "ask" else 1]:
        if mention not in searched:
            return _reply(f"I need the id of {mention}.", "search", mention)
    other = None
    if form == "ask" and len(names) > 1:
        other = next(iter(search_candidates(searched[names[1]], names[1])), None)
    wanted = question_concepts(question)
    for entity in search_candidates(searched[names[0]], names[0]):
        if entity not in looked_up:
            return _reply(f"Let me see the properties of {entity}.", "lookup", entity)
        ranked = [(score, index, label, prop, direction)
                  for index, (label, prop, direction) in enumerate(shown_properties(looked_up[entity]))
                  if (score := label_score(label, wanted)) > 0]
        for _, _, label, prop, direction in sorted(ranked, key=lambda r: (-r[0], r[1])):
            query = compose(form, entity, prop, direction, other)
            if query is None:
                continue
            if query not in executed:
                return _reply(f"The property {label} matches the question.", "execute", query)
            if _succeeded(executed[query]):
                return _reply("The last query answers the question.", "stop")
    return _reply("No shown property matches the question.", "stop")


def answer_type_reply(prompt: str) -> str:
    question = prompt.rsplit("Question:", 1)[-1].strip()
    catalogue = re.findall(r"^- (.+): (\S+)$", prompt, re.MULTILINE)
    words = _WORD.findall(question.lower())
    form = question_form(question)
    label, type_id = "thing", ""
    if form == "ask":
        label = "boolean"
    elif form == "count":
        label = "quantity"
    elif words and words[0] == "who":
        label = "person"
        type_id = next((cid for name, cid in catalogue if "person" in name or "human" in name), "")
    elif len(words) > 1 and words[0] in ("which", "what"):
        noun = concept(words[1])
        for name, cid in catalogue:
            if any(concept(part) == noun or part[:4] == words[1][:4] for part in _WORD.findall(name)):
                label, type_id = name.split("/")[0].strip(), cid
                break
    return json.dumps({"answer_type_label": label, "answer_type_id": type_id})


def prune_reply(prompt: str) -> str:
    question = prompt.rsplit("Question:", 1)[-1].split("\nOutput:")[0].strip()
    entry = first_json_object(prompt.rsplit("Entity:", 1)[-1]) or {}
    wanted = question_concepts(question)
    kept = {key: value for key, value in entry.items()
            if label_score(key.removeprefix("(incoming) ").split(" (")[0], wanted) > 0}
    return json.dumps(kept or entry, ensure_ascii=False)


def reparse_reply(prompt: str) -> str:
    action = parse_action(prompt.split("Agent output:", 1)[-1])
    if action is None:
        return "I cannot tell which action was meant."
    return json.dumps({"thought": action.thought, "action_name": action.name, "action_argument": action.argument})


def _starts(text: str, template) -> bool:
    """Whether ``text`` was rendered from ``template`` (its fixed opening, up to the first placeholder)."""
    return text.startswith(template.text.split("\n", 1)[0].split("{", 1)[0][:40])


@register_standin("standin-agent")
class AgentStandin(StandinModel):
    """Deterministic lexical agent policy (search, lookup, best-matching property, execute, stop); not an LLM."""

    name = "standin-agent"

    def respond(self, request: ChatRequest) -> str:
        user = request.last_user_message
        if _starts(user, ANSWER_TYPE):
            return answer_type_reply(user)
        if _starts(user, PRUNE):
            return prune_reply(user)
        if _starts(user, REPARSE):
            return reparse_reply(user)
        if _starts(user, CONTROLLER_INPUT):
            return controller_reply(user)
        return "I only play the agents' roles (controller, answer type, pruning, re-parse)."

    def respond_with_tools(self, request: ChatRequest) -> tuple[str, list[dict[str, Any]] | None]:
        """When the controller's actions are offered as functions (``action_format=tools``), the same policy step
        as a function call: the thought as text, the action as a call of the offered function of that name with
        its argument under the function's (first) parameter; otherwise :meth:`respond`'s text."""
        text = self.respond(request)
        offered = {tool["function"]["name"]: tool["function"] for tool in request.tools
                   if isinstance(tool.get("function"), dict)}
        action = parse_action(text) if offered and _starts(request.last_user_message, CONTROLLER_INPUT) else None
        if action is None or action.name not in offered or request.tool_choice == "none":
            return text, None
        properties = (offered[action.name].get("parameters") or {}).get("properties") or {}
        arguments = {next(iter(properties)): action.argument} if properties and action.argument else {}
        return action.thought, [tool_call(action.name, arguments)]
