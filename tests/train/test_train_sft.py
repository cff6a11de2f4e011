"""LoRA SFT on a tiny random decoder: the response loss falls, the folder documents the training, checkpoints
resume, the adapter reloads to the same model and is served through the project's OpenAI-compatible server."""

from __future__ import annotations

import json

import openai
import pytest
from train_helpers import sft_config

from sparqlab.core.hashing import file_digest
from sparqlab.train.sft import load_training, split_records, train_sft


def test_training_lowers_the_loss_on_response_tokens(trained):
    summary = trained.summary
    assert summary["steps"] == 8
    assert summary["final_eval_loss"] < summary["initial_eval_loss"] - 0.1
    assert summary["last_train_loss"] < summary["first_train_loss"]
    evals = [e["eval_loss"] for e in summary["history"] if "eval_loss" in e]
    assert len(evals) >= 2 and evals[-1] < evals[0]


def test_the_output_folder_documents_the_training(trained, toy_data):
    summary = load_training(trained.out)
    assert summary["data"]["sha256"] == file_digest(toy_data)
    assert summary["data"]["records"] == 24 and summary["data"]["eval"] == 6 and summary["data"]["train"] == 18
    assert 0 < summary["data"]["train_response_tokens"] < summary["data"]["train_tokens"]
    assert summary["config"]["lora_r"] == 8 and summary["base"]["model_type"] == "llama"
    assert 0 < summary["base"]["trainable_parameters"] < summary["base"]["parameters"]
    assert {"torch", "transformers", "peft"} <= set(summary["versions"])
    config = json.loads((trained.adapter / "adapter_config.json").read_text())
    assert config["r"] == 8 and config["lora_alpha"] == 16
    assert (trained.adapter / "adapter_model.safetensors").stat().st_size > 0
    assert (trained.out / "loss_curve.png").read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in (trained.out / "checkpoints").glob("checkpoint-*")) == ["checkpoint-4",
                                                                                            "checkpoint-8"]


def test_the_held_out_slice_is_seeded_and_disjoint():
    records = [{"id": i} for i in range(20)]
    train, held = split_records(records, 0.25, seed=1)
    assert len(held) == 5 and len(train) == 15
    assert {r["id"] for r in train}.isdisjoint(r["id"] for r in held)
    assert split_records(records, 0.25, seed=1) == (train, held)
    assert split_records(records, 0.25, seed=2)[1] != held
    assert len(split_records(records[:2], 0.01, seed=0)[1]) == 1  # a positive fraction holds out at least one


def test_a_second_start_resumes_and_a_changed_training_is_refused(trained, tiny_decoder, toy_data, tmp_path):
    import shutil

    out = tmp_path / "resume"
    shutil.copytree(trained.out / "checkpoints", out / "checkpoints")
    resumed = train_sft(sft_config(tiny_decoder, toy_data, out, max_steps=10), figure=False).summary
    assert resumed["resumed"] and resumed["steps"] == 10
    assert min(e["step"] for e in resumed["history"] if "loss" in e) <= 8  # the log history came back too
    with pytest.raises(ValueError, match="changed: learning_rate"):
        train_sft(sft_config(tiny_decoder, toy_data, out, learning_rate=5e-3), figure=False)


def test_4bit_needs_cuda(tiny_decoder, toy_data, tmp_path):
    with pytest.raises(RuntimeError, match="CUDA"):
        train_sft(sft_config(tiny_decoder, toy_data, tmp_path / "q", load_4bit=True), figure=False)


def test_invalid_settings_are_named(tiny_decoder, toy_data, tmp_path):
    with pytest.raises(ValueError, match="lora_r=0.*eval_fraction=1.0"):
        sft_config(tiny_decoder, toy_data, tmp_path, lora_r=0, eval_fraction=1.0)


def _eval_loss(model, tokenizer, records):
    import torch

    from sparqlab.train.records import collate, encode

    batch = collate([encode(tokenizer, r, 512) for r in records], tokenizer.pad_token_id)
    with torch.no_grad():
        return float(model(**batch).loss)


