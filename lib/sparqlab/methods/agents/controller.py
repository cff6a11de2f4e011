"""The ReAct controller shared by SPINACH and SAGA (SAGA Algorithm 1, the agentic loop).

Each step: render the controller prompt (instructions + question + a window of recent steps), call the model
(greedy, 2,048 tokens, stop at the observation marker: the paper's "Implementation Details"; appendix F.2's
sampling is the ``sampling="appendix_f2"`` preset; all configurable), turn the reply into
one action with the temperature-0 re-parse call (appendix F.2: after every controller reply; ``reparse=
"on_failure"`` calls it only when the reply does not parse by itself), run it as a registered tool over the question
context, append ``(thought, action, observation)`` to the history. ``stop`` ends the loop and the last executed
query is the final query σ*. A budget bounds the actions, a repeated action is answered with its earlier
observation instead of being run again, and too many consecutive repeats or unparseable replies end the
question with a recorded reason — a malformed reply never crashes a run.

Per-question state lives in an :class:`AgentSession` bound to the question context, so tools stay thin functions
``(ctx, args) -> Observation``.
"""

from __future__ import annotations

import weakref
from collections import Counter, deque
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, Literal

from sparqlab.data.question import Question
from sparqlab.kg.base import KnowledgeGraph
from sparqlab.llm.base import ChatModel, ChatResponse
from sparqlab.llm.errors import ContextOverflow
from sparqlab.llm.replies import failure_kind, reply_error, visible_text
from sparqlab.methods.agents.actions import (
    ACTION_NAMES,
    Action,
    ActionReading,
    parse_reparse,
    read_actions,
    read_tool_actions,
    tool_calls_text,
)
from sparqlab.methods.agents.features import SagaFeatures
from sparqlab.methods.agents.prompts import (
    ACTION_HELP,
    ACTION_TOOLS_PROMPTS,
    CONTROLLER_INPUT,
    OBSERVATION_MARKER,
    PROMPTS,
    REPARSE,
)
from sparqlab.methods.agents.schema import SchemaIndex, TypeState
from sparqlab.platform import Method, MethodConfig, MethodOutput, QuestionContext, RoleModel
from sparqlab.platform.tools import Observation, Tool, get_tools

PARSE_FAILURE_OBSERVATION = (
    "Your reply could not be read as an action. Answer with one line `Thought: ...` and one line "
    "`Action: name(argument)`, where name is one of " + ", ".join(ACTION_NAMES) + ".")


REPARSE_MODES = ("every_step", "on_failure")

SAMPLING_PRESETS: dict[str, dict[str, float | int]] = {
    "greedy": {"temperature": 0.0, "top_p": 1.0, "max_tokens": 2048},
    "appendix_f2": {"temperature": 1.0, "top_p": 0.9, "max_tokens": 700},
}
"""Controller sampling (``AgentConfig.sampling``). ``greedy``: SAGA's "Implementation Details" ("greedy decoding
(temperature = 0) and cap each response at 2,048 tokens to obtain deterministic outputs"; every reported experiment,
baselines included, "under the same decoding configuration"), the default. ``appendix_f2``: the settings printed
with the controller prompt template in appendix F.2 (temperature 1.0, top-p 0.9, 700 tokens); a stochastic
variant (docs/fidelity.md argues the choice)."""
"""When the re-parse call runs (``AgentConfig.reparse``)."""


