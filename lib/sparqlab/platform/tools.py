"""Agent tools as data: a name, a description, an argument schema and a thin async function over the context.

Tools never touch the KG themselves; they call the counted context methods (:meth:`QuestionContext.query`,
``search``, ``lookup``, ``examples``), so every tool use is counted per KG tool and traced. A method config names
the tool set it uses (``tools=("search", "lookup", "execute", "stop")``) and :func:`get_tools` returns it, so an
ablation removes a tool by config, the way GRASP selects its function sets. Agents register their own variants
(SAGA's filtered lookup) under new names with :func:`register_tool`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sparqlab.core.registry import Registry
from sparqlab.kg.errors import KGError
from sparqlab.platform.context import QuestionContext


@dataclass
class Observation:
    """What a tool returns: ``text`` for the model, ``data`` for the method, ``final`` when the tool ends the
    episode (``stop``: ``data`` is the final query)."""

    text: str
    data: Any = None
    final: bool = False


@dataclass(frozen=True)
class Tool:
    """A tool: ``parameters`` maps each argument name to ``{"type", "description"}`` (and optional
    ``"default"``); arguments without a default are required."""

    name: str
    description: str
    parameters: dict[str, dict[str, Any]]
    run: Callable[[QuestionContext, dict[str, Any]], Awaitable[Observation]]

    def check_args(self, args: dict[str, Any]) -> dict[str, Any]:
        """The arguments with defaults filled; ``ValueError`` naming unknown, missing or mistyped ones (a model's
        malformed action becomes an observation, not a crash)."""
        unknown = sorted(set(args) - set(self.parameters))
        if unknown:
            raise ValueError(f"tool {self.name} has no argument {', '.join(unknown)}; "
                             f"arguments: {', '.join(self.parameters)}")
        filled = {}
        for name, spec in self.parameters.items():
            if name in args:
                value = args[name]
                kind = _JSON_TYPES.get(spec.get("type", "string"))
                if kind and not isinstance(value, kind) or isinstance(value, bool) and spec.get("type") == "integer":
                    raise ValueError(f"tool {self.name}: argument {name} must be a {spec.get('type')}; got {value!r}")
                filled[name] = value
            elif "default" in spec:
                filled[name] = spec["default"]
            else:
                raise ValueError(f"tool {self.name} needs argument {name!r} ({spec.get('description', '')})")
        return filled

    async def __call__(self, ctx: QuestionContext, args: dict[str, Any]) -> Observation:
        """Validate ``args``, run the tool and trace the call; bad arguments and KG errors become observations."""
        try:
            observation = await self.run(ctx, self.check_args(args))
        except (ValueError, KGError) as error:
            observation = Observation(f"Error: {error}")
        ctx.log("observation", tool=self.name, args=args, text=observation.text, final=observation.final)
        return observation

    def describe(self) -> dict[str, Any]:
        """The tool as a model sees it (JSON-schema-like), for prompts and function-calling APIs."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


_JSON_TYPES: dict[str, type | tuple[type, ...]] = {"string": str, "integer": int, "number": (int, float),
                                                   "boolean": bool, "array": list, "object": dict}

TOOLS: Registry[Tool] = Registry("tool")
"""Registered tools by name."""


def register_tool(tool: Tool) -> Tool:
    """Register ``tool`` under its name (a second tool with the same name is an error)."""
    return TOOLS.register(tool.name, tool)


def get_tools(names: Sequence[str]) -> dict[str, Tool]:
    """The named tools, in the given order; an unknown name is an error listing the registered ones."""
    return {name: TOOLS.get(name) for name in names}


# -- the base tools ----------------------------------------------------------------------------------------------

async def _search(ctx: QuestionContext, args: dict[str, Any]) -> Observation:
    hits = await ctx.search(args["text"], kind=args["kind"], limit=args["limit"])
    if not hits:
        return Observation(f"No {args['kind']} found for {args['text']!r}.", [])
    lines = [f"{h.label} ({h.id})" + (f": {h.description}" if h.description else "")
             + (f" [types: {', '.join(h.types)}]" if h.types else "") for h in hits]
    return Observation("\n".join(lines), hits)


async def _lookup(ctx: QuestionContext, args: dict[str, Any]) -> Observation:
    hood = await ctx.lookup(args["entity"])
    return Observation(hood.to_observation(args["max_properties"], args["values"]), hood)


async def _examples(ctx: QuestionContext, args: dict[str, Any]) -> Observation:
    rows = await ctx.examples(args["property"], limit=args["limit"])
    if not rows:
        return Observation(f"No uses of {args['property']} found.", rows)
    lines = [f"{r['subject_label'] or r['subject']} ({r['subject']}) -> "
             f"{r['object_label'] + ' (' + r['object'] + ')' if r['object_label'] else r['object']}" for r in rows]
    return Observation("\n".join(lines), rows)


async def _execute(ctx: QuestionContext, args: dict[str, Any]) -> Observation:
    result = await ctx.query(args["sparql"])
    if isinstance(result, KGError):
        return Observation(f"Error ({result.kind}): {result}", result)
    return Observation(result.to_observation(args["max_rows"]), result)


async def _stop(ctx: QuestionContext, args: dict[str, Any]) -> Observation:
    return Observation("Stopped with the final query.", args["sparql"], final=True)


BASE_TOOLS = (
    Tool("search", "Find entities, properties or classes of the KG by name; returns ids with labels and types.",
         {"text": {"type": "string", "description": "the name to look for"},
          "kind": {"type": "string", "description": "entity, property or class", "default": "entity"},
          "limit": {"type": "integer", "description": "number of matches", "default": 10}}, _search),
    Tool("lookup", "Show an entity's label, description, types and edges (property -> value) with labels.",
         {"entity": {"type": "string", "description": "the entity id (IRI or prefixed name)"},
          "max_properties": {"type": "integer", "description": "properties shown per direction (the rest are "
                             "named)", "default": 50},
          "values": {"type": "integer", "description": "values shown per property (the rest are counted)",
                     "default": 5}}, _lookup),
    Tool("examples", "Show a few real uses (subject -> object) of a property.",
         {"property": {"type": "string", "description": "the property id (IRI or prefixed name)"},
          "limit": {"type": "integer", "description": "number of examples", "default": 3}}, _examples),
    Tool("execute", "Run a SPARQL query and show its result (truncated rows are counted).",
         {"sparql": {"type": "string", "description": "the SPARQL query"},
          "max_rows": {"type": "integer", "description": "rows shown", "default": 20}}, _execute),
    Tool("stop", "Finish with this SPARQL query as the final answer.",
         {"sparql": {"type": "string", "description": "the final SPARQL query"}}, _stop),
)
for _tool in BASE_TOOLS:
    register_tool(_tool)
