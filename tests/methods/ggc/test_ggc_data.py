"""Training data: labelled initial queries from run folders, corrector compositions and their SFT files, and the
evaluation arithmetic (gate metrics, τ selection, subset analysis) on constructed records."""

import json

import numpy as np
import pandas as pd
import pytest

from sparqlab.core.jsonl import write_jsonl
from sparqlab.data.question import Question
from sparqlab.graphs.profiles import MOVIES
from sparqlab.methods.ggc.data import (
    COMPOSITIONS,
    LabelledQuery,
    compose,
    correct_count,
    labelled_queries,
    sft_record,
)
from sparqlab.methods.ggc.metrics import gate_metrics, pipeline_metrics, subset_analysis, sweep, triggers
from sparqlab.methods.ggc.prompts import PromptAdditions, conventions_for


def labelled(n_wrong, n_correct):
    return [LabelledQuery(f"w{i}", f"question [W{i}]?", f"SELECT ?w{i} WHERE {{}}", False, f"SELECT ?gold{i} {{}}")
            for i in range(n_wrong)] + \
           [LabelledQuery(f"c{i}", f"question [C{i}]?", f"SELECT ?c{i} WHERE {{}}", True, f"SELECT ?c{i} {{}}")
            for i in range(n_correct)]


def test_composition_sizes_follow_the_correct_share():
    assert [correct_count(40, COMPOSITIONS[name]) for name in COMPOSITIONS] == [0, 10, 40, 160]
    sets = compose(labelled(40, 200), seed=3)
    assert {name: len(members) for name, members in sets.items()} == \
        {"W1.0": 40, "W1.0+C0.2": 50, "W1.0+C0.5": 80, "W1.0+C0.8": 200}
    for name, share in COMPOSITIONS.items():
        members = sets[name]
        assert sum(not q.correct for q in members) == 40
        assert sum(q.correct for q in members) / len(members) == pytest.approx(share, abs=0.01)
    small, large = ({q.question_id for q in sets[n]} for n in ("W1.0+C0.2", "W1.0+C0.8"))
    assert small < large  # nested: a larger share adds to the smaller one's correct samples
    assert [q.question_id for q in compose(labelled(40, 200), seed=3)["W1.0+C0.5"]] == \
        [q.question_id for q in sets["W1.0+C0.5"]]
    assert [q.question_id for q in compose(labelled(40, 200), seed=4)["W1.0+C0.5"]] != \
        [q.question_id for q in sets["W1.0+C0.5"]]


def test_composition_errors_are_clear():
    with pytest.raises(ValueError, match="needs 160 correct samples but only 100"):
        compose(labelled(40, 100))
    with pytest.raises(ValueError, match="no wrong initial queries"):
        compose(labelled(0, 10))
    with pytest.raises(ValueError, match="share"):
        correct_count(10, 1.0)


def test_sft_record_is_the_corrector_prompt_with_the_gold_response():
    query = labelled(1, 0)[0]
    record = sft_record(query, "movies", "relation labels: directed_by", conventions_for(MOVIES))
    assert record["output"] == query.gold_sparql and record["input"] == "" and record["source"] == "wrong"
    assert "Question: question [W0]?" in record["instruction"] and query.sparql in record["instruction"]
    assert [m["role"] for m in record["messages"]] == ["system", "user", "assistant"]
    assert record["messages"][2]["content"] == record["output"], "the Alpaca output is the chat target"


def test_the_paper_s_prompts_by_default_and_each_addition_is_an_option():
    """Appendix B's prompts: the KG and its prefixes, "only the final query"; the KG's own rules, its schema
    listing and a required fence are options, and a fenced prompt fences both training targets alike."""
    query, notes, conventions = labelled(1, 0)[0], "relation labels: directed_by", conventions_for(MOVIES)
    paper = sft_record(query, "movies", notes, conventions, prefixes="PREFIX mrel: <http://x/>")
    assert notes not in paper["system"] and conventions.query_rules not in paper["system"]
    assert "```" not in paper["system"] and "PREFIX mrel: <http://x/>" in paper["system"]
    assert "final SPARQL query only" in paper["system"]
    assert sft_record(query, "movies", notes, conventions, additions=PromptAdditions(schema_listing=True))[
        "system"].count(notes) == 1
    assert conventions.query_rules in sft_record(query, "movies", notes, conventions,
                                                 additions=PromptAdditions(kg_rules=True))["system"]
    fenced = sft_record(query, "movies", notes, conventions, additions=PromptAdditions(reply_fence=True))
    assert "```sparql fenced block" in fenced["system"]
    assert fenced["output"] == fenced["messages"][2]["content"] == f"```sparql\n{query.gold_sparql.strip()}\n```"


