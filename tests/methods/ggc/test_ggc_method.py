"""The ggc method end to end on the movie KG with the stand-ins: modes, the ≥ threshold at its extremes, a sweep
from one run equal to a run at that threshold, the trained gate's digest in the run config, training in prepare,
and the CLI."""

import json
import subprocess
import sys

import numpy as np
import pytest
from ggc_helpers import TEST_LIMIT, base_config, environment

from sparqlab.core.jsonl import read_jsonl
from sparqlab.eval.errors import CATEGORIES
from sparqlab.methods.ggc import GGC, pipeline_metrics, stage_frame
from sparqlab.runs import run


def records(result):
    return {r["id"]: r for r in read_jsonl(result.run_dir / "predictions.jsonl")}


def corrector_calls(record):
    return sum(record["role_usage"].get("corrector", {}).get("calls", {}).values())


@pytest.fixture(scope="module")
def test_runs(trained, movies, tmp_path_factory):
    gate = str(trained.folder)
    methods = {"none": GGC(mode="none"), "all": GGC(mode="all"),
               "zero": GGC(mode="gated", gate_path=gate, threshold=0.0),
               "half": GGC(mode="gated", gate_path=gate, threshold=0.5),
               "above": GGC(mode="gated", gate_path=gate, threshold=1.01)}
    with environment(SPARQLAB_RUNS=str(tmp_path_factory.mktemp("mode-runs"))):
        config = base_config(dataset="mcqa-movies", split="test", limit=TEST_LIMIT)
        return {name: run(method, config=config, kg=movies) for name, method in methods.items()}


def test_generator_data_run_is_an_ordinary_run(trained):
    folder = trained.data_run
    config = json.loads((folder / "config.json").read_text())
    assert config["method"]["method"] == "ggc" and config["method"]["config"]["mode"] == "none"
    assert json.loads((folder / "metrics.json").read_text())["complete"]
    labels = [r["em"] for r in read_jsonl(folder / "predictions.jsonl")]
    assert trained.gate.training["n"] == len(labels) and trained.gate.training["n_positive"] == labels.count(False)


def test_modes(test_runs):
    none, every = records(test_runs["none"]), records(test_runs["all"])
    assert len(none) == len(every) == TEST_LIMIT
    for record in none.values():
        assert record["predicted_sparql"] == record["extra"]["initial_sparql"]
        assert not record["extra"]["triggered"] and corrector_calls(record) == 0
        assert record["error_type"] in CATEGORIES
    for record in every.values():
        assert record["extra"]["triggered"] and corrector_calls(record) == 1
        assert record["extra"]["initial_sparql"] == none[record["id"]]["predicted_sparql"]
        assert record["extra"]["t_corrector_s"] >= 0 and "gate_prob" not in record["extra"]
    wrong = sum(not r["em"] for r in none.values())
    assert 0 < wrong < TEST_LIMIT / 2  # the stand-in generator makes real mistakes, but not mostly
    fixed = sum(not none[i]["em"] and every[i]["em"] for i in none)
    assert fixed > 0  # the stand-in corrector repairs some of them


def test_threshold_extremes_equal_correct_all_and_generator_only(test_runs, trained):
    none, every = records(test_runs["none"]), records(test_runs["all"])
    zero, above = records(test_runs["zero"]), records(test_runs["above"])
    assert {i: r["predicted_sparql"] for i, r in zero.items()} == {i: r["predicted_sparql"] for i, r in every.items()}
    assert all(r["extra"]["triggered"] and 0 <= r["extra"]["gate_prob"] <= 1 for r in zero.values())
    assert {i: r["predicted_sparql"] for i, r in above.items()} == {i: r["predicted_sparql"] for i, r in none.items()}
    assert not any(r["extra"]["triggered"] or corrector_calls(r) for r in above.values())
    config = json.loads((test_runs["zero"].run_dir / "config.json").read_text())
    assert config["method"]["artifacts"]["gate"] == trained.digest and "conventions" in config["method"]["artifacts"]
    assert test_runs["zero"].run_id != test_runs["above"].run_id


