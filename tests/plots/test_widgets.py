"""The trace browser: loading a run folder, rendering events and predictions, and the widget wiring."""

from __future__ import annotations

import os

import pytest

from sparqlab.core.jsonl import write_jsonl
from sparqlab.plots import widgets
from sparqlab.runs.results import run_dirs

TRACE = [
    {"kind": "thought", "step": 0, "role": None, "t": 10.0, "data": {"text": "Find the director."}},
    {"kind": "action", "step": 0, "role": None, "t": 10.5,
     "data": {"name": "execute_sparql", "args": {"sparql": "SELECT ?x WHERE { ?x ?p ?o }"}}},
    {"kind": "model_call", "step": 1, "role": "generator", "t": 11.0,
     "data": {"kind": "generate", "messages": [{"role": "user", "content": "<b>hi</b>"}],
              "response": "Thought: done", "usage": {"prompt": 5, "completion": 2}}},
    # an untyped event as older runs wrote them
    {"event": "query", "t": 12.25, "sparql": "SELECT ?d WHERE { ?f ?r ?d }", "rows": 1, "cached": False},
]
PREDICTION = {"id": "q1", "question": "Who directed <Heat>?", "predicted_sparql": "SELECT ?d WHERE { ?f ?r ?d }",
              "predicted_answers": ["Michael Mann"], "gold_answers": ["Michael Mann"], "f1": 1.0, "em": True,
              "empty": False, "error_category": None}


@pytest.fixture
def run_dir(tmp_path):
    folder = tmp_path / "runs" / "exp" / "abc123"
    write_jsonl(folder / "predictions.jsonl", [PREDICTION, {**PREDICTION, "id": "q2", "em": False}])
    write_jsonl(folder / "traces.jsonl", [{"id": "q1", "trace": TRACE}, {"id": "q3", "trace": TRACE[:1]}])
    (folder / "manifest.json").write_text("{}")  # what marks a run folder (the runner writes it first)
    (tmp_path / "runs" / "exp" / "empty").mkdir()
    return folder


def test_list_and_load_runs(run_dir):
    root = run_dir.parents[1]
    assert run_dirs(root) == [run_dir]  # the browser's run picker lists these
    assert run_dirs(root / "nowhere") == []
    run = widgets.load_run(run_dir)
    assert run.question_ids == ["q1", "q2", "q3"]
    assert [e.kind for e in run.events("q1")] == ["thought", "action", "model_call", "query"]
    assert run.events("q1")[3].data["rows"] == 1 and run.events("q1")[2].role == "generator"
    assert run.events("q2") == []
    assert widgets.question_label(run, "q1").startswith("q1 ✓ — Who directed")
    assert widgets.question_label(run, "q2").startswith("q2 ✗ — ") and widgets.question_label(run, "q3") == \
        "q3 — (no prediction)"
    with pytest.raises(FileNotFoundError):
        widgets.load_run(root / "missing")


def test_event_fields_put_long_text_in_blocks():
    kind, blocks, short = widgets.event_fields(TRACE[2])
    assert kind == "model_call"
    assert [k for k, _ in blocks][:2] == ["response", "message 1 (user)"]
    assert dict(short)["kind"] == "generate" and dict(short)["role"] == "generator" and dict(short)["step"] == "1"
    assert '"prompt": 5' in dict(blocks)["usage"]  # nested values are indented JSON, so multi-line blocks


def test_render_event_escapes_html_and_shows_position_and_time():
    out = widgets.render_event(TRACE[2], 2, 4, start_time=10.0)
    assert "&lt;b&gt;hi&lt;/b&gt;" in out and "<b>hi</b>" not in out
    assert "step 3 of 4" in out and "+1.00 s" in out
    text = widgets.event_text(TRACE[3], 3, 4)
    assert text.splitlines()[0] == "[4/4] query"
    assert "    SELECT ?d WHERE { ?f ?r ?d }" in text.splitlines()


def test_failures_stand_out_in_the_colours():
    error = widgets.EVENT_COLOURS["error"]
    for kind in ("model_error", "method_error", "parse_failure", "timeout"):
        assert widgets.event_colour(kind) == error, kind
    assert len({widgets.event_colour(k) for k in ("thought", "query", "final_query", "model_call", "model_error")}) == 5
    assert widgets.event_colour("something_new") not in widgets.EVENT_COLOURS.values()
    timeline = widgets.render_timeline([{"event": "query"}, {"event": "model_error"}], current=0)
    assert f"border:1px solid {error}" in timeline


def test_render_step_clamps_and_handles_empty_traces():
    assert "step 4 of 4" in widgets.render_step(TRACE, 99)
    assert "step 1 of 4" in widgets.render_step(TRACE, -3)
    assert "No trace" in widgets.render_step([], 0)
    assert widgets.clamp_step(5, TRACE) == 3 and widgets.clamp_step(5, []) == 0


