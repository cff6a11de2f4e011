"""How a model reply ended, read the same way for every backend and every method.

Reasoning models return their chain of thought separately (vLLM's ``reasoning`` / ``reasoning_content``) or inline
(``<think>…</think>`` when the server has no reasoning parser, a bare ``</think>`` when the chat template opened
the block, gpt-oss's harmony channels when nothing parses them). :func:`visible_text` is the part of a reply that
carries an answer; :func:`failure_kind` says why a reply that carried nothing usable failed, from its text, its
``finish_reason`` and its reasoning; :func:`reply_outcome` is what the method context counts per call kind.
"""

from __future__ import annotations

import re

_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>", re.IGNORECASE)
_HARMONY_FINAL = re.compile(r"<\|channel\|>\s*final\s*<\|message\|>(.*?)(?:<\|(?:end|return|call)\|>|$)", re.DOTALL)

FAILURE_KINDS = ("empty_reply", "reasoning_exhausted", "truncated_reply", "unreadable_reply")
"""Why a reply carried nothing usable (:func:`failure_kind`)."""


def visible_text(text: str | None) -> str:
    """The reply without inline reasoning: ``<think>…</think>`` blocks removed; text before a lone ``</think>``
    (the template opened the block) dropped; an unclosed ``<think>`` (reasoning cut by ``max_tokens``) leaves only
    what came before it; of a raw gpt-oss harmony reply only the ``final`` channel is kept."""
    if not text:
        return ""
    if "<|channel|>" in text:
        finals = _HARMONY_FINAL.findall(text)
        return finals[-1].strip() if finals else ""
    text = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end():]
    opened = _THINK_OPEN.search(text)
    if opened:
        text = text[:opened.start()]
    return text.strip()


def failure_kind(text: str | None, finish_reason: str | None = "stop", reasoning: str | None = None) -> str:
    """Why a reply that a reader could not use carried nothing: ``reasoning_exhausted`` (cut by ``max_tokens``
    with nothing but reasoning), ``truncated_reply`` (cut by ``max_tokens``), ``empty_reply`` (no visible text),
    else ``unreadable_reply`` (text, but not in the expected form: prose, a refusal, another language)."""
    visible = visible_text(text)
    thought = bool((reasoning or "").strip()) or visible != (text or "").strip()
    if finish_reason == "length":
        return "reasoning_exhausted" if not visible and thought else "truncated_reply"
    return "empty_reply" if not visible else "unreadable_reply"


def reply_error(text: str | None, finish_reason: str | None = "stop", reasoning: str | None = None) -> str:
    """A question's error category when a reply it needed carried nothing usable: ``truncated_reply`` or
    ``reasoning_exhausted`` when ``max_tokens`` cut it (raise that call kind's budget), else ``parse_failure``."""
    kind = failure_kind(text, finish_reason, reasoning)
    return kind if kind in ("truncated_reply", "reasoning_exhausted") else "parse_failure"


def reply_outcome(text: str | None, finish_reason: str | None = "stop", reasoning: str | None = None,
                  tool_calls: list | None = None) -> str | None:
    """What the context counts about one reply, before any parsing: ``reasoning_exhausted`` (the whole budget
    went to reasoning), ``truncated`` (``max_tokens`` cut the answer), ``empty`` (no visible text and no function
    call), another ``finish_reason`` than ``stop`` (or ``tool_calls``) as is; ``None`` for a reply that ended
    normally with text or function calls."""
    if finish_reason == "length":
        return "reasoning_exhausted" if failure_kind(text, finish_reason, reasoning) == "reasoning_exhausted" \
            else "truncated"
    if not visible_text(text) and not tool_calls:
        return "empty"
    return None if finish_reason in (None, "stop", "tool_calls") else str(finish_reason)

