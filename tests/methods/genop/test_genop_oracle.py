"""The oracle: parsing of proposals and verdicts, validation aggregation over R repetitions, memo keys, and the
scripted model answering the oracle's own prompts."""

from __future__ import annotations

import json

import pytest

from sparqlab.core.event_loops import run_sync
from sparqlab.llm.base import ChatResponse
from sparqlab.methods.genop import PROMPTS, Oracle, ScriptedModel, load_script
from sparqlab.methods.genop.oracle import aggregate, parse_proposals, parse_verdict


def test_parse_proposals_reads_json_in_fences_dedupes_and_caps():
    text = 'Sure:\n```json\n{"y": ["Art", "art ", "Art", "Cuisine", 3, null, "Music"]}\n```'
    assert parse_proposals(text, ["y"], 3) == [("Art",), ("art",), ("Cuisine",)]
    assert parse_proposals(text, ["y"], 10) == [("Art",), ("art",), ("Cuisine",), ("3",), ("Music",)]


def test_parse_proposals_zips_several_fields_and_rejects_malformed_replies():
    assert parse_proposals('{"y": ["a", "b", "c"], "w": ["1", "2"]}', ["y", "w"], 5) == [("a", "1"), ("b", "2")]
    assert parse_proposals("no json here", ["y"], 5) is None
    assert parse_proposals('{"z": ["a"]}', ["y"], 5) is None
    assert parse_proposals('{"y": "single"}', ["y"], 5) == [("single",)]


@pytest.mark.parametrize(("text", "verdict"), [("YES", True), ("yes.", True), ("No, it is not", False),
                                               ("**NO**", False), ("maybe", None), ("", None)])
def test_parse_verdict(text, verdict):
    assert parse_verdict(text) is verdict


@pytest.mark.parametrize(("policy", "votes", "accepted"), [
    ("all", [True, True, False], False), ("all", [True, True], True), ("majority", [True, False, True], True),
    ("majority", [True, False], False), ("any", [False, False, True], True), ("any", [False], False)])
def test_aggregation_policies(policy, votes, accepted):
    assert aggregate(votes, policy) is accepted


class Replies:
    """A chat function replaying fixed texts and recording its calls."""

    def __init__(self, *texts: str):
        self.texts = list(texts)
        self.requests: list[tuple[list, dict]] = []

    async def __call__(self, messages, kind="", **params):
        self.requests.append((messages, {"kind": kind, **params}))
        return ChatResponse(self.texts.pop(0))


def test_validation_repeats_r_times_with_distinct_seeds_and_aggregates():
    chat = Replies("YES", "NO", "YES")
    oracle = Oracle(chat, aggregation="majority")
    assert run_sync(oracle.validate(0, "m", "Suggest a city", ["z"], ("Rome",), 3)) is True
    assert [p.get("seed") for _, p in chat.requests] == [None, 1, 2]
    assert {p["kind"] for _, p in chat.requests} == {"validate"}
    assert 'Candidate: {"z": "Rome"}' in chat.requests[0][0][1]["content"]
    strict = Oracle(Replies("YES", "NO", "YES"), aggregation="all")
    assert run_sync(strict.validate(0, "m", "Suggest a city", ["z"], ("Rome",), 3)) is False


def test_memo_keys_follow_the_paper():
    chat = Replies('{"y": ["a"]}', '{"y": ["b"]}', '{"y": ["c"]}', "YES", "NO")
    oracle = Oracle(chat)
    first = run_sync(oracle.propose(0, "m", "p", ["y"], 5))
    assert run_sync(oracle.propose(0, "m", "p", ["y"], 5)) == first == [("a",)]   # same (g, prompt, K, decoding)
    assert run_sync(oracle.propose(0, "m", "p", ["y"], 4)) == [("b",)]             # K is part of the key
    assert run_sync(oracle.propose(1, "m", "p", ["y"], 5)) == [("c",)]             # so is the occurrence g
    assert run_sync(oracle.validate(0, "m", "p", ["y"], ("a",), 1)) is True
    assert run_sync(oracle.validate(0, "m", "p", ["y"], ("a",), 1)) is True        # cached
    assert run_sync(oracle.validate(0, "m", "p", ["y"], ("b",), 1)) is False       # the candidate is in the key
    assert oracle.calls == {"propose": 3, "validate": 2} and oracle.memo_hits == {"propose": 1, "validate": 1}


def test_unparseable_replies_count_as_no_and_no_proposals():
    oracle = Oracle(Replies("I think so", "not json"))
    assert run_sync(oracle.validate(0, "m", "p", ["y"], ("a",), 1)) is False
    assert run_sync(oracle.propose(0, "m", "p", ["y"], 5)) == []
    assert oracle.parse_failures == 2
    assert oracle.stats()["reply_failures"] == {"unreadable_reply": 2}


def test_a_reply_cut_by_its_budget_is_counted_as_truncated():
    async def cut(messages, kind="", **params):
        return ChatResponse('{"y": ["Flor', finish_reason="length")

    oracle = Oracle(cut)
    assert run_sync(oracle.propose(0, "m", "p", ["y"], 5)) == []
    assert oracle.stats()["reply_failures"] == {"truncated_reply": 1}


def test_scripted_model_answers_the_oracle_prompts():
    model = ScriptedModel({"Suggest a city   related to art": ["Florence", "Rome"],
                           "Pair for x": [["a", "1"], {"y": "b", "w": "2"}]})
    oracle = Oracle.for_model(model)
    assert run_sync(oracle.propose(0, "", "Suggest a city related to art", ["z"], 1)) == [("Florence",)]
    assert run_sync(oracle.propose(0, "", "Suggest a city related to art", ["z"], 5)) == [("Florence",), ("Rome",)]
    assert run_sync(oracle.propose(0, "", "Unknown prompt", ["z"], 5)) == []
    assert run_sync(oracle.validate(0, "", "Suggest a city related to art", ["z"], ("Rome",), 1)) is True
    assert run_sync(oracle.validate(0, "", "Suggest a city related to art", ["z"], ("Paris",), 1)) is False
    assert run_sync(oracle.propose(1, "", "Pair for x", ["y", "w"], 5)) == [("a", "1"), ("b", "2")]
    assert run_sync(oracle.validate(1, "", "Pair for x", ["y", "w"], ("b", "2"), 1)) is True
    assert model.is_standin and model.name.startswith("standin-genop-script-")
    assert ScriptedModel({"a": ["b"]}).name != model.name      # the script is part of the identity


def test_load_script_errors_are_clear(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not JSON"):
        load_script(bad)
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"prompt": "not a list"}), encoding="utf-8")
    with pytest.raises(ValueError, match="expected a list"):
        load_script(wrong)
    with pytest.raises(FileNotFoundError):
        load_script(tmp_path / "missing.json")


def test_prompts_are_templates_with_the_documented_fields():
    assert PROMPTS["propose"].fields == {"instruction", "fields", "k", "example"}
    assert PROMPTS["validate"].fields == {"instruction", "candidate"}
    with pytest.raises(ValueError):
        Oracle(Replies(), aggregation="mostly")
