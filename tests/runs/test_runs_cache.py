"""The response cache through the runner: a rerun of a finished configuration makes zero model calls, replay
serves it offline, and a replay miss stops the run loudly."""

import pytest
from runs_helpers import EchoChatMethod, TinyKG, tiny_questions

from sparqlab.core.jsonl import read_jsonl
from sparqlab.llm import CachedModel, EchoStandin
from sparqlab.runs import RunAborted, RunConfig, run


class CountingEcho(EchoStandin):
    """``standin-echo`` that counts the calls that reach it."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    async def acomplete(self, request):
        self.calls += 1
        return await super().acomplete(request)


def config(root, **overrides):
    return RunConfig(**{"experiment": "cache", "output_root": str(root), "progress": False,
                        "cache_path": str(root.parent / "responses.sqlite"), **overrides})


def test_rerun_of_a_finished_config_makes_zero_model_calls(root, tmp_path):
    questions = tiny_questions(5)
    first_model = CountingEcho()
    first = run(EchoChatMethod(calls=2), questions, config(root), kg=TinyKG(5), model=first_model)
    # Two identical requests per question: the second is already a cache hit.
    assert first_model.calls == 5 and first.metrics["model_calls_uncached"] == 5

    # Same configuration in a fresh results folder: every answer is recomputed, every response from the cache.
    fresh_root = tmp_path / "elsewhere"
    second_model = CountingEcho()
    second = run(EchoChatMethod(calls=2), questions, config(fresh_root), kg=TinyKG(5), model=second_model)
    assert second.answered == 5 and second_model.calls == 0
    assert second.metrics["model_calls_uncached"] == 0
    assert second.metrics["model_cache_last_session"]["calls"] == 0
    assert second.metrics["usage"]["model_calls"] == first.metrics["usage"]["model_calls"]
    assert second.metrics["f1"] == first.metrics["f1"] == 1.0
    strip = {"latency_s", "model_latency_s", "model_calls_uncached"}
    assert [{k: v for k, v in r.items() if k not in strip} for r in read_jsonl(first.run_dir / "predictions.jsonl")
            if r["id"] == "q3"] == [{k: v for k, v in r.items() if k not in strip}
                                    for r in read_jsonl(second.run_dir / "predictions.jsonl") if r["id"] == "q3"]

    # The same folder again: nothing left to do, still zero calls.
    third_model = CountingEcho()
    third = run(EchoChatMethod(calls=2), questions, config(root), kg=TinyKG(5), model=third_model)
    assert third.answered == 0 and third_model.calls == 0

    # Replay mode, from config alone (the model is built by the llm layer's factory): served from the cache.
    replayed = run(EchoChatMethod(calls=2), questions, config(tmp_path / "laptop", model="standin-echo",
                                                             cache="replay"), kg=TinyKG(5))
    assert replayed.metrics["f1"] == 1.0 and replayed.metrics["model_calls_uncached"] == 0
    assert replayed.run_id == first.run_id


def test_a_replay_miss_aborts_the_run_with_a_clear_message(root):
    with pytest.raises(RunAborted, match="replay mode: no cached response"):
        run(EchoChatMethod(), tiny_questions(3), config(root, model="standin-echo", cache="replay"),
            kg=TinyKG(3))


def test_a_ready_cached_model_is_used_as_given(root, tmp_path):
    model = CachedModel(CountingEcho(), path=tmp_path / "own.sqlite")
    run(EchoChatMethod(calls=1), tiny_questions(2), config(root), kg=TinyKG(2), model=model)
    assert model.calls == 2 and (tmp_path / "own.sqlite").exists()
    assert not (root.parent / "responses.sqlite").exists()
