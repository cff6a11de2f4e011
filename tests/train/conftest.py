"""Tiny random models built from configs (tokenizers trained on the fly) and one short LoRA run shared by the
train tests, so each expensive step happens once per session."""

from __future__ import annotations

import os

import pytest
from train_helpers import sft_config, toy_records

from sparqlab.core.jsonl import write_jsonl

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def toy_data(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "toy.jsonl"
    write_jsonl(path, toy_records())
    return path


@pytest.fixture(scope="session")
def tiny_decoder(tmp_path_factory):
    from sparqlab.train.tiny import build_tiny_decoder

    texts = [m["content"] for r in toy_records() for m in r["messages"]]
    return build_tiny_decoder(tmp_path_factory.mktemp("models") / "decoder", texts, vocab_size=400)


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory):
    from sparqlab.train.tiny import build_tiny_encoder

    return build_tiny_encoder(tmp_path_factory.mktemp("models") / "encoder", [r["messages"][1]["content"]
                                                                              for r in toy_records()])


@pytest.fixture(scope="session")
def trained(tiny_decoder, toy_data, tmp_path_factory):
    """A LoRA adapter trained for 8 steps on the toy task."""
    from sparqlab.train.sft import train_sft

    root = tmp_path_factory.mktemp("sft")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SPARQLAB_FIGURES", str(root / "figures"))
        return train_sft(sft_config(tiny_decoder, toy_data, root / "run"))


@pytest.fixture(autouse=True)
def isolated_outputs(tmp_path, monkeypatch):
    """Figures and runs of a test go to its own folder, never into the project's."""
    monkeypatch.setenv("SPARQLAB_FIGURES", str(tmp_path / "figures"))
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
