"""Instruction/response records for supervised fine-tuning, and their tokenisation with the loss on the response
only (GGC, section 4.1: "applied the language modeling loss only in the response portion"; DeSQ trains its
generator on the two-part structured output the same way).

A record is one JSON object per line in either layout the project's data builders write:

* conversational — ``{"messages": [{"role": "system"|"user"|"assistant", "content": ...}, ...]}``; the last
  message is the response and must be the assistant's (DeSQ's :func:`~sparqlab.methods.desq.generation.finetune_records`,
  GGC's corrector files, :func:`~sparqlab.train.data.question_records`);
* Alpaca — ``{"instruction", "input", "output", "system"?}`` (LLaMA-Factory's layout, also in GGC's files); the
  user turn is ``instruction`` followed by ``input`` when it is not empty.

When a record has both, ``messages`` wins. Other keys (``id``, ``source`` ...) are carried along untouched.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

IGNORE_INDEX = -100
"""Label of a token that carries no loss (PyTorch's cross-entropy default ``ignore_index``)."""


class RecordError(ValueError):
    """A training record that cannot be used; the message names the file and line."""


def record_messages(record: dict[str, Any], where: str = "record") -> tuple[list[dict[str, str]], str]:
    """(prompt messages, response text) of one record in either layout (module docstring)."""
    if not isinstance(record, dict):
        raise RecordError(f"{where}: a training record must be a JSON object, got {type(record).__name__}")
    if "messages" in record:
        messages = record["messages"]
        if (not isinstance(messages, list) or len(messages) < 2
                or not all(isinstance(m, dict) and isinstance(m.get("role"), str)
                           and isinstance(m.get("content"), str) for m in messages)):
            raise RecordError(f"{where}: 'messages' must be a list of at least two {{role, content}} objects")
        if messages[-1]["role"] != "assistant":
            raise RecordError(f"{where}: the last message is the response and must have role 'assistant', "
                              f"not {messages[-1]['role']!r}")
        prompt = [{"role": m["role"], "content": m["content"]} for m in messages[:-1]]
        response = messages[-1]["content"]
    elif "instruction" in record and "output" in record:
        fields = {k: record.get(k) or "" for k in ("system", "instruction", "input", "output")}
        if not all(isinstance(v, str) for v in fields.values()):
            raise RecordError(f"{where}: system/instruction/input/output must be strings")
        user = f"{fields['instruction']}\n\n{fields['input']}" if fields["input"].strip() else fields["instruction"]
        prompt = ([{"role": "system", "content": fields["system"]}] if fields["system"] else []) + \
            [{"role": "user", "content": user}]
        response = fields["output"]
    else:
        raise RecordError(f"{where}: a record needs 'messages' (chat layout) or 'instruction' + 'output' "
                          f"(Alpaca layout); it has {sorted(record)}")
    if not response.strip():
        raise RecordError(f"{where}: the response is empty: there is nothing to learn")
    if not any(m["role"] == "user" and m["content"].strip() for m in prompt):
        raise RecordError(f"{where}: the prompt has no non-empty user turn")
    return prompt, response


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """The records of a JSONL file, each checked by :func:`record_messages` (errors name the line)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"training data {path} does not exist (write it with `sparqlab train data` or a "
                                "method's data builder)")
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise RecordError(f"{where}: not JSON ({error.msg} at column {error.colno})") from None
            record_messages(record, where)
            records.append(record)
    if not records:
        raise RecordError(f"{path} holds no training records")
    return records


@dataclass(frozen=True)
class Encoded:
    """One tokenised record: ``input_ids`` of the whole conversation and ``labels`` equal to them on the response
    tokens and :data:`IGNORE_INDEX` on the prompt tokens."""

    input_ids: list[int]
    labels: list[int]

    @property
    def response_tokens(self) -> int:
        return sum(label != IGNORE_INDEX for label in self.labels)


def encode(tokenizer: Any, record: dict[str, Any], max_length: int) -> Encoded | None:
    """Tokenise a record through the tokenizer's chat template with the prompt masked; ``None`` when the prompt
    alone fills ``max_length`` (no response token would be left to learn from). A longer conversation keeps its
    prompt and loses the end of the response (the end-of-turn token stays)."""
    prompt, response = record_messages(record)
    prompt_text = tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
    full_text = tokenizer.apply_chat_template([*prompt, {"role": "assistant", "content": response}], tokenize=False)
    prompt_ids = tokenizer(prompt_text, add_special_tokens=False)["input_ids"]
    full_ids = tokenizer(full_text, add_special_tokens=False)["input_ids"]
    start = _common_prefix(prompt_ids, full_ids)
    if start >= len(full_ids):
        raise RecordError("the chat template renders the response as nothing")
    if start >= max_length:
        return None
    if len(full_ids) > max_length:
        full_ids = full_ids[:max_length - 1] + full_ids[-1:]
    return Encoded(full_ids, [IGNORE_INDEX] * start + full_ids[start:])


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the shared prefix: the prompt as rendered with the generation prompt is a prefix of the full
    conversation for every usual template; where a template renders the two differently, only the shared part
    is masked."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def collate(batch: Sequence[Encoded | dict[str, list[int]]], pad_id: int) -> dict[str, Any]:
    """Right-padded tensors ``input_ids``, ``attention_mask``, ``labels`` (padding carries no loss)."""
    import torch

    rows = [(b.input_ids, b.labels) if isinstance(b, Encoded) else (b["input_ids"], b["labels"]) for b in batch]
    width = max(len(ids) for ids, _ in rows)
    input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    labels = torch.full((len(rows), width), IGNORE_INDEX, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, (ids, labs) in enumerate(rows):
        input_ids[i, :len(ids)] = torch.tensor(ids)
        labels[i, :len(labs)] = torch.tensor(labs)
        mask[i, :len(ids)] = 1
    return {"input_ids": input_ids, "attention_mask": mask, "labels": labels}
