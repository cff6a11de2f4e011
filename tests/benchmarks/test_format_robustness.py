"""The format-robustness benchmark's noise (benchmarks/format_robustness.py): realistic wrappings that never change
the content a parser reads, deterministic per seed and request, a stand-in's wrapper named so it is never mistaken
for the base model, and a method run through the runner with it keeps its F1."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from sparqlab.llm import ChatRequest, get_model, make_model
from sparqlab.llm.standins import STANDINS, standin_names
from support.benchmarks import load_benchmark

bench = load_benchmark("format_robustness")
SHAPES, NoisyModel, apply_shape = bench.SHAPES, bench.NoisyModel, bench.apply_shape

_spec = importlib.util.spec_from_file_location(
    "reply_corpus_readers", Path(__file__).parents[1] / "llm" / "test_reply_corpus.py")
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



@pytest.fixture(autouse=True)
def _standins_restored():
    """The noisy stand-ins a test registers are gone after it: other tests list every registered stand-in. The
    plug-ins are loaded before the table is saved, so their stand-ins stay (they register only once a process)."""
    standin_names()
    with STANDINS.restored():
        yield


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


def test_a_noisy_standin_is_named_as_such_and_cached_as_any_model(tmp_path):
    name = bench.noisy_standin("standin-echo")
    model = make_model({"model": name, "rate": 1.0, "shapes": "fence,reasoning_field",
                        "cache_path": str(tmp_path / "responses.sqlite")})
    assert model.name == name == "standin-noisy-echo" and model.is_standin
    first = model.chat_sync("SELECT ?x WHERE { ?x ?p ?o }")
    again = model.chat_sync("SELECT ?x WHERE { ?x ?p ?o }")
    assert first.text == again.text and again.cached and not first.cached
    assert first.text == "```sparql\nSELECT ?x WHERE { ?x ?p ?o }\n```" or first.reasoning
    with pytest.raises(ValueError, match="unknown or no shapes"):
        get_model(name, shapes="sparkles")


def test_a_method_run_with_its_noisy_standin_keeps_its_f1(tmp_path, monkeypatch):
    """Every reply re-wrapped (rate 1) and the direct baseline still scores as on the bare stand-in."""
    from sparqlab.graphs.movies import ensure_store

    ensure_store()  # the runner opens the movie KG by name
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    spec = {"method": ("direct", {}), "model": "standin-keyword-rules",
            "run": {"kg": "movies", "dataset": "metaqa-1hop", "split": "test", "limit": 3}}
    bare = bench.run_method(spec, rate=0.0, seed=1)
    assert bare > 0 and bench.run_method(spec, rate=1.0, seed=1) == bare
