"""The prompt tokens servers report as taken from their prefix cache are read, kept in the response cache and
summed per run beside the simulated figure (issue 49)."""

import pytest

from sparqlab.llm import CachedModel, OpenAIModel
from sparqlab.methods import DirectSparql
from sparqlab.runs import RunConfig, run
from sparqlab.serving.model_server import serve_in_background
from support.llama_like import LlamaLike, serve_llama_like


def test_a_run_sums_what_the_server_reports_beside_the_simulation(tmp_path):
    config = RunConfig(kg="movies", dataset="metaqa-1hop", limit=6, model="standin-keyword-rules",
                       output_root=str(tmp_path / "runs"), cache_path=str(tmp_path / "responses.sqlite"),
                       concurrency=1, progress=False)
    with serve_in_background("standin-keyword-rules") as url:
        metrics = run(DirectSparql(), config=config.replace(model_url=url)).metrics
    reuse, tokens = metrics["prefix_cache"], metrics["usage"]["tokens"]
    # one server, one request at a time: it keeps what the client's simulation keeps
    assert 0 < reuse["reported"]["cached_prompt_tokens"] == tokens["prompt"] - tokens["prompt_recomputed"]
    assert reuse["reported"]["reused_share"] == reuse["simulated"]["reused_share"] > 0.5
    with serve_in_background("standin-keyword-rules") as url:  # a fresh server, the run's cache: replies replayed
        rerun = run(DirectSparql(), config=config.replace(model_url=url, experiment="again")).metrics
    assert rerun["model_calls_uncached"] == 0 and rerun["prefix_cache"]["reported"] == reuse["reported"]


@pytest.mark.parametrize(("shape", "expected"), [
    ({"usage_extra": {"prompt_tokens_details": {"cached_tokens": 12}}}, 12),  # vLLM, OpenAI
    ({"timings": {"cache_n": 15, "prompt_n": 5}}, 15),  # llama-server
    ({}, None),  # llama-cpp-python 0.3: nothing said
])
def test_each_servers_shape_of_cached_tokens_is_read(tmp_path, shape, expected):
    with serve_llama_like(LlamaLike(**shape)) as url:
        model = CachedModel(OpenAIModel("smollm2-135m", base_url=url), tmp_path / "responses.sqlite")
        reply = model.chat_sync("Who directed Alien?")
    assert (reply.usage.prompt_tokens, reply.usage.cached_tokens) == (20, expected)
