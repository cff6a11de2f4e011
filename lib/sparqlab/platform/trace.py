"""Typed trace events: one record type for every step of every method.

A :class:`TraceEvent` has a ``kind`` (``model_call``, ``query``, ``tool``, ``thought``, ``action``,
``observation``, ``final_query``, ``question_timeout``, ``method_error``, ``parse_failure`` and method-specific
kinds), the agent ``step`` it belongs to, the model ``role`` involved, free ``data`` and a timestamp. On disk
(``traces.jsonl``) an event is ``{"kind", "step", "role", "t", "data"}``.

Model calls log only what is new: an agent that sends its whole history again on every call would otherwise make
its trace grow quadratically. :class:`Trace` remembers the conversations it has logged; a call whose messages
continue one of them (its messages, then its response as an assistant turn) logs ``continues`` (the index of that
event), ``prefix`` (how many leading messages are shared) and only the messages after them.
:func:`conversation` rebuilds the full message list of any ``model_call`` event.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

from sparqlab.llm.base import Message

LEGACY_KEYS = ("event", "t")
"""Keys of the untyped events older runs wrote (``{"event": kind, "t": ..., **data}``)."""


@dataclass
class TraceEvent:
    """One step of a method's work on one question."""

    kind: str
    step: int | None = None
    role: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    t: float = field(default_factory=lambda: round(time.time(), 3))

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "step": self.step, "role": self.role, "t": self.t, "data": self.data}

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> TraceEvent:
        """From a ``traces.jsonl`` event; reads the untyped events of older runs too."""
        if "kind" in record and isinstance(record.get("data"), dict):
            return cls(record["kind"], record.get("step"), record.get("role"), dict(record["data"]),
                       record.get("t", 0.0))
        data = {k: v for k, v in record.items() if k not in LEGACY_KEYS}
        return cls(str(record.get("event", "event")), data.pop("step", None), data.pop("role", None), data,
                   record.get("t", 0.0))


REPEATED_TEXT_CHARS = 4096
"""From this length on, a model reply is stored once per trace: a later event repeating it refers to its
``model_call`` event instead (a runaway reply of megabytes would otherwise be written twice)."""


def _message_key(message: Message) -> str:
    return hashlib.sha1(json.dumps(message, sort_keys=True, default=str).encode()).hexdigest()


class Trace:
    """The events of one question, in order, with de-duplicated model-call histories."""

    def __init__(self) -> None:
        self.events: list[TraceEvent] = []
        self._conversations: list[tuple[int, list[str]]] = []  # (event index, message keys incl. the response)

    def __len__(self) -> int:
        return len(self.events)

    def add(self, kind: str, step: int | None = None, role: str | None = None,
            data: dict[str, Any] | None = None) -> TraceEvent:
        """Append an event; a long ``response`` that repeats a logged model call's (a parse failure quoting the
        reply) is stored as ``response_event``, that call's index (:data:`REPEATED_TEXT_CHARS`)."""
        data = dict(data or {})
        response = data.get("response")
        if kind != "model_call" and isinstance(response, str) and len(response) >= REPEATED_TEXT_CHARS:
            logged = next((index for index in range(len(self.events) - 1, -1, -1)
                           if self.events[index].kind == "model_call"
                           and self.events[index].data.get("response") == response), None)
            if logged is not None:
                del data["response"]
                data["response_event"] = logged
        event = TraceEvent(kind, step, role, data)
        self.events.append(event)
        return event

    def model_call(self, messages: list[Message], response: str, *, step: int | None, role: str | None,
                   **data: Any) -> TraceEvent:
        """Log a chat call with only the messages not already in an earlier logged conversation."""
        keys = [_message_key(m) for m in messages]
        best_index, best_prefix = None, 0
        for index, logged in self._conversations:
            shared = 0
            for a, b in zip(keys, logged, strict=False):
                if a != b:
                    break
                shared += 1
            if shared > best_prefix:
                best_index, best_prefix = index, shared
        logged_data: dict[str, Any] = {}
        if best_index is not None:
            logged_data = {"continues": best_index, "prefix": best_prefix}
        event = self.add("model_call", step, role, {**logged_data, "messages": list(messages[best_prefix:]),
                                                    "response": response, **data})
        reply: Message = {"role": "assistant", "content": response}
        self._conversations.append((len(self.events) - 1, [*keys, _message_key(reply)]))
        return event

    def to_json(self) -> list[dict[str, Any]]:
        return [event.to_json() for event in self.events]


def conversation(events: list[TraceEvent], index: int) -> list[Message]:
    """The full message list sent by the ``model_call`` event at ``index`` (rebuilt from its predecessors)."""
    event = events[index]
    data = event.data
    messages = list(data.get("messages") or [])
    if "continues" not in data:
        return messages
    previous = events[data["continues"]]
    history = [*conversation(events, data["continues"]),
               {"role": "assistant", "content": previous.data.get("response", "")}]
    return history[:data["prefix"]] + messages