def test_labelled_queries_skip_gold_errors_and_corrected_questions(tmp_path):
    gold = ["a", "b"]
    base = {"gold_sparql": "SELECT ?x {}", "gold_answers": gold, "gold_source": "given", "error_category": None}
    write_jsonl(tmp_path / "predictions.jsonl", [
        {**base, "id": "1", "question": "q1", "predicted_sparql": "S1", "predicted_answers": gold, "em": True},
        {**base, "id": "2", "question": "q2", "predicted_sparql": "S2", "predicted_answers": ["a"], "em": False},
        {**base, "id": "3", "question": "q3", "predicted_sparql": None, "predicted_answers": None, "em": False},
        {**base, "id": "4", "question": "q4", "predicted_sparql": "S4", "predicted_answers": gold, "em": True,
         "extra": {"triggered": True}},
        {**base, "id": "5", "question": "q5", "predicted_sparql": "S5", "predicted_answers": ["a"], "em": False,
         "gold_answers": None, "gold_source": "error: syntax_error: broken"},
    ])
    found = labelled_queries([tmp_path])
    assert [(q.question_id, q.sparql, q.correct) for q in found] == [("1", "S1", True), ("2", "S2", False),
                                                                     ("3", "", False)]
    assert [q.gate_example().label for q in found] == [0, 1, 1]
    # Table 4 on the pipeline's question set: the gold error is kept and needs correction
    evaluated = labelled_queries([tmp_path], gold_errors=True)
    assert [(q.question_id, q.gate_example().label) for q in evaluated] == [("1", 0), ("2", 1), ("3", 1), ("5", 1)]
    with pytest.raises(ValueError, match="needs the KG"):
        labelled_queries([tmp_path], kg_feedback=True)
    with pytest.raises(FileNotFoundError, match="not a run folder"):
        labelled_queries([tmp_path / "missing"])


def stage_rows():
    """Six questions: p, initial correct?, corrected correct?; gold sizes 2; times 1 s per stage."""
    spec = [(0.9, False, True), (0.8, False, False), (0.6, True, True), (0.55, True, False), (0.2, False, True),
            (0.1, True, True)]
    rows = []
    for i, (p, initial, corrected) in enumerate(spec):
        rows.append({"id": str(i), "gate_prob": p, "corrected": True, "initial_hits": 2 * initial,
                     "initial_size": 2, "initial_correct": initial, "corrected_hits": 2 * corrected,
                     "corrected_size": 2, "corrected_correct": corrected, "gold_size": 2,
                     "t_generator_s": 1.0, "t_feedback_s": 0.0, "t_gate_s": 0.1, "t_corrector_s": 2.0,
                     "model_calls": 2})
    return pd.DataFrame(rows)


def test_gate_metrics_positive_class_is_correction_required():
    metrics = gate_metrics([1, 1, 0, 0, 1, 0], [True, True, True, False, False, False])
    assert (metrics["tp"], metrics["fp"], metrics["fn"], metrics["tn"]) == (2, 1, 1, 2)
    assert metrics["gate_precision"] == pytest.approx(2 / 3) and metrics["gate_recall"] == pytest.approx(2 / 3)
    assert metrics["gate_fpr"] == pytest.approx(1 / 3) and metrics["gate_trigger_rate"] == 0.5
    assert metrics["gate_accuracy"] == pytest.approx(4 / 6)


