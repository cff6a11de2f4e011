"""Every reader of model replies on the whole reply-shape corpus (tests/data/replies/corpus.json):
each reply gives exactly the content it carries, or no content and the typed failure its shape calls for — never an
exception, never a wrong action or query."""

import json
from pathlib import Path

import pytest

from sparqlab.llm.replies import failure_kind
from sparqlab.methods.agents.actions import parse_answer_type, parse_reparse, read_actions
from sparqlab.methods.desq.generation import parse_constraints
from sparqlab.methods.desq.structured import parse_output
from sparqlab.methods.genop.oracle import parse_proposals, parse_verdict
from sparqlab.platform.parsing import extract_sparql, first_json_object

CORPUS = json.loads((Path(__file__).parents[1] / "data" / "replies" / "corpus.json").read_text(encoding="utf-8"))
ENTRIES = CORPUS["entries"]


def _action(action):
    return None if action is None else {"name": action.name, "argument": action.argument}


def _answer_type(text):
    found = parse_answer_type(text)
    return None if found is None else {"answer_type_label": found[0], "answer_type_id": found[1]}


def _prune(text):
    kept = first_json_object(text)
    return None if not kept else {"keys": sorted(kept)}


def _map(text):
    parsed = parse_output(text)
    return {"fragments": [f.text for f in parsed.fragments]} if parsed.usable else None


def _propose(text):
    tuples = parse_proposals(text, ["y"], 5)
    return None if not tuples else {"tuples": [list(t) for t in tuples]}


def _verdict(text):
    verdict = parse_verdict(text)
    return None if verdict is None else {"verdict": verdict}


def _sparql(text):
    query = extract_sparql(text)
    return None if query is None else {"sparql": query}


READERS = {
    "controller": lambda text: _action(read_actions(text).action),
    "reparse": lambda text: _action(parse_reparse(text)),
    "answer_type": _answer_type,
    "prune": _prune,
    "ggc_generate": _sparql, "ggc_correct": _sparql, "direct_generate": _sparql,
    "desq_decompose": lambda text: (lambda c: {"constraints": c} if c else None)(parse_constraints(text)),
    "desq_map": _map,
    "genop_propose": _propose,
    "genop_validate": _verdict,
}


def test_the_corpus_covers_every_call_kind_with_the_common_shapes():
    kinds = {e["kind"] for e in ENTRIES}
    assert kinds == set(READERS)
    for kind in kinds:
        shapes = {e["shape"] for e in ENTRIES if e["kind"] == kind}
        assert {"reasoning_field", "think_inline", "truncated", "empty", "refusal", "reasoning_exhausted"} <= shapes
        assert {e.get("failure") for e in ENTRIES if e["kind"] == kind} >= {
            "empty_reply", "reasoning_exhausted", "truncated_reply", "unreadable_reply"}


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_reader_extracts_the_carried_content_or_a_typed_failure(entry):
    got = READERS[entry["kind"]](entry["content"])
    if "carries" in entry:
        assert got == entry["carries"]
    else:
        assert got is None
        assert failure_kind(entry["content"], entry["finish_reason"], entry.get("reasoning")) == entry["failure"]


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e["kind"] == "controller"],
                         ids=[e["id"] for e in ENTRIES if e["kind"] == "controller"])
def test_one_action_per_reply_the_rest_is_dropped(entry):
    reading = read_actions(entry["content"])
    assert len(reading.dropped) == entry.get("dropped", 0)