def test_render_prediction_shows_both_queries_a_diff_and_marked_answer_sets():
    wrong = {**PREDICTION, "id": "q2", "em": False, "f1": 0.5, "gold_sparql": "SELECT ?d WHERE { ?f :directed ?d }",
             "predicted_answers": ["Michael Mann", "Al Pacino"], "gold_answers": ["Michael Mann", "Ridley Scott"],
             "error_type": "semantic:wrong_relation"}
    out = widgets.render_prediction(wrong, standin=True)
    assert "Who directed &lt;Heat&gt;?" in out and "[standin]" in out
    assert "gold SPARQL" in out and "predicted SPARQL" in out and "?f :directed ?d" in out
    assert '<span class="sq-del">-SELECT ?d WHERE { ?f :directed ?d }</span>' in out
    assert '<span class="sq-add">+SELECT ?d WHERE { ?f ?r ?d }</span>' in out
    assert 'Ridley Scott <span class="sq-tag">missing</span>' in out
    assert 'Al Pacino <span class="sq-tag">extra</span>' in out
    assert "<b>error</b> semantic:wrong_relation" in out and "<b>f1</b> 50.0%" in out
    no_query = widgets.render_prediction({**wrong, "predicted_sparql": None, "predicted_answers": None,
                                          "empty": True, "error_type": "no_query"})
    assert "outcome</b> no query" in no_query and "none: no query" in no_query and "empty" not in no_query
    many = widgets.render_prediction({**PREDICTION, "predicted_answers": [str(i) for i in range(80)]})
    assert "(80 in all)" in many
    assert "No prediction" in widgets.render_prediction(None)


def test_browser_opens_on_the_latest_run_with_its_failures_and_steps_are_clickable(run_dir):
    older = run_dir.parent / "older"
    write_jsonl(older / "predictions.jsonl", [PREDICTION])
    (older / "manifest.json").write_text("{}")
    for name in ("predictions.jsonl", "manifest.json"):
        os.utime(older / name, (1, 1))
    browser = widgets.trace_browser(run_dir.parents[1])
    assert browser.run_picker.value == run_dir, "opens on the run written last"
    assert browser.outcome_picker.value == "failures"
    assert [value for _, value in browser.question_picker.options] == ["q2"]
    assert "No trace" in browser.event_view.value and "Michael Mann" in browser.prediction_view.value
    browser.outcome_picker.value = "all"
    browser.question_picker.value = "q1"
    assert "Find the director." in browser.event_view.value
    assert [label for label, _ in browser.step_picker.options] == ["1 thought", "2 action", "3 model", "4 query"]
    browser.step_picker.value = 2
    assert "model_call" in browser.event_view.value
    for _ in range(5):
        browser.next_button.click()
    assert browser.step_picker.value == 3
    browser.previous_button.click()
    assert browser.step_picker.value == 2
    browser.next_failure_button.click()
    assert browser.question_picker.value == "q2"
    browser.question_picker.value = "q3"
    assert "No prediction" in browser.prediction_view.value and "Find the director." in browser.event_view.value
    assert widgets.trace_browser(run_dir.parents[1], run="exp/older").run_picker.value == older, "or a named run"
    bundle = browser._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "Failing questions" in bundle["text/html"] and "q2" in bundle["text/html"]


def test_system_prompts_after_the_first_are_collapsed():
    system = {"role": "system", "content": "You are an agent.\n" * 40}
    calls = [{"kind": "model_call", "step": n, "role": "controller", "t": float(n),
              "data": {"messages": [system, {"role": "user", "content": f"step {n}"}], "response": "ok"}}
             for n in range(2)]
    assert "<details><summary><b>message 1 (system)</b>" not in widgets.render_step(calls, 0)
    assert "<details><summary><b>message 1 (system)</b>" in widgets.render_step(calls, 1)
    whole = widgets.render_trace(calls)
    assert whole.count("message 1 (system)") == 2 and whole.count("<details><summary><b>message 1 (system)") == 1


def test_a_continued_conversation_shows_only_its_new_messages_and_what_it_continues():
    event = {"kind": "model_call", "step": 2, "role": "controller", "t": 1.0,
             "data": {"continues": 0, "prefix": 3, "kind": "step", "response": "Action: stop",
                      "messages": [{"role": "user", "content": "Observation: 2 rows"}]}}
    kind, blocks, short = widgets.event_fields(event)
    assert dict(short)["continues"] == "event 1 (first 3 messages not repeated)"
    assert [k for k, _ in blocks] == ["response", "message 4 (user)"]
