"""Tiny random models built from configs (tokenizers trained on the fly) and one short LoRA run shared by the
train tests, so each expensive step happens once per session."""

from __future__ import annotations

import json
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

NAMES = ["Tom Hanks", "Meryl Streep", "Ridley Scott", "Greta Gerwig", "Bong Joon-ho", "Agnes Varda",
         "Akira Kurosawa", "Sofia Coppola"]
RELATIONS = {"star in": "starred_actors", "direct": "directed_by", "write": "written_by"}


def toy_records() -> list[dict]:
    """A learnable toy task: the response repeats the bracketed name and maps the verb to a relation."""
    records = []
    for name in NAMES:
        for verb, relation in RELATIONS.items():
            records.append({"id": f"{relation}-{name}", "messages": [
                {"role": "system", "content": "You translate questions into SPARQL."},
                {"role": "user", "content": f"Question: Which films did [{name}] {verb}?"},
                {"role": "assistant", "content": f'SELECT ?f WHERE {{ ?f :{relation} "{name}" }}'}]})
    return records


@pytest.fixture(scope="session")
def toy_data(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "toy.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in toy_records()), encoding="utf-8")
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


def sft_config(base, data, out, **changes):
    from sparqlab.train.sft import SFTConfig

    settings = {"max_steps": 8, "batch_size": 8, "grad_accum": 1, "learning_rate": 1e-2, "eval_fraction": 0.25,
                "eval_steps": 4, "save_steps": 4, "lora_r": 8, "lora_alpha": 16, "threads": 1, "progress": False,
                "seed": 0}
    return SFTConfig(base=str(base), data=str(data), out=str(out), **{**settings, **changes})


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
