"""Training-data builders and `sparqlab train`: JSONL with manifests, refusal of test splits, and the CLI from
data to a trained adapter (in process)."""

from __future__ import annotations

import json

import pytest

from sparqlab.cli import main
from sparqlab.core.hashing import file_digest
from sparqlab.train.data import build_from_dataset, manifest_path, question_records
from sparqlab.train.records import read_records, record_messages


def test_generic_builder_writes_gold_queries_with_a_manifest(tmp_path):
    from sparqlab.data.registry import load
    from sparqlab.platform.parsing import extract_sparql

    out = tmp_path / "generic.jsonl"
    manifest = build_from_dataset("generic", "mcqa-movies", "train", out, limit=5, progress=False)
    records = read_records(out)
    questions = load("mcqa-movies", "train", 5)
    assert [r["id"] for r in records] == [q.id for q in questions]
    for record, question in zip(records, questions, strict=True):
        prompt, response = record_messages(record)
        assert question.text in prompt[-1]["content"] and "movies knowledge graph" in prompt[0]["content"]
        assert extract_sparql(response).strip() == question.gold_sparql.strip()  # what inference parses back
    assert manifest == json.loads(manifest_path(out).read_text())
    assert manifest["sha256"] == file_digest(out) and manifest["records"] == 5
    assert manifest["sources"]["dataset"] == "mcqa-movies" and manifest["counts"]["without_gold"] == 0


def test_questions_without_gold_are_left_out_and_test_splits_refused(tmp_path):
    from sparqlab.data.question import Question

    questions = [Question(id="a", text="Who?", gold_sparql="ASK {}", kg="movies"),
                 Question(id="b", text="What?", gold_sparql=None, kg="movies")]
    assert [r["id"] for r in question_records(questions)] == ["a"]
    with pytest.raises(ValueError, match="test split"):
        build_from_dataset("generic", "mcqa-movies", "test", tmp_path / "x.jsonl", limit=2)
    with pytest.raises(ValueError, match="needs the KG"):
        build_from_dataset("desq", "mcqa-movies", "train", tmp_path / "x.jsonl", limit=2)
    assert not (tmp_path / "x.jsonl").exists()


def test_cli_builds_data_writes_a_tiny_model_and_fine_tunes_it(tmp_path, capsys):
    data, model, out = tmp_path / "d.jsonl", tmp_path / "tiny", tmp_path / "sft"
    assert main(["train", "data", "--builder", "generic", "--dataset", "mcqa-movies", "--limit", "6",
                 "--out", str(data)]) == 0
    assert json.loads(capsys.readouterr().out)["records"] == 6
    assert main(["train", "tiny", "decoder", "--out", str(model), "--data", str(data)]) == 0
    assert "pipeline checks only" in capsys.readouterr().out
    assert main(["train", "sft", "--base", str(model), "--data", str(data), "--out", str(out), "--max-steps", "2",
                 "--batch-size", "2", "--grad-accum", "1", "--eval-fraction", "0.34", "--lora-r", "4",
                 "--threads", "1", "--no-progress"]) == 0
    text = capsys.readouterr().out
    printed = json.loads(text[text.rindex('{\n  "adapter"'):])
    assert printed["steps"] == 2 and printed["records"] == 6 and printed["adapter"] == str(out / "adapter")
    training = json.loads((out / "training.json").read_text())
    assert training["steps"] == 2 and training["data"]["eval"] == 2 and training["config"]["lora_r"] == 4
    assert (out / "adapter" / "adapter_config.json").is_file()
    stem = f"loss-curve--out-sft--data-{file_digest(data)[:8]}"
    assert (tmp_path / "figures" / "train-sft" / f"{stem}.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_errors_are_one_line(tmp_path, capsys):
    assert main(["train", "data", "--builder", "nope", "--out", str(tmp_path / "x.jsonl")]) == 1
    assert "unknown builder 'nope'" in capsys.readouterr().err
    assert main(["train", "data", "--builder", "ggc-corrector", "--out", str(tmp_path / "c")]) == 1
    assert "needs --runs" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"messages": [{"role": "user", "content": "q"}]}\n', encoding="utf-8")
    assert main(["train", "sft", "--base", str(tmp_path), "--data", str(bad), "--out", str(tmp_path / "o")]) == 1
    assert "bad.jsonl:1" in capsys.readouterr().err


def test_a_dataset_without_a_train_split_names_where_training_questions_are(tmp_path, capsys):
    """QALD-10 is test-only: the error lists the Wikidata datasets that have a train split, and the explicit way
    to use the test questions; the route it names works."""
    assert main(["train", "data", "--builder", "generic", "--dataset", "qald10", "--out", str(tmp_path / "q")]) == 1
    err = capsys.readouterr().err
    assert "dataset 'qald10' has no split 'train'; valid splits: test" in err
    others = err.split("with a 'train' split: ")[1].split(" (")[0].split(", ")
    assert "qald9plus" in others and "qald10" not in others and "--split test --allow-test" in err
    assert main(["train", "data", "--builder", "generic", "--dataset", "qald9plus", "--limit", "3",
                 "--out", str(tmp_path / "q9.jsonl")]) == 0
    assert len(read_records(tmp_path / "q9.jsonl")) == 3


def test_desq_and_ggc_generator_builders_use_their_packages_prompts(tmp_path):
    from sparqlab.data.registry import load
    from sparqlab.graphs.movies import ensure_store
    from sparqlab.kg import open_kg
    from sparqlab.methods.desq.structured import parse_output
    from sparqlab.methods.ggc.prompts import GENERATOR_USER
    from sparqlab.methods.ggc.split import training_split
    from sparqlab.platform.parsing import extract_sparql

    ensure_store()
    with open_kg("movies") as kg:
        desq = build_from_dataset("desq", "mcqa-movies", "train", tmp_path / "desq.jsonl", limit=2, kg=kg,
                                  progress=False)
        ggc = build_from_dataset("ggc-generator", "mcqa-movies", "train", tmp_path / "gen.jsonl", limit=2, kg=kg)
    assert desq["records"] == 4 and desq["counts"]["undecomposable"] == 0  # two records per question
    constraints, structured = read_records(tmp_path / "desq.jsonl")[:2]
    assert constraints["messages"][-1]["content"].startswith("1. ")
    parsed = parse_output(structured["messages"][-1]["content"])  # the two-part output parses back
    assert parsed.fragments and parsed.slots and not parsed.problems
    generator = read_records(tmp_path / "gen.jsonl")
    question = training_split(load("mcqa-movies", "train")).generator[0]  # the generator's portion (GGC §4.1)
    assert ggc["records"] == 2 and generator[0]["messages"][1]["content"] == GENERATOR_USER.render(
        question=question.text)
    assert "movies" in generator[0]["messages"][0]["content"]
    assert extract_sparql(generator[0]["messages"][2]["content"]).strip() == question.gold_sparql.strip()
