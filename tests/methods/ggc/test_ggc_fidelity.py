"""GGC defaults that follow the paper (docs/fidelity.md, section "GGC"): the gate reads the
raw [q; s(0)] with unweighted training and is the fine-tuned encoder by default; masking and class weights are
options."""

import numpy as np
import pytest

from sparqlab.methods.ggc.gate import Gate, GateExample, GateSettings, gate_inputs
from sparqlab.methods.ggc.method import GGCConfig

QUERY = ('PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n'
         'SELECT ?uri WHERE {{ ?uri ?r ?e . ?r rdfs:label "{rel}" . ?e rdfs:label "{ent}" . }}')


def imbalanced(n=40, positives=4):
    """``positives`` wrong queries (label 1), all using written_by; as many correct ones use written_by too, the
    rest directed_by: written_by is only weak evidence (P(wrong | written_by) = 1/2)."""
    out = []
    for i in range(n):
        rel = "written_by" if i < 2 * positives else "directed_by"
        out.append(GateExample(f"which films did [Person {i}] make?", QUERY.format(rel=rel, ent=f"Person {i}"),
                               int(i < positives), question_id=f"q{i}"))
    return out


def test_paper_gate_is_the_default_encoder_on_raw_unweighted_input():
    """Item 11: §4.1 / A.1 (RoBERTa fine-tuned), §3.4 x_gate = [q; s(0)], no reweighting."""
    settings = GateSettings(encoder_path="/models/roberta-base")
    assert (settings.backend, settings.mask_entities, settings.class_weights) == ("encoder", False, "none")
    config = GGCConfig()
    assert (config.gate.backend, config.gate.mask_entities, config.gate.class_weights) == ("encoder", False, "none")
    with pytest.raises(ValueError, match="offline substitute"):
        config.gate.check_trainable()  # no encoder folder given: a clear error that names the offline gates


def test_gate_reads_the_raw_pair_unless_masking_is_asked_for():
    example = imbalanced()[0]
    assert gate_inputs(example.question, example.sparql) == (example.question, example.sparql)
    raw = Gate.train(imbalanced(), GateSettings("tfidf"))
    assert {"person", "prefix", "rdf"} <= set(raw.state["vocabulary"])  # names and PREFIX lines are seen
    masked = Gate.train(imbalanced(), GateSettings("tfidf", mask_entities=True))
    vocabulary = set(masked.state["vocabulary"])
    assert "e1" in vocabulary and "person" not in vocabulary and "prefix" not in vocabulary


def test_class_weights_are_an_option_that_raises_the_trigger_rate():
    """Unweighted (paper): the weak written_by evidence stays below τ = 0.5; balanced weights push it over."""
    data = imbalanced()
    plain = Gate.train(data, GateSettings("tfidf", c=10.0)).probabilities(data)
    balanced = Gate.train(data, GateSettings("tfidf", c=10.0, class_weights="balanced")).probabilities(data)
    assert (plain >= 0.5).mean() == 0.0
    assert (balanced >= 0.5).mean() == pytest.approx(0.2)
    with pytest.raises(ValueError, match="class_weights"):
        GateSettings("tfidf", class_weights="inverse")


def test_encoder_gate_trains_with_unweighted_cross_entropy(tmp_path, monkeypatch):
    import torch

    from sparqlab.train.tiny import build_tiny_encoder

    data = imbalanced(12, 3)
    folder = build_tiny_encoder(tmp_path / "enc", [t for e in data for t in (e.question, e.sparql)], vocab_size=300,
                                hidden_size=16, heads=2, max_positions=128)
    seen = []
    original = torch.nn.functional.cross_entropy

    def spy(*args, **kwargs):
        seen.append(kwargs.get("weight"))
        return original(*args, **kwargs)

    monkeypatch.setattr(torch.nn.functional, "cross_entropy", spy)
    settings = dict(encoder_path=str(folder), epochs=1, batch_size=4, max_length=96)
    Gate.train(data, GateSettings("encoder", **settings))
    assert seen and all(weight is None for weight in seen)
    seen.clear()
    Gate.train(data, GateSettings("encoder", class_weights="balanced", **settings))
    assert np.allclose(seen[0].numpy(), [12 / 18, 12 / 6])


