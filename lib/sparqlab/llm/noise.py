"""``noisy:BASE``: any model's replies wrapped in the shapes real models produce, without changing their content,
to measure how much of a method's score depends on the model answering in exactly the format
its parser expects.

For each reply, with probability ``rate`` (decided by a hash of ``seed`` and the request, so the same request
always gets the same shape, in any order and at any concurrency), one of ``shapes`` is applied:

- ``reasoning_field``: a reasoning text returned apart (vLLM's reasoning parser), the content unchanged;
- ``think_inline``: the reasoning inline as ``<think>…</think>`` before the content (a server without parser);
- ``fence``: the content in a Markdown fence (``json`` / ``sparql`` tag by content, none otherwise);
- ``prose``: a sentence before and after (``Answer: YES`` for a verdict, the form models use);
- ``markdown``: bold ``**Thought:**`` / ``**Action:**``, a trailing comma in JSON, a period after a query,
  bold list items and verdicts.

The name stays ``noisy:BASE`` so a result is never mistaken for the base model's; ``is_standin`` follows the base.
The base's replies are cached like any model's (:func:`sparqlab.llm.factory.make_model` puts the response cache
under the wrapper); the wrapping is deterministic and needs no cache.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from sparqlab.core.hashing import stable_hash
from sparqlab.llm.base import ChatModel, ChatRequest, ChatResponse

NOISY_PREFIX = "noisy:"

_REASONING = ("Let me think about what the question needs. I should check which entity and relation are meant, "
              "and answer in the requested format.")
_QUERY = re.compile(r"^\s*(PREFIX|BASE|SELECT|ASK|CONSTRUCT|DESCRIBE)\b", re.IGNORECASE)
_ACTION_LINE = re.compile(r"^(Thought|Action):", re.MULTILINE)
_LIST_ITEM = re.compile(r"^(\d+[.)]|[-*•])\s+(.*)$", re.MULTILINE)


def content_type(text: str) -> str:
    """What a reply carries, judged from its text: ``json``, ``action``, ``sparql``, ``verdict``, ``list`` or
    ``text``."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            json.loads(stripped)
            return "json"
        except ValueError:
            pass
    if _ACTION_LINE.search(text):
        return "action"
    if _QUERY.match(stripped):
        return "sparql"
    if re.fullmatch(r"(?i)(yes|no)\W*", stripped):
        return "verdict"
    if _LIST_ITEM.search(text):
        return "list"
    return "text"


def _fence(text: str, kind: str) -> str:
    tag = {"json": "json", "sparql": "sparql"}.get(kind, "")
    return f"```{tag}\n{text.strip()}\n```"


def _prose(text: str, kind: str) -> str:
    if kind == "verdict":
        return f"Answer: {text.strip()}\n\nThat is my judgement of the candidate."
    if kind == "text":
        return text
    opening = {"json": "Here is the JSON object:", "sparql": "Here is the query:", "action": "Let me work on this.",
               "list": "Here are the atomic constraints:"}[kind]
    return f"{opening}\n\n{text.strip()}\n\nThis should help with the question."


def _markdown(text: str, kind: str) -> str:
    if kind == "action":
        return re.sub(r"^(Thought|Action):", r"**\1:**", text, flags=re.MULTILINE)
    if kind == "json" and not re.fullmatch(r"\{\s*\}", text.strip()):
        return re.sub(r"\s*\}\s*$", ",}", text)
    if kind == "sparql":
        return text.rstrip() + "."
    if kind == "verdict":
        return f"**{text.strip()}**"
    if kind == "list":
        return _LIST_ITEM.sub(lambda m: f"{m.group(1)} **{m.group(2).strip()}**", text)
    return text


Shape = Callable[[str, str], tuple[str, str | None]]
"""``(content, kind) -> (new content, separate reasoning or None)``."""

SHAPES: dict[str, Shape] = {
    "reasoning_field": lambda text, kind: (text, _REASONING),
    "think_inline": lambda text, kind: (f"<think>\n{_REASONING}\n</think>\n\n{text}", None),
    "fence": lambda text, kind: (_fence(text, kind) if kind != "text" else text, None),
    "prose": lambda text, kind: (_prose(text, kind), None),
    "markdown": lambda text, kind: (_markdown(text, kind), None),
}
"""The content-preserving wrappings, by name."""


def apply_shape(shape: str, text: str) -> tuple[str, str | None]:
    """``text`` wrapped in ``shape``: ``(content, reasoning)``. An empty reply stays empty."""
    if shape not in SHAPES:
        raise ValueError(f"unknown reply shape {shape!r}; choose from {', '.join(SHAPES)}")
    if not text.strip():
        return text, None
    return SHAPES[shape](text, content_type(text))


class NoisyModel(ChatModel):
    """``noisy:BASE``: the base model's replies in realistic wrappings (module docstring)."""

    def __init__(self, base: ChatModel, rate: float = 0.3, seed: int = 0,
                 shapes: Sequence[str] | str = tuple(SHAPES)):
        if isinstance(shapes, str):
            shapes = [s.strip() for s in re.split(r"[,|+]", shapes) if s.strip()]
        unknown = [s for s in shapes if s not in SHAPES]
        if unknown or not shapes:
            raise ValueError(f"noisy: unknown or no shapes {unknown or list(shapes)}; choose from {', '.join(SHAPES)}")
        if not 0.0 <= float(rate) <= 1.0:
            raise ValueError(f"noisy: rate must lie in [0, 1] (got {rate})")
        self.base = base
        self.rate, self.seed, self.shapes = float(rate), int(seed), tuple(shapes)
        self.name = NOISY_PREFIX + base.name
        self.is_standin = base.is_standin

    def choose(self, request: ChatRequest) -> str | None:
        """The shape this request's reply gets, or ``None``: a deterministic function of seed and request."""
        digest = int(stable_hash([self.seed, request.to_dict()], 16), 16)
        if (digest % 1_000_000) / 1_000_000 >= self.rate:
            return None
        return self.shapes[(digest // 1_000_000) % len(self.shapes)]

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        response = await self.base.acomplete(replace(request, model=self.base.name))
        shape = self.choose(request)
        if shape is None:
            return replace(response, model=self.name)
        text, reasoning = apply_shape(shape, response.text)
        return replace(response, text=text, reasoning=reasoning if reasoning is not None else response.reasoning,
                       model=self.name)

    async def aclose(self) -> None:
        await self.base.aclose()

    async def served_identity(self) -> dict[str, Any] | None:
        return {"noise": {"rate": self.rate, "seed": self.seed, "shapes": list(self.shapes)},
                "base": await self.base.served_identity()}

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "rate": self.rate, "seed": self.seed, "shapes": list(self.shapes),
                "base": self.base.describe()}
