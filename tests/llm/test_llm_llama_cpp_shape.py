"""What a llama.cpp server teaches the client (issue 49): it answers any model name, so a name it does not list
must stop a run before any work; it names only an alias, so the endpoint and its self-description (``/props``)
decide which cached replies are its own."""

import hashlib
import json
import time

import pytest

from sparqlab.core.event_loops import run_sync
from sparqlab.llm import CachedModel, OpenAIModel, UnknownModel
from sparqlab.methods import DirectSparql
from sparqlab.runs import RunAborted, RunConfig, run
from support.llama_like import LlamaLike, serve_llama_like


@pytest.fixture
def config(tmp_path):
    def make(**overrides):
        return RunConfig(**{"experiment": "llama", "kg": "movies", "dataset": "metaqa-1hop", "limit": 2,
                            "output_root": str(tmp_path / "runs"), "cache_path": str(tmp_path / "responses.sqlite"),
                            "progress": False, **overrides})
    return make


@pytest.mark.parametrize("cache", ["read_write", "off"])
def test_a_name_the_server_does_not_list_stops_the_run_before_any_work(config, tmp_path, cache):
    server = LlamaLike()
    refused = "does not serve the model 'smolm2-135m'; it serves 'smollm2-135m'"
    with serve_llama_like(server) as url, pytest.raises(RunAborted, match=refused) as caught:
        run(DirectSparql(), config=config(model="smolm2-135m", model_url=url, cache=cache))
    assert isinstance(caught.value.__cause__, UnknownModel)
    assert server.requests == [] and not (tmp_path / "runs").exists()


def test_an_unlisted_name_is_accepted_only_when_asked_and_then_recorded_as_a_warning(config):
    with serve_llama_like(LlamaLike()) as url:
        result = run(DirectSparql(), config=config(model="any-name", model_url=url,
                                            model_options={"accept_unlisted_name": True}))
    environment = json.loads((result.run_dir / "environment.json").read_text())
    assert result.metrics["n_done"] == 2
    assert environment["warnings"] == [
        f"the endpoint {url} does not list the model 'any-name' (it lists 'smollm2-135m'); accepted because "
        "accept_unlisted_name is set: the name recorded is the one asked for, not one the server confirmed"]


def props(template: str) -> dict:
    return {"total_slots": 1, "default_generation_settings": {"n_ctx": 4096}, "chat_template": template,
            "model_path": "/models/SmolLM2-135M-Instruct.Q4_1.gguf", "build_info": "b1-abc"}


def ask(url: str, cache_path, mode: str = "read_write") -> tuple[str, CachedModel]:
    model = CachedModel(OpenAIModel("smollm2-135m", base_url=url, max_retries=0), cache_path, mode)
    return model.chat_sync("Who directed Alien?", max_tokens=16).text, model


def test_servers_under_one_alias_keep_their_own_cached_replies(tmp_path):
    cache = tmp_path / "responses.sqlite"
    chatml = LlamaLike(props=props("{{ '<|im_start|>' }}"), reply="from chatml")
    with serve_llama_like(chatml) as url:
        first, model = ask(url, cache)
        again, model = ask(url, cache)
    assert (first, again, model.hits, len(chatml.requests)) == ("from chatml", "from chatml", 1, 1)
    served = model.describe()
    assert served["identified_by"] == "llama_cpp_props" and served["slots"] == 1
    assert served["served"]["props"] == {
        "model_path": "/models/SmolLM2-135M-Instruct.Q4_1.gguf", "build_info": "b1-abc", "n_ctx": 4096,
        "chat_template_sha256": hashlib.sha256(b"{{ '<|im_start|>' }}").hexdigest()}  # the digest, not the text
    llama2 = LlamaLike(props=props("[INST] {{ content }} [/INST]"), reply="from llama-2")
    with serve_llama_like(llama2) as url:
        other, model = ask(url, cache)
        replayed, _ = ask(url, cache, mode="replay")
    assert (other, model.hits, len(llama2.requests)) == ("from llama-2", 0, 1)
    assert replayed == "from llama-2"  # replay needs no endpoint: the entry of the last server is served


