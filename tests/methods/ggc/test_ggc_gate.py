"""Gates: the ≥ threshold rule, input normalisation, training on labelled pairs, and a saved gate reloading with the
same probabilities and a content digest (tfidf, sbert, and the encoder backend on a tiny random encoder)."""

import json

import numpy as np
import pytest

from sparqlab.methods.ggc.feedback import KGFeedback
from sparqlab.methods.ggc.gate import Gate, GateExample, GateSettings, decide, folder_digest, gate_inputs

RIGHT = 'SELECT ?uri WHERE {{ ?uri ?r ?e . ?r rdfs:label "{rel}" . ?e rdfs:label "{ent}" . }}'


def examples(n=24):
    """Director questions answered with directed_by are right; with written_by wrong (and return nothing)."""
    out = []
    for i in range(n):
        name = f"Person {i}"
        wrong = i % 3 == 0
        rel = "written_by" if wrong else "directed_by"
        out.append(GateExample(f"which films did [{name}] direct?", RIGHT.format(rel=rel, ent=name), int(wrong),
                               KGFeedback(None, 0 if wrong else 3), f"q{i}"))
    return out


def test_threshold_is_inclusive():
    assert decide(0.5, 0.5) and not decide(0.4999, 0.5)
    assert decide(0.0, 0.0)
    assert not decide(1.0, 1.0000001)


def test_inputs_number_entities_and_drop_prefixes():
    question, query = gate_inputs("films of [Ridley Scott] tagged [drama]", mask_entities=True, sparql=
                                  'PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\nSELECT ?u WHERE {\n'
                                  '  ?a rdfs:label "drama" . ?b rdfs:label "Ridley Scott" . ?r rdfs:label "has_tags" }')
    assert question == "films of [E1] tagged [E2]"
    assert query == 'SELECT ?u WHERE { ?a rdfs:label "E2" . ?b rdfs:label "E1" . ?r rdfs:label "has_tags" }'


@pytest.mark.parametrize("backend, feedback", [("tfidf", False), ("tfidf", True), ("sbert", False)])
def test_trained_gate_separates_and_reloads_identically(tmp_path, backend, feedback):
    data = examples()
    gate = Gate.train(data, GateSettings(backend, c=10.0), kg_feedback=feedback)
    probabilities = gate.probabilities(data)
    labels = np.array([e.label for e in data])
    assert probabilities[labels == 1].min() > probabilities[labels == 0].max()
    digest = gate.save(tmp_path / "gate")
    again = Gate.load(tmp_path / "gate")
    assert np.allclose(again.probabilities(data), probabilities, atol=1e-12)
    assert folder_digest(tmp_path / "gate") == digest
    assert again.training["n"] == len(data) and again.training["n_positive"] == int(labels.sum())
    assert again.training["question_ids"] == sorted(e.question_id for e in data)
    (tmp_path / "gate" / ".complete").write_text("ok")  # an artifact marker does not change the identity
    assert folder_digest(tmp_path / "gate") == digest
    document = json.loads((tmp_path / "gate" / "gate.json").read_text())
    document["settings"]["c"] = 1.0
    (tmp_path / "gate" / "gate.json").write_text(json.dumps(document))
    assert folder_digest(tmp_path / "gate") != digest


def test_feedback_gate_needs_feedback_and_training_needs_both_classes():
    data = examples()
    gate = Gate.train(data, GateSettings("tfidf"), kg_feedback=True)
    with pytest.raises(ValueError, match="feedback"):
        gate.probability(GateExample("which films did [A] direct?", RIGHT.format(rel="directed_by", ent="A")))
    with pytest.raises(ValueError, match="both classes"):
        Gate.train([e for e in data if e.label == 0], GateSettings("tfidf"))
    with pytest.raises(ValueError, match="encoder_path"):
        Gate.train(data, GateSettings("encoder"))
    with pytest.raises(ValueError, match="unknown gate backend"):
        GateSettings("roberta")
    with pytest.raises(FileNotFoundError, match="no trained gate"):
        Gate.load("/nonexistent/gate")


@pytest.fixture
def tiny_encoder(tmp_path):
    """A randomly initialised two-layer BERT with a word-level vocabulary, built from a config (no download)."""
    from tokenizers.pre_tokenizers import BertPreTokenizer
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    texts = [t for e in examples() for t in (*gate_inputs(e.question, e.sparql), e.feedback.describe())]
    words = sorted({w for text in texts for w, _ in BertPreTokenizer().pre_tokenize_str(text.lower())})
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    tokenizer = BertTokenizerFast(vocab={token: i for i, token in enumerate(tokens)})
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=128,
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    folder = tmp_path / "tiny-encoder"
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_encoder_gate_fine_tunes_saves_and_reloads(tmp_path, tiny_encoder):
    data = examples()
    settings = GateSettings("encoder", encoder_path=str(tiny_encoder), epochs=25, learning_rate=5e-3,
                            batch_size=8, max_length=64)
    gate = Gate.train(data, settings, kg_feedback=True)
    probabilities = gate.probabilities(data)
    labels = np.array([e.label for e in data])
    assert probabilities[labels == 1].mean() > probabilities[labels == 0].mean() + 0.2
    digest = gate.save(tmp_path / "encoder-gate")
    assert (tmp_path / "encoder-gate" / "encoder" / "model.safetensors").is_file()
    again = Gate.load(tmp_path / "encoder-gate")
    assert np.allclose(again.probabilities(data), probabilities, atol=1e-6)
    assert folder_digest(tmp_path / "encoder-gate") == digest


def feedback_only_examples(n=24):
    """Positives and negatives with the same question and query text: only the KG feedback (an empty result for
    the wrong ones, three rows for the right ones) tells them apart."""
    question, query = "which films did [Person] direct?", RIGHT.format(rel="directed_by", ent="Person")
    return [GateExample(question, query, int(i % 2 == 0), KGFeedback(None, 0 if i % 2 == 0 else 3), f"f{i}")
            for i in range(n)]


@pytest.mark.parametrize("backend", ["tfidf", "sbert"])
def test_the_feedback_features_alone_separate_the_classes(backend):
    """Table 5b's gate "with KG feedback" reads the feedback: with the text identical, the feedback features are
    all it has (caught: the feedback feature matrix zeroed)."""
    data = feedback_only_examples()
    gate = Gate.train(data, GateSettings(backend, c=10.0), kg_feedback=True)
    probabilities = gate.probabilities(data)
    labels = np.array([e.label for e in data])
    assert probabilities[labels == 1].min() > probabilities[labels == 0].max()
    right = next(e for e in data if e.label == 0)
    emptied = GateExample(right.question, right.sparql, feedback=KGFeedback(None, 0))
    assert gate.probability(emptied) > gate.probability(right) + 0.2


def test_the_encoder_gate_reads_the_feedback_too(tiny_encoder):
    data = feedback_only_examples()
    settings = GateSettings("encoder", encoder_path=str(tiny_encoder), epochs=25, learning_rate=5e-3,
                            batch_size=8, max_length=64)
    gate = Gate.train(data, settings, kg_feedback=True)
    right = next(e for e in data if e.label == 0)
    emptied = GateExample(right.question, right.sparql, feedback=KGFeedback(None, 0))
    assert gate.probability(emptied) > gate.probability(right) + 0.1
