"""`sparqlab train gate`: the GGC encoder gate fine-tuned on a tiny random encoder, a stratified validation slice,
P/R/F1/FPR at tau, the saved gate reloads to the same probabilities, and bad gate files are refused."""

from __future__ import annotations

import json

import numpy as np
import pytest
from train_helpers import NAMES, RELATIONS

from sparqlab.core.hashing import file_digest
from sparqlab.core.jsonl import write_jsonl
from sparqlab.methods.ggc.gate_training import read_gate_examples, stratified_split, train_gate
from sparqlab.train.records import RecordError


def gate_rows() -> list[dict]:
    """Label 1 (correction required) when the query's relation does not fit the question's verb."""
    rows = []
    for name in NAMES:
        for verb, relation in RELATIONS.items():
            for used in RELATIONS.values():
                rows.append({"id": f"{name}-{verb}-{used}", "question": f"Which films did [{name}] {verb}?",
                             "sparql": f'SELECT ?f WHERE {{ ?f :{used} "{name}" }}', "label": int(used != relation)})
    return rows


@pytest.fixture(scope="module")
def gate_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("gate") / "gate.jsonl"
    write_jsonl(path, gate_rows())
    return path


@pytest.fixture(scope="module")
def trained_gate(gate_file, tiny_encoder, tmp_path_factory):
    from sparqlab.methods.ggc.gate import GateSettings

    settings = GateSettings(backend="encoder", encoder_path=str(tiny_encoder), epochs=4, learning_rate=3e-3,
                            batch_size=8, max_length=64, seed=0)
    out = tmp_path_factory.mktemp("gate-out")
    examples = read_gate_examples(gate_file)
    return out, examples, train_gate(examples, settings, out, val_fraction=0.25, data_file=gate_file, seed=0)


def test_the_validation_slice_is_stratified_and_disjoint(gate_file):
    examples = read_gate_examples(gate_file)
    train, held = stratified_split(examples, 0.25, seed=0)
    assert len(train) + len(held) == len(examples) == 72
    assert sum(e.label for e in held) == 12 and len(held) - sum(e.label for e in held) == 6
    assert {e.question_id for e in train}.isdisjoint(e.question_id for e in held)
    small = [e for e in examples if e.label == 0][:2] + [e for e in examples if e.label == 1][:1]
    _, held_small = stratified_split(small, 0.1, seed=0)
    assert [e.label for e in held_small] == [0]  # one of a class of two; a class of one stays in training


def test_the_gate_reports_validation_metrics_and_records_its_data(trained_gate, gate_file):
    out, _, summary = trained_gate
    metrics = summary["validation"]
    assert metrics["tp"] + metrics["fp"] + metrics["fn"] + metrics["tn"] == summary["data"]["validation"] == 18
    assert metrics["tp"] + metrics["fn"] == summary["data"]["validation_positive"] == 12
    for key in ("gate_precision", "gate_recall", "gate_f1", "gate_fpr"):
        assert 0.0 <= metrics[key] <= 1.0
    fp, tn = metrics["fp"], metrics["tn"]
    assert metrics["gate_fpr"] == pytest.approx(fp / (fp + tn))
    saved = json.loads((out / "training.json").read_text())
    assert saved["data"]["sha256"] == file_digest(gate_file) and saved["settings"]["backend"] == "encoder"


def test_the_saved_gate_reloads_and_has_learnt_the_training_pairs(trained_gate):
    from sparqlab.methods.ggc.gate import Gate, folder_digest

    out, examples, summary = trained_gate
    gate = Gate.load(out / "gate")
    assert folder_digest(out / "gate") == summary["gate_digest"]
    probabilities = gate.probabilities(examples)
    labels = np.array([e.label for e in examples])
    assert probabilities[labels == 1].mean() > probabilities[labels == 0].mean()


def test_the_gate_flags_are_generated_from_gate_settings_and_the_old_spelling_is_the_same_command():
    from sparqlab.cli import build_parser
    from sparqlab.cli.config_options import config_from_arguments
    from sparqlab.cli.train import handle_gate
    from sparqlab.methods.ggc.gate import GateSettings

    parser = build_parser()
    options = ["--encoder-path", "enc", "--epochs", "2", "--learning-rate", "1e-3", "--batch-size", "4",
               "--max-length", "64", "--seed", "7", "--mask-entities", "yes", "--out", "o"]
    from_train = parser.parse_args(["train", "gate", "--data", "g.jsonl", *options])
    from_ggc = parser.parse_args(["ggc", "train-gate", "--data", "g.jsonl", *options])
    expected = GateSettings("encoder", encoder_path="enc", epochs=2, learning_rate=1e-3, batch_size=4, max_length=64,
                            seed=7, mask_entities=True)
    assert config_from_arguments(GateSettings, from_train) == expected == config_from_arguments(GateSettings, from_ggc)
    assert from_train.handler is handle_gate and from_ggc.handler is not handle_gate  # the alias says it moved
    tfidf = parser.parse_args(["train", "gate", "--backend", "tfidf", "--out", "o"])
    assert config_from_arguments(GateSettings, tfidf) == GateSettings("tfidf")
    with pytest.raises(SystemExit):  # a Literal's choices are checked when the flags are read
        parser.parse_args(["train", "gate", "--backend", "roberta", "--out", "o"])
    with pytest.raises(ValueError, match="offline substitute"):  # the default backend is the paper's encoder
        handle_gate(parser.parse_args(["train", "gate", "--data", "g.jsonl", "--out", "o"]))


@pytest.mark.parametrize("line, message", [
    ('{"question": "q", "sparql": "s", "label": 2}', "0/1 'label'"),
    ('{"question": "q", "label": 1}', "string 'question' and 'sparql'"),
    ("[1, 2]", "string 'question'"),
    ("{oops", "not JSON"),
])
def test_bad_gate_files_are_refused_by_line(tmp_path, line, message):
    path = tmp_path / "g.jsonl"
    path.write_text('{"question": "q", "sparql": "s", "label": 0}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(RecordError, match=f"g.jsonl:2: .*{message}"):
        read_gate_examples(path)