def test_thresholds_select_from_one_run_and_subsets():
    frame = stage_rows()
    assert triggers(frame, 0.0).all() and not triggers(frame, 1.01).any()
    assert list(triggers(frame, 0.55)) == [True, True, True, True, False, False]
    table = sweep(frame, [0.0, 0.55, 0.7, 1.01])
    assert list(table["accuracy"]) == pytest.approx([4 / 6, 3 / 6, 4 / 6, 3 / 6])
    assert list(table["corrector_calls"]) == [6, 4, 2, 0]
    assert list(table["time_s"]) == pytest.approx([6.6 + 12, 6.6 + 8, 6.6 + 4, 6.6])
    at = pipeline_metrics(frame, 0.55)
    assert at["gate_recall"] == pytest.approx(2 / 3) and at["gate_fpr"] == pytest.approx(2 / 3)
    subsets = subset_analysis(frame, 0.55)
    assert subsets.loc["correction required (triggered)", "n"] == 4
    assert subsets.loc["correction required (triggered)", "accuracy"] == 0.5
    assert subsets.loc["originally wrong", "fixed"] == 1 and subsets.loc["originally wrong", "accuracy"] == 1 / 3
    assert subsets.loc["originally correct", "broken"] == 1
    assert subsets.loc["originally correct", "accuracy"] == pytest.approx(2 / 3)
    uncorrected = frame.assign(corrected=[True, False, True, True, False, False])
    with pytest.raises(ValueError, match="did not correct"):
        triggers(uncorrected, 0.55)
    assert np.array_equal(triggers(uncorrected, None), uncorrected["corrected"].to_numpy())


def test_a_record_from_before_cached_stages_were_named_takes_the_runners_count(tmp_path):
    """A GGC record written before ``extra.cached_stages``: its model stages count as cached when the runner
    counted fewer uncached calls than calls, so an old replayed run's time leaves the replays out too."""
    from sparqlab.methods.ggc.metrics import stage_frame

    def record(i, **counts):
        return {"id": str(i), "gold_answers": ["a"], "gold_source": "gold_query", "predicted_answers": ["a"],
                "extra": {"initial_sparql": "S", "triggered": False, "t_generator_s": 0.5}, **counts}

    write_jsonl(tmp_path / "predictions.jsonl", [
        record(0, model_calls={"generate": 1}, model_calls_uncached=0),
        record(1, model_calls={"generate": 1}, model_calls_uncached=1),
        record(2, model_calls={"generate": 1}),  # from before the runner counted uncached calls
    ])
    frame = stage_frame(tmp_path, kg=None)
    assert frame["t_generator_s"].isna().tolist() == [True, False, False]
    assert pipeline_metrics(frame)["cached_calls"] == 1 and pipeline_metrics(frame)["time_s"] == pytest.approx(1.0)


def test_sft_file_layout(tmp_path):
    from sparqlab.methods.ggc.data import write_corrector_data

    class Graph:  # a KG stand-in exposing what the SFT writer reads
        identity = "test"
        profile = MOVIES

    manifest = write_corrector_data(labelled(4, 20), tmp_path, Graph(), seed=1, notes="Relations by label.")
    assert manifest["sizes"]["W1.0+C0.8"] == {"total": 20, "wrong": 4, "correct": 16}
    info = json.loads((tmp_path / "dataset_info.json").read_text())
    assert info["ggc_corrector_W1.0+C0.2"]["file_name"] == "W1.0+C0.2.jsonl"
    lines = (tmp_path / "W1.0+C0.2.jsonl").read_text().splitlines()
    assert len(lines) == 5 and all(json.loads(line)["output"].startswith("SELECT") for line in lines)


