"""Instruction/response records: both layouts, clear errors with file and line, prompt tokens masked."""

from __future__ import annotations

import json

import pytest
from train_helpers import toy_records

from sparqlab.train.records import IGNORE_INDEX, RecordError, collate, encode, read_records, record_messages


def test_alpaca_and_chat_layouts_give_the_same_conversation():
    chat = toy_records()[0]
    system, user, answer = (m["content"] for m in chat["messages"])
    alpaca = {"system": system, "instruction": user, "input": "", "output": answer}
    assert record_messages(alpaca) == record_messages(chat) == (chat["messages"][:2], answer)
    prompt, _ = record_messages({"instruction": "Translate:", "input": "Who?", "output": "ASK {}"})
    assert prompt == [{"role": "user", "content": "Translate:\n\nWho?"}]


@pytest.mark.parametrize("record, message", [
    ({"messages": [{"role": "user", "content": "q"}, {"role": "user", "content": "a"}]}, "role 'assistant'"),
    ({"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "  "}]}, "response is empty"),
    ({"messages": [{"role": "system", "content": "s"}, {"role": "assistant", "content": "a"}]}, "no non-empty user"),
    ({"question": "q", "sparql": "s"}, "needs 'messages'"),
    ({"instruction": "q", "output": 3}, "must be strings"),
])
def test_unusable_records_are_refused_with_the_reason(record, message):
    with pytest.raises(RecordError, match=message):
        record_messages(record)


def test_a_bad_line_is_named_by_file_and_line(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps(toy_records()[0]) + "\n\n{not json\n", encoding="utf-8")
    with pytest.raises(RecordError, match=r"data.jsonl:3: not JSON"):
        read_records(path)
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(RecordError, match="no training records"):
        read_records(path)
    with pytest.raises(FileNotFoundError, match="sparqlab train data"):
        read_records(tmp_path / "missing.jsonl")


def test_prompt_tokens_are_masked_and_the_response_is_learnt(tiny_decoder):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_decoder)
    record = toy_records()[0]
    encoded = encode(tokenizer, record, max_length=512)
    prompt_text = tokenizer.apply_chat_template(record["messages"][:2], tokenize=False, add_generation_prompt=True)
    n_prompt = len(tokenizer(prompt_text, add_special_tokens=False)["input_ids"])
    assert encoded.labels[:n_prompt] == [IGNORE_INDEX] * n_prompt
    assert encoded.labels[n_prompt:] == encoded.input_ids[n_prompt:]
    learnt = tokenizer.decode(encoded.labels[n_prompt:])
    assert learnt == record["messages"][2]["content"] + tokenizer.eos_token  # the end of turn is learnt too
    assert encoded.response_tokens == len(encoded.input_ids) - n_prompt


def test_long_conversations_keep_the_prompt_and_the_end_of_turn(tiny_decoder):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_decoder)
    record = toy_records()[0]
    full = encode(tokenizer, record, max_length=512)
    n_prompt = len(full.input_ids) - full.response_tokens
    cut = encode(tokenizer, record, max_length=n_prompt + 3)
    assert len(cut.input_ids) == n_prompt + 3 and cut.response_tokens == 3
    assert cut.input_ids[-1] == tokenizer.eos_token_id
    assert encode(tokenizer, record, max_length=n_prompt) is None  # no response token would be left


def test_collate_pads_without_loss():
    batch = collate([{"input_ids": [5, 6, 7], "labels": [IGNORE_INDEX, 6, 7]},
                     {"input_ids": [8], "labels": [8]}], pad_id=0)
    assert batch["input_ids"].tolist() == [[5, 6, 7], [8, 0, 0]]
    assert batch["labels"].tolist() == [[IGNORE_INDEX, 6, 7], [8, IGNORE_INDEX, IGNORE_INDEX]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1], [1, 0, 0]]