@dataclass(frozen=True)
class AgentConfig(MethodConfig):
    """Settings of the ReAct controller (SPINACH; SAGA adds its own).

    - ``max_actions``: action budget per question (actions, repeats and unparseable replies all count).
    - ``window``: how many recent steps the controller prompt shows (older ones are summarised as a count).
    - ``sampling``: the controller's sampling preset (:data:`SAMPLING_PRESETS`): ``"greedy"`` (Implementation
      Details: temperature 0, 2,048 tokens; deterministic) or ``"appendix_f2"`` (temperature 1.0, top-p 0.9, 700).
    - ``controller_temperature`` / ``controller_top_p`` / ``controller_max_tokens``: override one value of the
      preset (``None``: the preset's); ``controller_stop``: stop sequences (the observation marker).
    - ``reparse``: when the temperature-0 re-parse call runs: ``"every_step"`` (appendix F.2: a second call
      re-parses every controller reply into JSON; its action is used, the reply's own parse only when the JSON
      is unreadable) or ``"on_failure"`` (a cheaper variant: only for replies whose action does not parse).
    - ``reparse_temperature`` / ``reparse_max_tokens``: sampling of the re-parse call (temperature 0, as the
      paper's JSON re-parse).
    - ``controller_reasoning_effort`` / ``reparse_reasoning_effort`` / ``prune_reasoning_effort``: a reasoning
      model's effort per call kind (``low`` / ``medium`` / ``high``; ``None``: the server's default). The
      ``{kind}_*`` fields are the method's defaults; an explicit run or role setting wins (docs/replies.md).
    - ``max_repeats``: consecutive repeated actions after which the question ends (``stopped_by="repeats"``).
    - ``max_parse_failures``: consecutive unreadable replies (after re-parse) after which the question ends.
    - ``search_limit``: entity hits and property hits shown per search, in the search backend's order.
    - ``values_per_property``: values read and listed beside each property in a lookup (the rest are counted,
      "… (+N more)").
    - ``lookup_max_properties``: properties shown with their values per direction of a lookup, in
      :func:`sparqlab.kg.neighbourhood.property_order` (external identifiers last, then by property number);
      the rest are named in a closing line "(N more properties not shown: …)", so the model can still query
      them. SAGA applies P_τ(e) first, so the cap counts only the properties it keeps.
    - ``execute_max_rows``: result rows shown by execute.
    - ``prune_temperature`` / ``prune_max_tokens``: sampling of an LLM pruning call (temperature 0).
    - ``action_format``: how the controller states its action: ``"text"`` (the paper's ``Thought: … / Action:
      name(argument)`` reply) or ``"tools"`` (the actions offered as native functions with JSON-schema parameters,
      OpenAI's ``tools`` with ``tool_choice="auto"``, for models trained for function calling; the reply's text is
      the thought). With ``"tools"`` the re-parse call runs only for a reply without a readable call (a native
      call is already the structured action the re-parse would produce); steps and traces are the same.
    - ``property_min_score``: property search hits less similar (0-100) to the query than this are not shown,
      compared with the name the search matched (label or alias); ``None`` (default) shows every hit the search
      returned, as SAGA's ``search_wikidata`` does (the search API matched it, often by an alias: "wife" ->
      spouse).
    """

    max_actions: int = 15
    window: int = 5
    sampling: str = "greedy"
    controller_temperature: float | None = None
    controller_top_p: float | None = None
    controller_max_tokens: int | None = None
    controller_stop: tuple[str, ...] = (OBSERVATION_MARKER,)
    reparse: str = "every_step"
    controller_reasoning_effort: str | None = None
    reparse_temperature: float = 0.0
    reparse_max_tokens: int = 400
    reparse_reasoning_effort: str | None = None
    max_repeats: int = 3
    max_parse_failures: int = 3
    search_limit: int = 5
    values_per_property: int = 5
    lookup_max_properties: int = 50
    execute_max_rows: int = 20
    prune_temperature: float = 0.0
    prune_max_tokens: int = 1000
    prune_reasoning_effort: str | None = None
    property_min_score: float | None = None
    action_format: Literal["text", "tools"] = "text"

    call_kinds: ClassVar[tuple[str, ...]] = ("controller", "reparse", "prune")

    def __post_init__(self) -> None:
        if self.max_actions < 1 or self.window < 1:
            raise ValueError(f"max_actions and window must be >= 1; got {self.max_actions}, {self.window}")
        if self.reparse not in REPARSE_MODES:
            raise ValueError(f"reparse must be one of {', '.join(REPARSE_MODES)}; got {self.reparse!r}")
        if self.sampling not in SAMPLING_PRESETS:
            raise ValueError(f"sampling must be one of {', '.join(SAMPLING_PRESETS)}; got {self.sampling!r}")

    def call_params(self, kind: str) -> dict[str, Any]:
        """The controller call's parameters are the ``sampling`` preset's, each overridden by a set
        ``controller_*`` field; other kinds as :meth:`MethodConfig.call_params`."""
        params = super().call_params(kind)
        return {**SAMPLING_PRESETS[self.sampling], **params} if kind == "controller" else params


