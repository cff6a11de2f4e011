"""``noisy:BASE``: realistic wrappings that never change the content a parser reads,
deterministic per seed and request, named so it is never mistaken for the base model, cached through the base."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from sparqlab.llm import ChatRequest, get_model, make_model
from sparqlab.llm.noise import SHAPES, NoisyModel, apply_shape

_spec = importlib.util.spec_from_file_location(
    "reply_corpus_readers", Path(__file__).with_name("test_reply_corpus.py"))
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)
PLAIN = [e for e in corpus.ENTRIES if e["shape"] in ("plain", "plain_yes", "plain_no", "stop_bare", "alias_name",
                                                      "nested_parentheses", "ac_labels", "bulleted")
         and "carries" in e]


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("entry", PLAIN, ids=[e["id"] for e in PLAIN])
def test_every_shape_keeps_the_content_every_reader_extracts(entry, shape):
    text, _ = apply_shape(shape, entry["content"])
    assert corpus.READERS[entry["kind"]](text) == entry["carries"]


def test_the_corpus_plain_replies_cover_every_call_kind():
    assert {e["kind"] for e in PLAIN} == set(corpus.READERS)


def test_noise_is_deterministic_per_seed_and_request_and_follows_the_rate():
    base = get_model("standin-echo")
    requests = [ChatRequest.build("x", f"SELECT ?x WHERE {{ ?x ?p {i} }}") for i in range(400)]
    half = NoisyModel(base, rate=0.5, seed=1)
    chosen = [half.choose(r) for r in requests]
    assert chosen == [NoisyModel(base, rate=0.5, seed=1).choose(r) for r in requests]
    assert chosen != [NoisyModel(base, rate=0.5, seed=2).choose(r) for r in requests]
    assert 150 < sum(c is not None for c in chosen) < 250 and set(chosen) - {None} == set(SHAPES)
    assert all(NoisyModel(base, rate=0.0).choose(r) is None for r in requests)
    assert all(NoisyModel(base, rate=1.0, shapes="fence").choose(r) == "fence" for r in requests)


def test_noisy_model_is_named_as_such_and_its_base_replies_are_cached(tmp_path):
    model = make_model({"model": "noisy:standin-echo", "rate": 1.0, "shapes": "fence,reasoning_field",
                        "cache_path": str(tmp_path / "responses.sqlite")})
    assert model.name == "noisy:standin-echo" and model.is_standin
    first = model.chat_sync("SELECT ?x WHERE { ?x ?p ?o }")
    again = model.chat_sync("SELECT ?x WHERE { ?x ?p ?o }")
    assert first.text == again.text and again.cached and not first.cached
    assert first.text == "```sparql\nSELECT ?x WHERE { ?x ?p ?o }\n```" or first.reasoning
    with pytest.raises(ValueError, match="unknown or no shapes"):
        get_model("noisy:standin-echo", shapes="sparkles")
