"""No silent endpoint: a served model without a URL is refused by the Python API exactly as by the
CLI (one rule, one message, :func:`sparqlab.llm.openai_backend.model_endpoint`), before anything is written."""

from __future__ import annotations

import pytest

from sparqlab.cli import main
from sparqlab.llm import get_model, make_model
from sparqlab.llm.openai_backend import OpenAIModel
from sparqlab.methods import get_method
from sparqlab.runs import RunConfig, run


@pytest.fixture
def no_model_env(tmp_path, monkeypatch):
    for name in ("SPARQLAB_MODEL", "SPARQLAB_MODEL_URL", "SPARQLAB_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    return tmp_path / "runs"


def _message(call) -> str:
    with pytest.raises(ValueError) as caught:
        call()
    return str(caught.value)


def test_api_and_cli_refuse_a_served_model_without_url_with_one_message(no_model_env, capsys, movies_store):
    expected = _message(lambda: OpenAIModel("my-llama"))
    assert expected.startswith("model 'my-llama' is served by an OpenAI-compatible server, but no endpoint is given")
    assert "--model-url http://HOST:PORT/v1" in expected and "base_url=" in expected and "standin-echo" in expected
    assert _message(lambda: get_model("my-llama")) == expected
    assert _message(lambda: make_model({"model": "my-llama", "cache_mode": "off"})) == expected
    direct = get_method("direct")()
    config = RunConfig(experiment="noendpoint", kg="movies", dataset="metaqa-1hop", limit=2, model="my-llama")
    assert _message(lambda: run(direct, config=config)) == expected
    assert not no_model_env.exists()  # refused before a results folder was made
    assert main(["run", "direct", "-d", "metaqa-1hop", "--limit", "2", "-e", "noendpoint", "-m", "my-llama"]) == 1
    assert capsys.readouterr().err.strip() == f"sparqlab run: ValueError: {expected}"
    assert not no_model_env.exists()


def test_a_url_from_the_argument_or_the_environment_is_used_as_given(no_model_env, monkeypatch):
    assert OpenAIModel("my-llama", base_url="http://gpu:8000").base_url == "http://gpu:8000/v1"
    monkeypatch.setenv("SPARQLAB_MODEL_URL", "http://gpu2:9000/v1")
    assert get_model("my-llama").base_url == "http://gpu2:9000/v1"
    assert get_model("standin-echo").is_standin  # a stand-in without URL runs in process, no endpoint needed