@dataclass
class Step:
    """One ReAct step as the controller sees it again in later prompts."""

    thought: str
    action: str
    observation: str

    def render(self) -> str:
        return f"Thought: {self.thought}\nAction: {self.action}\nObservation: {self.observation}"


@dataclass
class AgentSession:
    """Everything one question's interaction accumulates: history H, the last executed query, SAGA's type state
    Θ and schema view, the knowledge log, and the counters that become ``MethodOutput.extra``."""

    config: AgentConfig
    question: Question
    schema: SchemaIndex | None = None
    steps: list[Step] = field(default_factory=list)
    done: dict[tuple[str, str], str] = field(default_factory=dict)
    last_query: str | None = None
    last_query_empty: bool | None = None
    theta: TypeState = field(default_factory=TypeState)
    focus: str | None = None
    knowledge: deque = field(default_factory=lambda: deque(maxlen=50))
    lookups: list[dict[str, Any]] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)
    closures: dict[frozenset[str], set[str]] = field(default_factory=dict)
    features: SagaFeatures | None = None
    answer_type_failure: str | None = None
    window: int = 0
    """Steps shown to the controller: ``config.window``, cut to 1 after a context overflow."""

    def __post_init__(self) -> None:
        self.window = self.window or self.config.window

    @property
    def schema_aware(self) -> bool:
        """The one answer to "is this SAGA?": SAGA's ``start`` gives the session its features (and schema)."""
        return self.features is not None

    def history(self) -> str:
        """The window of recent steps (``{action_history}``), with a count of the older ones."""
        window = self.window
        shown = self.steps[-window:]
        hidden = len(self.steps) - len(shown)
        parts = [f"({hidden} earlier step{'s' if hidden != 1 else ''} not shown)"] if hidden else []
        return "\n".join(parts + [step.render() for step in shown])

    def note(self, entry: str) -> None:
        """One knowledge-log line ([ok] / [fail] / [info])."""
        self.knowledge.append(entry)

    def knowledge_log(self, n: int) -> str:
        return "\n".join(list(self.knowledge)[-n:]) or "(nothing yet)"

    def extra(self, stopped_by: str) -> dict[str, Any]:
        """The per-question record: actions, outcome counters, properties shown vs removed."""
        c = self.counts
        return {
            "actions": len(self.steps), "stopped_by": stopped_by, "parse_failures": c["parse_failures"],
            "dropped_actions": c["dropped_actions"], "window_trimmed": c["window_trimmed"],
            "repeated_actions": c["repeats"], "blocked": c["blocked"], "lookups": len(self.lookups),
            "properties_shown": sum(x["shown"] for x in self.lookups),
            "properties_filtered": sum(x["filtered"] for x in self.lookups),
            "properties_pruned": sum(x["pruned"] for x in self.lookups), "prune_unreadable": c["prune_unreadable"],
            "search_properties_filtered": c["search_filtered"],
            "final_empty": self.last_query_empty,
            "answer_type": "|".join(self.theta.answer_type) if self.theta.answer_type else None,
            "answer_type_failure": self.answer_type_failure,
            "lookup_records": list(self.lookups),
        }


def reply_output(reply: ChatResponse) -> str:
    """What a controller reply says: its visible text, then its function calls as ``Action:`` lines."""
    return "\n".join(part for part in (visible_text(reply.text), tool_calls_text(reply.tool_calls)) if part)


_SESSIONS: weakref.WeakKeyDictionary[QuestionContext, AgentSession] = weakref.WeakKeyDictionary()


def bind_session(ctx: QuestionContext, session: AgentSession) -> None:
    _SESSIONS[ctx] = session


def session_of(ctx: QuestionContext) -> AgentSession:
    """The session of the agent answering in ``ctx`` (tools read and update it)."""
    try:
        return _SESSIONS[ctx]
    except KeyError:
        raise RuntimeError("this tool belongs to the agents; it runs inside an agent's question context") from None