def test_format_1_gates_load_with_the_behaviour_they_were_trained_with(tmp_path):
    import json

    gate = Gate.train(imbalanced(), GateSettings("tfidf", mask_entities=True, class_weights="balanced"))
    gate.save(tmp_path / "gate")
    document = json.loads((tmp_path / "gate" / "gate.json").read_text())
    document["format"] = 1
    for key in ("mask_entities", "class_weights"):
        del document["settings"][key]
    (tmp_path / "gate" / "gate.json").write_text(json.dumps(document))
    loaded = Gate.load(tmp_path / "gate")
    assert loaded.settings == gate.settings
    assert np.allclose(loaded.probabilities(imbalanced()), gate.probabilities(imbalanced()))


# -- items 12, 13, 15: runs on the movie KG with the stand-ins -----------------------------------------------------

@pytest.fixture(scope="module")
def gated_run(trained, movies, tmp_path_factory):
    from ggc_helpers import TEST_LIMIT, base_config, environment

    from sparqlab.methods.ggc import GGC
    from sparqlab.runs import run

    with environment(SPARQLAB_RUNS=str(tmp_path_factory.mktemp("fidelity-runs"))):
        config = base_config(dataset="mcqa-movies", split="test", limit=TEST_LIMIT)
        return run(GGC(mode="gated", gate_path=str(trained.folder), threshold=0.5), config=config, kg=movies)


def test_gated_run_metrics_carry_the_gate_metrics_at_its_threshold(gated_run, movies):
    """Item 12: §4.1's gate metrics in metrics.json, equal to the sweep's arithmetic at the run's τ."""
    import json

    from sparqlab.methods.ggc import pipeline_metrics, stage_frame

    scores = json.loads((gated_run.run_dir / "metrics.json").read_text())["method_scores"]
    expected = pipeline_metrics(stage_frame(gated_run.run_dir, movies), 0.5)
    for key in ("gate_accuracy", "gate_precision", "gate_recall", "gate_f1", "gate_fpr", "gate_trigger_rate"):
        assert scores[key] == pytest.approx(expected[key], abs=1e-6), key
    assert 0 < scores["gate_label"] < 1  # the stand-in generator makes some mistakes


def test_gold_errors_count_as_generator_errors_by_default(gated_run, movies, tmp_path):
    """Item 13: Table 3 counts ground-truth SPARQL errors among the generator's errors; excluding them is an
    option, and the subset analysis says which was used."""
    import shutil

    from sparqlab.core.jsonl import read_jsonl, write_jsonl
    from sparqlab.methods.ggc import pipeline_metrics, stage_frame, subset_analysis

    folder = tmp_path / "run"
    shutil.copytree(gated_run.run_dir, folder)
    records = list(read_jsonl(folder / "predictions.jsonl"))
    victim = next(r for r in records if r["em"] and not r["extra"]["triggered"])  # s(0) right, gold now broken
    victim.update(gold_answers=None, gold_source="error: execution: the gold query failed")
    write_jsonl(folder / "predictions.jsonl", records)
    counted, excluded = stage_frame(folder, movies), stage_frame(folder, movies, gold_errors="exclude")
    assert len(counted) == len(records) and len(excluded) == len(records) - 1
    row = counted.set_index("id").loc[victim["id"]]
    assert row["gold_error"] and not row["initial_correct"] and not row["corrected_correct"]
    right = sum(bool(r["em"]) for r in records if r is not victim)
    assert pipeline_metrics(counted)["accuracy"] == pytest.approx(right / len(records))
    assert pipeline_metrics(excluded)["accuracy"] == pytest.approx(right / (len(records) - 1))
    table = subset_analysis(counted)
    assert table.attrs["gold_errors"] == "count" and table.loc["originally wrong", "gold_errors"] == 1
    assert subset_analysis(excluded).attrs["gold_errors"] == "exclude"
    with pytest.raises(ValueError, match="gold_errors"):
        stage_frame(folder, movies, gold_errors="drop")