def test_by_default_the_gate_questions_and_the_generator_questions_are_disjoint():
    """GGC §4.1: the generator is fine-tuned on one portion of the training split and the gate is labelled on the
    remaining questions; the generator's portion (what the stand-ins remember) is a seeded draw of its share, so a
    file sorted by kind of question gives both portions every kind."""
    from sparqlab.methods.ggc.split import gate_questions, generator_size, training_split

    questions = [Question(f"{kind}{i}", f"q{i}?") for kind in "ab" for i in range(5)]  # sorted: five a, five b
    split = training_split(questions)
    gate, generator = [q.id for q in split.gate], [q.id for q in split.generator]
    assert len(gate) == len(generator) == 5 and not set(gate) & set(generator)
    assert {i[0] for i in gate} == {i[0] for i in generator} == {"a", "b"}, "both portions hold both kinds"
    assert gate == sorted(gate) and generator == sorted(generator), "each portion keeps the file's order"
    assert [q.id for q in training_split(questions).generator] == generator, "the draw is seeded"
    other = [q.id for q in training_split(questions, seed=1).generator]
    assert other != generator and len(other) == 5
    assert split.record()["seed"] == 0 and training_split(questions, seed=1).record()["seed"] == 1
    chosen, _ = gate_questions(questions, 3)
    assert [q.id for q in chosen] == gate[:3]
    assert len(training_split(questions, 0.3).generator) == 3 == generator_size(10, 0.3)
    assert generator_size(5001) == 2501  # rounded up, as before
    with pytest.raises(ValueError, match="generator_share must lie in"):
        training_split(questions, 1.0)


def test_gate_questions_in_the_generator_s_training_data_are_refused_unless_allowed(tmp_path):
    """A gate question that the generator's training file holds is an error naming the opt-out."""
    from sparqlab.methods.ggc.split import gate_questions, training_split

    questions = [Question(str(i), f"q{i}?") for i in range(10)]
    portions = training_split(questions)
    shared = portions.gate[2].id  # a gate question the generator's file holds, beside one of its own
    turns = [{"role": "user", "content": "q?"}, {"role": "assistant", "content": "ASK {}"}]
    write_jsonl(tmp_path / "generator.jsonl", [{"id": i, "messages": turns} for i in (shared, portions.generator[0].id)])
    with pytest.raises(ValueError, match=rf"1 of the 3 gate questions \(e.g. '{shared}'\).*allow_overlap=true"):
        gate_questions(questions, 3, generator_data=tmp_path / "generator.jsonl")
    chosen, split = gate_questions(questions, 3, generator_data=tmp_path / "generator.jsonl", allow_overlap=True)
    assert [q.id for q in chosen] == [q.id for q in portions.gate[:3]]
    assert split.record(chosen)["gate"]["count"] == 3
    with pytest.raises(ValueError, match="no training questions left"):
        gate_questions(questions[:1], 3, generator_share=0.9)



def test_table12_lays_out_one_row_per_composition_and_the_published_rows_below():
    """Table 12: per corrector composition, the accuracy on the triggered, originally wrong and originally correct
    questions; the paper's values (appendix D.1) below ours, in %, empty where the paper copy has no cell."""
    from sparqlab.experiments.train import table12
    from sparqlab.methods.ggc.published import COLUMNS, with_published

    subsets = subset_analysis(stage_rows(), 0.55)
    assert list(subsets.index) == list(COLUMNS["table12"])  # evaluate_correctors' columns are these subsets
    evaluated = pd.DataFrame([{"composition": name, "n": 6, **subsets["accuracy"].to_dict()}
                              for name in ("W1.0", "W1.0+C0.8")])
    layout = with_published(table12(evaluated), "table12")
    assert list(layout.columns) == [*COLUMNS["table12"], "source"]
    assert layout.loc["W1.0", "correction required (triggered)"] == 50.0 and layout.loc["W1.0", "source"] == "this run"
    assert layout.loc["W1.0 (published)", "correction required (triggered)"] == 89.58
    assert layout.loc["W1.0+C0.8 (published)", "originally wrong"] == 87.98
    assert np.isnan(layout.loc["W1.0+C0.2 (published)", "originally wrong"])


def test_table2_shows_nsm_h_and_qgg_as_published_rows_without_invented_values():
    """NSM_h and QGG are Table 2 reference rows, published, never re-run; the paper copy has no Table 2 cells, so
    their values are empty and the source says so, while GGC's own rows carry the numbers its text states."""
    from sparqlab.methods.ggc.published import published_table

    table = published_table("table2")
    for baseline in ("NSM_h (published)", "QGG (published)"):
        assert table.loc[baseline, ["accuracy", "item_f1"]].isna().all()
        assert "not in the paper copy" in table.loc[baseline, "source"]
    assert table.loc["gated (published)", "accuracy"] == 98.33 and table.loc["gated (published)", "item_f1"] == 99.16
    assert table.loc["generator only (published)", "item_precision"] == 37.96
