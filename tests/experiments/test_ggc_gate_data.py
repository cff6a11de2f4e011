"""A GGC gate-data run where no question got an answer stops with the error the questions stopped with (not
with "all N training examples are wrong"), and the stand-in generator remembers the gate split's own generator
portion."""

import json

import pytest

from sparqlab.experiments.ggc import every_question_failed, with_standin_memory
from sparqlab.runs import RunConfig


def write_run(folder, traces):
    folder.mkdir()
    (folder / "manifest.json").write_text("{}")
    (folder / "traces.jsonl").write_text("".join(json.dumps({"id": qid, "trace": events}) + "\n"
                                                 for qid, events in traces.items()))
    return folder


def test_the_error_every_question_stopped_with_is_the_cause(tmp_path):
    failed = {"kind": "method_error", "data": {"error": "ValueError", "message": "standin-knn has no questions to "
                                                                                  "remember"}}
    answered = {"kind": "final_query", "data": {"sparql": "ASK {}"}}
    all_failed = write_run(tmp_path / "a", {"q1": [failed], "q2": [failed]})
    assert every_question_failed(all_failed) == "standin-knn has no questions to remember"
    one_answered = write_run(tmp_path / "b", {"q1": [failed], "q2": [answered]})
    assert every_question_failed(one_answered) is None


def test_the_stand_in_generator_remembers_the_gate_split_s_generator_portion():
    memory = {"dataset": "music", "split": "train", "generator_share": 0.5, "split_seed": 3}
    config = with_standin_memory(RunConfig(model="standin-knn"), memory)
    assert config.model_options == memory
    given = RunConfig(model="standin-knn", model_options={"dataset": "other", "start": 5})
    assert with_standin_memory(given, memory) == given, "a memory the run names is kept"
    assert with_standin_memory(RunConfig(model="gpt-x"), memory).model_options == {}


def test_a_threshold_outside_the_sweep_is_refused_naming_both_parameters():
    import pandas as pd

    from sparqlab.experiments.ggc import sweep_row

    table = pd.DataFrame({"threshold": [0.05, 0.5], "accuracy": [0.9, 0.8]})
    assert sweep_row(table, 0.5)["accuracy"] == 0.8
    with pytest.raises(ValueError, match=r"threshold=0.09 is not one of the sweep's thresholds \[0.05, 0.5\]"):
        sweep_row(table, 0.09)
