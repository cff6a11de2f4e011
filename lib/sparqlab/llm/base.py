"""The chat-model interface every backend and stand-in implements."""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass, field
from typing import Any

Message = dict[str, str]
"""``{"role": "system" | "user" | "assistant", "content": "..."}``"""


@dataclass(frozen=True)
class ChatRequest:
    """Everything that determines a response; its canonical JSON is the cache key."""

    model: str
    messages: tuple[tuple[str, str], ...]
    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None

    @classmethod
    def build(cls, model: str, messages: list[Message], **params: Any) -> ChatRequest:
        stop = params.pop("stop", None) or ()
        if isinstance(stop, str):
            stop = (stop,)
        return cls(model, tuple((m["role"], m["content"]) for m in messages), stop=tuple(stop), **params)

    @property
    def message_dicts(self) -> list[Message]:
        return [{"role": role, "content": content} for role, content in self.messages]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["messages"] = self.message_dicts
        data["stop"] = list(self.stop)
        return data


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class ChatResponse:
    """A model's answer with its cost: tokens, latency (0 for a cache hit) and why generation stopped."""

    text: str
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    finish_reason: str = "stop"
    model: str = ""
    cached: bool = False

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChatResponse:
        data = dict(data)
        data["usage"] = Usage(**data.get("usage", {}))
        return cls(**data)


class ChatModel:
    """A chat model. Subclasses implement :meth:`acomplete`; :meth:`complete` is its sync form.

    ``name`` is what gets recorded in configs and manifests; ``is_standin`` marks deterministic offline
    baselines, which must never be reported as LLM results.
    """

    name: str = "model"
    is_standin: bool = False

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        raise NotImplementedError

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Blocking call, for scripts and notebooks outside an event loop."""
        return asyncio.run(self.acomplete(request))

    def describe(self) -> dict[str, Any]:
        """What a manifest records about this model (no secrets)."""
        return {"name": self.name, "standin": self.is_standin, "backend": type(self).__name__}