def test_correct_all_corrects_an_unparseable_initial_query(movies):
    """Item 15: Algorithm 1 / "Gen. + Corr." correct every s(0); standin-echo's reply (the question) holds no
    query, and the stand-in corrector still turns it into one."""
    from ggc_helpers import base_config

    from sparqlab.core.jsonl import read_jsonl
    from sparqlab.methods.ggc import GGC
    from sparqlab.runs import run

    config = base_config(dataset="mcqa-movies", split="test", limit=4, model="standin-echo", model_options={})
    records = list(read_jsonl(run(GGC(mode="all"), config=config, kg=movies).run_dir / "predictions.jsonl"))
    assert all(r["extra"]["initial_sparql"] is None and r["extra"]["triggered"] for r in records)
    assert all(sum(r["role_usage"]["corrector"]["calls"].values()) == 1 for r in records)
    assert any(r["predicted_sparql"] for r in records)  # the corrector wrote queries from nothing readable
    skipped = run(GGC(mode="all", skip_unparseable=True), config=config, kg=movies)
    records = list(read_jsonl(skipped.run_dir / "predictions.jsonl"))
    assert all(not r["extra"]["triggered"] and r["predicted_sparql"] is None for r in records)
    assert all("corrector" not in (r["role_usage"] or {}) for r in records)


def test_composition_readings_of_section_4_3():
    """Item 16: "correct samples whose sizes correspond to x of all training samples" — default: x of the
    composed set (C0.8 = 4 |W|); the other reading, x times |W|, is the ``wrong`` basis."""
    from sparqlab.methods.ggc.data import LabelledQuery, compose, correct_count

    assert [correct_count(10, x) for x in (0.0, 0.2, 0.5, 0.8)] == [0, 2, 10, 40]  # round(2.5) = 2
    assert [correct_count(10, x, "wrong") for x in (0.0, 0.2, 0.5, 0.8)] == [0, 2, 5, 8]
    with pytest.raises(ValueError, match="basis"):
        correct_count(10, 0.2, "total")
    queries = [LabelledQuery(f"q{i}", "q", "s", i >= 10, "gold") for i in range(60)]  # 10 wrong, 50 correct
    composed = compose(queries)
    assert len(composed["W1.0+C0.8"]) == 50 and sum(q.correct for q in composed["W1.0+C0.8"]) / 50 == 0.8
    ratio = compose(queries, basis="wrong")
    assert {name: len(members) for name, members in ratio.items()} == {
        "W1.0": 10, "W1.0+C0.2": 12, "W1.0+C0.5": 15, "W1.0+C0.8": 18}
    assert set(map(id, ratio["W1.0+C0.2"])) <= set(map(id, ratio["W1.0+C0.8"]))  # nested, like the default


def test_gate_and_corrector_data_must_not_overlap_the_generator_data(trained, movies, tmp_path, capsys):
    """Item 14: §4.1 trains the generator on one portion of the training split and labels the rest; the data
    builders refuse labelled questions that the generator was trained on."""
    from sparqlab.core.jsonl import write_jsonl
    from sparqlab.data.registry import load
    from sparqlab.methods.ggc.split import training_split
    from sparqlab.methods.ggc.training_data import build_corrector_data, build_gate_data, generator_records

    def ggc_generator_records(questions, kg):
        return generator_records(questions, kg)[0]

    portions = training_split(load("mcqa-movies", "train"))
    overlapping, disjoint = tmp_path / "overlap.jsonl", tmp_path / "disjoint.jsonl"
    write_jsonl(overlapping, ggc_generator_records(portions.gate[:3], movies))  # among the labelled gate questions
    write_jsonl(disjoint, ggc_generator_records(portions.generator[:3], movies))
    with pytest.raises(ValueError, match="3 labelled questions .* generator's training data"):
        build_gate_data([trained.data_run], tmp_path / "gate.jsonl", movies, generator_data=overlapping)
    with pytest.raises(ValueError, match="remaining training questions"):
        build_corrector_data([trained.data_run], tmp_path / "sft", movies, generator_data=overlapping)
    manifest = build_gate_data([trained.data_run], tmp_path / "gate.jsonl", movies, generator_data=disjoint)
    assert manifest["records"] == trained.gate.training["n"]
    from sparqlab.cli import main

    command = ["train", "data", "--builder", "ggc-gate", "--runs", str(trained.data_run), "--kg", "movies",
               "--out", str(tmp_path / "cli.jsonl")]
    assert main([*command, "--generator-data", str(overlapping)]) == 1
    assert "generator's training data" in capsys.readouterr().err
    assert main(command) == 0
    assert "not checked against the generator's training data" in capsys.readouterr().err