class AgentMethod(Method):
    """The ReAct loop; subclasses choose the tools behind the five actions and the controller prompt."""

    roles = ("controller",)
    prompts = PROMPTS
    config_class: ClassVar[type[AgentConfig]] = AgentConfig
    action_tools: ClassVar[dict[str, str]] = {}
    """Action name -> registered tool name."""

    def __init__(self, config: AgentConfig | None = None, **overrides):
        super().__init__(config, **overrides)
        if self.config.action_format == "tools":
            self.prompts = {**self.prompts, **ACTION_TOOLS_PROMPTS}

    @cached_property
    def actions(self) -> dict[str, tuple[Tool, str | None]]:
        """Action name -> its tool and the name of the tool's one argument (``None``: it takes none), resolved once
        per method: what :meth:`functions`, :meth:`read_reply` and each step's tool call read."""
        tools = get_tools(list(self.action_tools.values())).values()
        return {name: (tool, next(iter(tool.parameters), None))
                for name, tool in zip(self.action_tools, tools, strict=True)}

    def prompt_name(self, name: str) -> str:
        """The table name of a controller system prompt in this config's action format."""
        return f"{name}_tools" if self.config.action_format == "tools" else name

    def functions(self) -> list[dict[str, Any]]:
        """The actions as OpenAI function definitions (``action_format=tools``): the action's name, the prompt's
        description of it and its tool's argument as a required string parameter."""
        functions = []
        for name, (tool, argument) in self.actions.items():
            properties = {}
            if argument:
                spec = tool.parameters[argument]
                properties[argument] = {"type": spec.get("type", "string"),
                                        "description": spec.get("description", "")}
            description = " ".join(ACTION_HELP[name][1].split()) if name in ACTION_HELP else tool.description
            functions.append({"type": "function", "function": {
                "name": name, "description": description,
                "parameters": {"type": "object", "properties": properties, "required": list(properties),
                               "additionalProperties": False}}})
        return functions

    def read_reply(self, reply: ChatResponse) -> ActionReading:
        """The action of a controller reply: its first function call when it made any (``action_format=tools``),
        else its first ``Action:`` line."""
        if self.config.action_format == "tools" and reply.tool_calls:
            arguments = {name: argument for name, (_, argument) in self.actions.items()}
            return read_tool_actions(reply.text, reply.tool_calls, arguments)
        return read_actions(reply.text)

    # -- hooks ----------------------------------------------------------------------------------------------

    async def start(self, session: AgentSession, ctx: QuestionContext) -> None:
        """Before the first step (SAGA: the schema view and the answer-type call)."""

    def system_prompt(self, session: AgentSession, ctx: QuestionContext) -> str:
        profile = ctx.kg.profile
        return self.prompts[self.prompt_name("controller")].render(kg_name=profile.name,
                                                                    kg_notes=profile.prompt_notes.strip() or "-")

    # -- the loop (Algorithm 1) -------------------------------------------------------------------------------

    async def answer(self, question: Question, ctx: QuestionContext) -> MethodOutput:
        config = self.config
        session = AgentSession(config, question)
        bind_session(ctx, session)
        await self.start(session, ctx)
        stopped_by, failures_in_row, repeats_in_row, last_failure = "budget", 0, 0, "parse_failure"
        for step in range(1, config.max_actions + 1):
            ctx.step = step
            action, reply = await self._next_action(session, ctx)
            if action is None:
                session.counts["parse_failures"] += 1
                failures_in_row += 1
                output = "\n".join(part for part in (reply.text, tool_calls_text(reply.tool_calls)) if part)
                last_failure = reply_error(output, reply.finish_reason, reply.reasoning)
                ctx.log("parse_failure", response=output, finish_reason=reply.finish_reason,
                        failure=failure_kind(output, reply.finish_reason, reply.reasoning))
                session.steps.append(Step("", "(unreadable)", PARSE_FAILURE_OBSERVATION))
                if failures_in_row >= config.max_parse_failures:
                    stopped_by = "parse_failure"
                    break
                continue
            failures_in_row = 0
            ctx.log("thought", text=action.thought)
            ctx.log("action", name=action.name, argument=action.argument)
            previous = session.done.get(action.key())
            if previous is not None and action.name != "stop":
                session.counts["repeats"] += 1
                repeats_in_row += 1
                observation = Observation(f"[REPEATED] You already ran {action.render()}; it gave:\n{previous}\n"
                                          "Take a different action.")
                ctx.log("repeated_action", name=action.name, argument=action.argument)
            else:
                repeats_in_row = 0
                observation = await self._run(action, ctx)
                session.done[action.key()] = observation.text
            session.steps.append(Step(action.thought, action.render(), observation.text))
            if observation.final:
                stopped_by = "stop"
                break
            if repeats_in_row >= config.max_repeats:
                stopped_by = "repeats"
                break
        ctx.step = None
        sparql = session.last_query
        error = None if sparql else {"budget": "budget_exhausted", "parse_failure": last_failure,
                                     "repeats": "repeated_actions", "stop": "no_query"}[stopped_by]
        return MethodOutput(sparql, error, extra=session.extra(stopped_by))

    async def _next_action(self, session: AgentSession,
                           ctx: QuestionContext) -> tuple[Action | None, ChatResponse]:
        """One controller call and its first complete action (one action per reply: later ones are traced as
        dropped, never run), then the temperature-0 re-parse call: after every reply with visible text
        (``reparse="every_step"``, whose JSON action wins over the reply's own parse) or only when the reply has
        visible text but no readable action (``"on_failure"``, and always with ``action_format=tools``)."""
        config = self.config
        tools_format = config.action_format == "tools"
        offer = {"tools": self.functions(), "tool_choice": "auto"} if tools_format else {}
        try:
            reply = await ctx.chat(self._messages(session, ctx), role="controller", kind="controller",
                                   defaults=config.call_params("controller"), **offer)
        except ContextOverflow:
            # Trim what can be trimmed (the window of earlier steps, down to the last one) and retry once; a
            # second overflow ends the question as ``context_overflow`` (the runner records the error kind).
            if session.window <= 1 or len(session.steps) <= 1:
                raise
            session.window = 1
            session.counts["window_trimmed"] += 1
            ctx.log("window_trimmed", window=1)
            reply = await ctx.chat(self._messages(session, ctx), role="controller", kind="controller",
                                   defaults=config.call_params("controller"), **offer)
        reading = self.read_reply(reply)
        if reading.dropped:
            session.counts["dropped_actions"] += len(reading.dropped)
            ctx.log("dropped_actions", actions=list(reading.dropped))
        visible = reply_output(reply)
        if not visible or (reading.action is not None and (config.reparse == "on_failure" or tools_format)):
            return reading.action, reply
        request = REPARSE.render(action_names=", ".join(ACTION_NAMES), output=visible)
        reparsed = await ctx.chat([{"role": "user", "content": request}], role="controller", kind="reparse",
                                  defaults=config.call_params("reparse"))
        return parse_reparse(reparsed.text) or reading.action, reply

    def _messages(self, session: AgentSession, ctx: QuestionContext) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system_prompt(session, ctx)},
                {"role": "user", "content": CONTROLLER_INPUT.render(question=session.question.text,
                                                                     action_history=session.history())}]

    async def observe(self, kg: KnowledgeGraph, action: str, argument: str, *, question: str = "",
                      model: ChatModel | None = None) -> Observation:
        """The observation of one action (``lookup``, ``search`` …) in a fresh session of this method over ``kg``:
        what the controller would read after that step (``sparqlab kg lookup``). Without a ``model`` the
        model-backed steps are left out — SAGA's answer-type prior, SPINACH's pruning (the neighbourhood is shown
        whole)."""
        roles = {"controller": RoleModel("controller", model)} if model is not None else {}
        ctx = QuestionContext(Question("observe", question, kg=kg.profile.name), kg, roles)
        session = AgentSession(self.config, ctx.question)
        bind_session(ctx, session)
        await self.start(session, ctx)
        return await self._run(Action("", action, argument), ctx)

    async def _run(self, action: Action, ctx: QuestionContext) -> Observation:
        tool, argument = self.actions[action.name]
        return await tool(ctx, {argument: action.argument} if argument and action.argument else {})