def test_a_server_describing_nothing_is_identified_by_its_endpoint(tmp_path):
    cache = tmp_path / "responses.sqlite"
    # both up at once, so on two ports (one after the other, the second may get the first one's port back)
    with serve_llama_like(LlamaLike(reply="first server")) as first, \
            serve_llama_like(LlamaLike(reply="second server")) as second:
        for url, reply in ((first, "first server"), (second, "second server")):
            text, model = ask(url, cache)
            assert text == reply and model.hits == 0
            assert model.describe()["identified_by"] == "endpoint_only"
            assert model.identity == {"id": "smollm2-135m", "endpoint": url}


def test_a_file_served_again_on_another_port_keeps_its_cached_replies(tmp_path):
    """sparqlab's launcher names the served file by its SHA-256 in ``/props``: each ``reproduce --real`` serves it on
    a new port, and the replies cached against the first port are the second's; other bytes are another model."""
    cache = tmp_path / "responses.sqlite"

    def launched(sha256: str) -> dict:
        return {**props("{{ '<|im_start|>' }}"), "identity": {"engine": "llama-cpp-python", "model_sha256": sha256}}

    first_server, again_server = LlamaLike(props=launched("ab" * 32), reply="first"), LlamaLike(props=launched("ab" * 32))
    retrained = LlamaLike(props=launched("cd" * 32), reply="retrained")
    with serve_llama_like(first_server) as first, serve_llama_like(again_server) as again, \
            serve_llama_like(retrained) as other:
        assert first != again
        assert ask(first, cache)[0] == "first"
        text, model = ask(again, cache)
        assert (text, model.hits, len(again_server.requests)) == ("first", 1, 0)
        assert model.describe()["identified_by"] == "served_file_sha256" and "endpoint" not in model.identity
        text, model = ask(other, cache)
        assert (text, model.hits, len(retrained.requests)) == ("retrained", 0, 1)


def test_the_identity_check_gives_the_served_models_in_its_error():
    with serve_llama_like(LlamaLike()) as url, pytest.raises(UnknownModel, match="it serves 'smollm2-135m'"):
        run_sync(OpenAIModel("smollm2", base_url=url).served_identity())


def test_a_reply_that_never_ends_holds_its_question_no_longer_than_the_deadline(config):
    """llama-cpp-python's ``chatml-function-calling`` ignores ``max_tokens`` on later tool calls and generates to
    the end of the context: the question's deadline cancels the request and closes its connection."""
    server = LlamaLike(drip=True)
    with serve_llama_like(server) as url:
        result = run(DirectSparql(), config=config(model="smollm2-135m", model_url=url, limit=1, cache="off",
                                                   question_timeout_s=1.0))
        deadline = time.monotonic() + 5
        while not server.closed_at and time.monotonic() < deadline:
            time.sleep(0.05)
    assert result.predictions()["error_category"].tolist() == ["question_timeout"]
    assert server.requests[0]["max_tokens"] == 2048  # the call kind's declared budget went on the wire
    assert len(server.closed_at) == 1 and server.closed_at[0] - server.asked_at[0] < 2  # the 1 s deadline


def test_no_more_requests_in_flight_than_the_server_has_slots(config):
    announced = LlamaLike(props={"total_slots": 1}, delay_s=0.2)
    with serve_llama_like(announced) as url:
        one = run(DirectSparql(), config=config(model="smollm2-135m", model_url=url, limit=4, concurrency=4))
    assert announced.most_at_once == 1 and len(announced.requests) == 4
    assert one.metrics["model_slots_last_session"] == {"slots": {url: 1}, "questions_in_flight": 1}
    silent = LlamaLike(delay_s=0.2)  # announces nothing: the setting decides
    with serve_llama_like(silent) as url:
        two = run(DirectSparql(), config=config(model="smollm2-135m", model_url=url, limit=4, concurrency=4,
                                                model_slots=2, experiment="two"))
    assert silent.most_at_once == 2 and two.metrics["model_slots_last_session"]["questions_in_flight"] == 2