def test_replies_from_the_response_cache_are_left_out_of_the_time(trained, movies, tmp_path):
    """With the response cache on, the three settings share replies: ``correct all`` replays the generator-only
    run's generator replies and ``gated`` also the corrections ``correct all`` made. A replayed reply (~0 s) is
    left out of the time and counted in ``cached_calls``, as a run's ``model_latency_s`` counts it as 0 s; a time
    ratio with such a setting is NaN, not the ratio of a replay."""
    from sparqlab.experiments.ggc import run_modes
    from sparqlab.methods.ggc import compare
    from sparqlab.methods.ggc.metrics import time_ratios

    config = base_config(dataset="mcqa-movies", split="test", limit=4, cache="read_write",
                         cache_path=str(tmp_path / "responses.sqlite"))
    results = run_modes(config, trained.folder, kg=movies, threshold=0.5)
    runs = {setting: records(result) for setting, result in results.items()}
    assert not any("cached_stages" in r["extra"] for r in runs["generator only"].values())
    assert all(r["extra"]["cached_stages"] == ["generator"] for r in runs["correct all"].values())
    triggered = [r for r in runs["gated"].values() if r["extra"]["triggered"]]
    assert triggered and all(r["extra"]["cached_stages"] == ["generator", "corrector"] for r in triggered)

    table = compare({setting: stage_frame(result.run_dir, movies) for setting, result in results.items()})
    assert list(table["cached_calls"]) == [0, 4, 4 + len(triggered)] == [  # the runner's own count
        result.metrics["usage"]["model_calls"]["total"] - result.metrics["model_calls_uncached"]
        for result in results.values()]
    assert table.loc["generator only", "time_s"] == pytest.approx(
        sum(r["extra"]["t_generator_s"] for r in runs["generator only"].values()))
    assert table.loc["correct all", "time_s"] == pytest.approx(
        sum(r["extra"]["t_corrector_s"] for r in runs["correct all"].values()))  # no replayed generator time
    assert table.loc["generator only", "time_vs_first"] == 1.0
    assert table[["time_vs_first"]].iloc[1:].isna().all().all()
    assert all(np.isnan(ratio) for ratio in time_ratios(table).values())


def test_sweep_from_one_run_equals_the_run_at_that_threshold(test_runs, movies):
    frame = stage_frame(test_runs["zero"].run_dir, movies)
    half = records(test_runs["half"])
    chosen = {i for i, p in zip(frame["id"], frame["gate_prob"], strict=True) if p >= 0.5}
    assert chosen == {i for i, r in half.items() if r["extra"]["triggered"]}
    derived = pipeline_metrics(frame, 0.5)
    assert derived["accuracy"] == pytest.approx(sum(r["em"] for r in half.values()) / len(half))
    assert derived["corrector_calls"] == sum(corrector_calls(r) for r in half.values())
    assert pipeline_metrics(frame, 0.0)["accuracy"] == pytest.approx(
        sum(r["em"] for r in records(test_runs["all"]).values()) / TEST_LIMIT)
    assert pipeline_metrics(frame, 1.01)["accuracy"] == pytest.approx(
        sum(r["em"] for r in records(test_runs["none"]).values()) / TEST_LIMIT)
    assert sum(corrector_calls(r) for r in records(test_runs["zero"]).values()) == TEST_LIMIT


def first_gate_questions(n: int) -> list:
    """The first ``n`` questions of mcqa-movies train's gate portion (GGC §4.1 split, seeded draw)."""
    from sparqlab.data import load
    from sparqlab.methods.ggc.split import training_split

    return training_split(load("mcqa-movies", "train")).gate[:n]


def test_gate_trained_in_prepare_is_a_cached_artifact(movies):
    config = base_config(dataset="mcqa-movies", split="test", limit=3)
    method = GGC(mode="gated", gate={"backend": "tfidf"}, train_limit=24)
    first = run(method, config=config, kg=movies)
    saved = json.loads((first.run_dir / "config.json").read_text())
    digest = saved["method"]["artifacts"]["gate"]
    assert len(digest) == 16 and method.gate.training["n"] == 24
    assert json.loads((first.run_dir / "metrics.json").read_text())["prepare"]["artifacts"]["gate"] == digest
    again = run(GGC(mode="gated", gate={"backend": "tfidf"}, train_limit=24), config=config, kg=movies)
    assert again.run_id == first.run_id and again.answered == 0
    with pytest.raises(ValueError, match="another split"):  # scoring questions the gate was trained on
        run(GGC(mode="gated", gate={"backend": "tfidf"}, train_limit=24), first_gate_questions(3),
            config=base_config(dataset="mcqa-movies", split="train"), kg=movies)


def test_prepare_train_data_and_train_gate_read_one_split_and_record_it(movies, tmp_path):
    """GGC §4.1 on every path: `train data --builder ggc-generator` writes the generator's portion of the training
    split, GGC.prepare and `train gate` label questions of the rest (a generator file that holds one of them is
    refused), and the gate's training record names both portions."""
    from ggc_helpers import MEMORY

    from sparqlab.cli import main
    from sparqlab.core.hashing import id_set_record
    from sparqlab.core.jsonl import write_jsonl
    from sparqlab.data import load
    from sparqlab.methods.ggc.split import training_split

    split = training_split(load("mcqa-movies", "train"))
    generator_file = tmp_path / "generator.jsonl"
    assert main(["train", "data", "--builder", "ggc-generator", "--dataset", "mcqa-movies", "--kg", "movies",
                 "--limit", "30", "--out", str(generator_file)]) == 0
    trained_on = [r["id"] for r in read_jsonl(generator_file)]
    assert trained_on == [q.id for q in split.generator[:30]]
    manifest = json.loads(generator_file.with_name("generator.manifest.json").read_text())
    assert manifest["sources"]["question_ids"] == id_set_record(trained_on)
    assert manifest["sources"]["generator_share"] == 0.5

    config = base_config(dataset="mcqa-movies", split="test", limit=2)
    method = GGC(mode="gated", gate={"backend": "tfidf"}, train_limit=24, generator_data=str(generator_file))
    run(method, config=config, kg=movies)
    assert method.example_ids() and method.example_ids().isdisjoint(trained_on)
    assert method.gate.training["data_split"]["generator"] == id_set_record(q.id for q in split.generator)
    assert method.gate.training["data_split"]["gate"] == id_set_record(q.id for q in split.gate[:24])

    overlapping = tmp_path / "overlap.jsonl"
    write_jsonl(overlapping, [{"id": split.gate[0].id, "messages": next(iter(read_jsonl(generator_file)))["messages"]}])
    with pytest.raises(ValueError, match="allow_overlap=true"):
        run(GGC(mode="gated", gate={"backend": "tfidf"}, train_limit=24, generator_data=str(overlapping)),
            config=config, kg=movies)

    assert main(["train", "gate", "--backend", "tfidf", "--limit", "24", "--memory-start", str(MEMORY["start"]),
                 "--memory-stop", str(MEMORY["stop"]), "--experiment", "ggc-split", "-o",
                 f"generator_data={generator_file}", "--out", str(tmp_path / "gate")]) == 0
    summary = json.loads((tmp_path / "gate" / "training.json").read_text())
    assert summary["data_split"] == method.gate.training["data_split"]