def test_the_saved_adapter_reloads_to_the_trained_model(trained, tiny_decoder):
    from sparqlab.llm.local_transformers import LocalTransformersModel
    from sparqlab.train.records import read_records
    from sparqlab.train.sft import split_records

    summary = trained.summary
    _, held = split_records(read_records(summary["data"]["path"]), 0.25, 0)
    tuned = LocalTransformersModel(tiny_decoder, trained.adapter, name="corrector")
    plain = LocalTransformersModel(tiny_decoder)
    assert _eval_loss(tuned.model, tuned.tokenizer, held) == pytest.approx(summary["final_eval_loss"], abs=1e-3)
    assert _eval_loss(plain.model, plain.tokenizer, held) == pytest.approx(summary["initial_eval_loss"], abs=1e-3)


def test_the_adapter_is_served_and_answers_through_the_openai_client(trained, tiny_decoder):
    from sparqlab.llm.factory import get_model
    from sparqlab.serving.model_server import serve_in_background

    model = get_model(f"local:{tiny_decoder}", adapter=str(trained.adapter), served_name="corrector")
    messages = [{"role": "system", "content": "You translate questions into SPARQL."},
                {"role": "user", "content": "Question: Which films did [Tom Hanks] direct?"}]
    local = model.chat_sync(messages, max_tokens=12)
    with serve_in_background(model) as url:
        client = openai.OpenAI(base_url=url, api_key="dummy", max_retries=0)
        assert [m.id for m in client.models.list().data] == ["corrector"]
        reply = client.chat.completions.create(model="corrector", messages=messages, max_tokens=12, temperature=0)
        with pytest.raises(openai.NotFoundError):
            client.chat.completions.create(model="generator", messages=messages)
    assert reply.choices[0].message.content == local.text  # greedy decoding: the same tokens over HTTP
    assert reply.usage.completion_tokens == local.usage.completion_tokens <= 12
    assert reply.usage.prompt_tokens == local.usage.prompt_tokens > 20


def test_local_models_refuse_missing_folders_and_unknown_options(tmp_path, tiny_decoder):
    from sparqlab.llm.factory import get_model

    with pytest.raises(FileNotFoundError, match="adapter folder"):
        get_model(f"local:{tiny_decoder}", adapter=str(tmp_path / "none"))
    with pytest.raises(TypeError, match="base_url"):
        get_model(f"local:{tiny_decoder}", base_url="http://x")


def test_continual_learning_starts_from_the_given_adapter(trained, tiny_decoder, toy_data, tmp_path, capsys):
    """DeSQ §4's recipe (QALD-10 from LC-QuAD 2.0 weights) as `sparqlab train sft --init-adapter`: the second
    training starts where the first ended (its initial held-out loss is the first's final one), not from a fresh
    adapter, and keeps the adapter's LoRA settings."""
    from sparqlab.cli import main

    out = tmp_path / "continued"
    assert main(["train", "sft", "--base", str(tiny_decoder), "--data", str(toy_data), "--out", str(out),
                 "--init-adapter", str(trained.adapter), "--max-steps", "2", "--batch-size", "8", "--grad-accum", "1",
                 "--lr", "1e-2", "--eval-fraction", "0.25", "--seed", "0", "--threads", "1", "--lora-r", "4",
                 "--no-progress"]) == 0
    summary = load_training(out)
    assert summary["initial_eval_loss"] == pytest.approx(trained.summary["final_eval_loss"], abs=1e-3)
    assert summary["initial_eval_loss"] < trained.summary["initial_eval_loss"] - 0.1
    assert summary["config"]["init_adapter"] == str(trained.adapter)
    assert json.loads((out / "adapter" / "adapter_config.json").read_text())["r"] == 8  # the adapter's rank
    with pytest.raises(ValueError, match="not a LoRA adapter"):
        sft_config(tiny_decoder, toy_data, tmp_path / "x", init_adapter=str(tmp_path))


def test_a_served_tiny_random_decoder_is_marked_a_standin_by_its_client(trained, tiny_decoder):
    """Whatever name `sparqlab train serve` gives it, a model on random weights is no LLM: the client learns so
    from /v1/models and runs record model_is_standin."""
    import asyncio

    from sparqlab.llm.cache import CachedModel
    from sparqlab.llm.local_transformers import LocalTransformersModel
    from sparqlab.llm.openai_backend import OpenAIModel
    from sparqlab.serving.model_server import serve_in_background

    served = LocalTransformersModel(tiny_decoder, trained.adapter, name="my-sft")
    assert served.is_standin
    with serve_in_background(served) as url:
        client = CachedModel(OpenAIModel("my-sft", base_url=url, max_retries=0), mode="off")
        assert not client.is_standin  # the name says nothing
        asyncio.run(client.inner.served_identity())
    assert client.is_standin