def sparqlab(*args):
    return subprocess.run([sys.executable, "-m", "sparqlab", *args], capture_output=True, text=True, timeout=300)


def test_cli_train_gate_and_build_data_from_runs(trained, tmp_path):
    gate = sparqlab("train", "gate", "--backend", "tfidf", "--runs", str(trained.data_run), "--out",
                    str(tmp_path / "gate"))
    assert gate.returncode == 0, gate.stderr
    summary = json.loads((tmp_path / "gate" / "training.json").read_text())
    assert summary["data"]["examples"] == trained.gate.training["n"]  # the same labelled queries, split for validation
    assert summary["settings"] == trained.gate.settings.to_dict() and f"digest: {summary['gate_digest']}" in gate.stdout
    old = sparqlab("ggc", "train-gate", "--backend", "tfidf", "--runs", str(trained.data_run), "--out",
                   str(tmp_path / "old"))
    assert old.returncode == 0 and "moved to `sparqlab train gate`" in old.stderr
    assert json.loads((tmp_path / "old" / "training.json").read_text())["gate_digest"] == summary["gate_digest"]
    built = sparqlab("ggc", "build-data", "--runs", str(trained.data_run), "--out", str(tmp_path / "sft"),
                     "--compositions", "W1.0,W1.0+C0.5")
    assert built.returncode == 0, built.stderr
    assert "moved to `sparqlab train data --builder ggc-corrector`" in built.stderr
    same = sparqlab("train", "data", "--builder", "ggc-corrector", "--kg", "movies", "--runs", str(trained.data_run),
                    "--out", str(tmp_path / "sft2"), "--compositions", "W1.0,W1.0+C0.5")
    assert same.returncode == 0, same.stderr
    for name in ("W1.0", "W1.0+C0.5"):
        assert (tmp_path / "sft" / f"{name}.jsonl").read_bytes() == (tmp_path / "sft2" / f"{name}.jsonl").read_bytes()
    manifest = json.loads((tmp_path / "sft" / "manifest.json").read_text())
    wrong = trained.gate.training["n_positive"]
    assert manifest["sizes"]["W1.0"] == {"total": wrong, "wrong": wrong, "correct": 0}
    assert manifest["sizes"]["W1.0+C0.5"]["correct"] == wrong
    bad = sparqlab("ggc", "build-data", "--runs", str(tmp_path), "--out", str(tmp_path / "x"))
    assert bad.returncode == 1 and "not a run folder" in bad.stderr


def test_cli_sweep_in_process(trained, capsys, tmp_path):
    from ggc_helpers import MEMORY

    from sparqlab.cli import main

    code = main(["ggc", "sweep", "--gate-path", str(trained.folder), "--limit", "6", "--thresholds", "0,0.5,1.01",
                 "--model-roles", "corrector=standin-corrector", "--memory-start", str(MEMORY["start"]), "--memory-stop",
                 str(MEMORY["stop"]), "--experiment", "ggc-cli", "--out", str(tmp_path / "sweep.csv")])
    assert code == 0
    import pandas as pd

    table = pd.read_csv(tmp_path / "sweep.csv")
    assert list(table["threshold"]) == [0.0, 0.5, 1.01]
    assert list(table["gate_trigger_rate"])[0] == 1.0 and list(table["gate_trigger_rate"])[-1] == 0.0
    assert list(table["corrector_calls"]) == sorted(table["corrector_calls"], reverse=True)
    assert "run:" in capsys.readouterr().out


def test_scoring_the_gate_training_questions_is_refused(trained, movies):
    config = base_config(dataset="mcqa-movies", split="train")
    with pytest.raises(ValueError, match="training examples"):
        run(GGC(mode="gated", gate_path=str(trained.folder)), first_gate_questions(3), config=config, kg=movies)
