"""The ReAct controller with a scripted stand-in: re-parse, recorded parse failures, repeated actions, the budget,
the window, and SAGA's [BLOCKED] observation — on the Wikidata-shaped test KG (embedded)."""

from __future__ import annotations

import json

import pytest

from sparqlab.data.question import Question
from sparqlab.llm import ChatRequest, StandinModel
from sparqlab.methods import make_method
from sparqlab.methods.agents.prompts import REPARSE
from sparqlab.runs import RunConfig, load_traces, run
from support.wikidata_fixtures import WIKIDATA_FIXTURES, open_wikidata

QUESTION = Question("q1", "Which country is Jackson located in?", gold_answers=["http://www.wikidata.org/entity/Q30"],
                    kg="wikidata")


class Scripted(StandinModel):
    """Replies from a list for controller calls (the last one repeats) and from another for re-parse calls;
    records every request."""

    name = "standin-scripted-test"

    def __init__(self, controller: list[str], reparse: list[str] = (), answer_type: str = "wd:Q6256"):
        super().__init__()
        self.controller, self.reparse = list(controller), list(reparse)
        self.answer_type = answer_type
        self.requests: list[ChatRequest] = []

    def respond(self, request: ChatRequest) -> str:
        self.requests.append(request)
        if request.last_user_message.startswith(REPARSE.text[:40]):
            return self.reparse.pop(0) if self.reparse else "no idea"
        if "answer_type_label" in request.last_user_message:
            return json.dumps({"answer_type_label": "country", "answer_type_id": self.answer_type})
        return self.controller.pop(0) if len(self.controller) > 1 else self.controller[0]

    @property
    def controller_requests(self) -> list[ChatRequest]:
        """The controller calls alone (re-parse and answer-type calls left out)."""
        return [r for r in self.requests if not r.last_user_message.startswith(REPARSE.text[:40])
                and "answer_type_label" not in r.last_user_message]


@pytest.fixture
def agent_run(tmp_path, monkeypatch, wikidata_ttl):
    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    kg = open_wikidata(wikidata_ttl)

    calls = iter(range(100))

    def go(method: str, model: Scripted, **options):  # each call its own experiment: the same config would resume
        config = RunConfig(experiment=f"ctl{next(calls)}", model=model.name, cache="off", output_root=str(tmp_path / "runs"),
                           progress=False)
        result = run(make_method(method, **options), [QUESTION], config, kg=kg, model=model)
        return result.predictions().iloc[0], load_traces(result.run_dir)[QUESTION.id]

    yield go
    kg.close()


def test_unreadable_reply_is_reparsed_at_temperature_zero(agent_run):
    model = Scripted(["I should look for Jackson first.", "Thought: done\nAction: stop()"],
                     reparse=[json.dumps({"thought": "find it", "action_name": "search_wikidata",
                                          "action_argument": "Jackson"})])
    row, trace = agent_run("spinach", model)
    assert row["model_calls"] == {"controller": 2, "reparse": 2}  # every reply is re-parsed (appendix F.2)
    reparse = next(r for r in model.requests if r.last_user_message.startswith(REPARSE.text[:40]))
    assert reparse.temperature == 0.0 and "I should look for Jackson first." in reparse.last_user_message
    assert any(e.kind == "action" and e.data["name"] == "search" for e in trace)
    assert row["extra.parse_failures"] == 0 and row["error_category"] == "no_query"


def test_unreadable_replies_are_recorded_as_failures_without_crashing(agent_run):
    row, trace = agent_run("spinach", Scripted(["Hmm."]), max_parse_failures=3)
    assert row["error_category"] == "parse_failure" and row["extra.stopped_by"] == "parse_failure"
    assert row["extra.parse_failures"] == 3 and row["model_calls"] == {"controller": 3, "reparse": 3}
    assert [e.data["response"] for e in trace if e.kind == "parse_failure"] == ["Hmm."] * 3


def test_controller_call_uses_the_configured_sampling_and_stop(agent_run):
    model = Scripted(["Thought: x\nAction: stop()"])
    agent_run("spinach", model, sampling="appendix_f2", controller_temperature=0.7, controller_max_tokens=321)
    request = model.requests[0]
    assert (request.temperature, request.top_p, request.max_tokens, request.stop) == (0.7, 0.9, 321, ("\nObservation",))


@pytest.mark.parametrize("method", ["spinach", "saga"])
def test_controller_decodes_greedily_with_2048_tokens_by_default_and_f2_is_a_preset(agent_run, method):
    """SAGA's Implementation Details (greedy, 2,048 tokens, every experiment and baseline) are the default; the
    appendix F.2 values (T = 1.0, top-p 0.9, 700) are the ``appendix_f2`` preset."""
    greedy, f2 = Scripted(["Thought: x\nAction: stop()"]), Scripted(["Thought: x\nAction: stop()"])
    agent_run(method, greedy)
    agent_run(method, f2, sampling="appendix_f2")
    first = greedy.controller_requests[0]
    assert (first.temperature, first.top_p, first.max_tokens) == (0.0, 1.0, 2048)
    first = f2.controller_requests[0]
    assert (first.temperature, first.top_p, first.max_tokens) == (1.0, 0.9, 700)


def test_repeated_actions_are_not_rerun_and_end_the_question(agent_run):
    model = Scripted(["Thought: again\nAction: search(Jackson)"])
    row, trace = agent_run("spinach", model, max_repeats=2)
    assert row["extra.stopped_by"] == "repeats" and row["extra.repeated_actions"] == 2 and row["extra.actions"] == 3
    searches = [e for e in trace if e.kind == "tool" and e.data.get("tool") == "search"]
    assert len(searches) == 2  # one action = entity + property search, run once only
    assert "[REPEATED]" in model.controller_requests[-1].last_user_message


def test_budget_and_window(agent_run):
    model = Scripted([f"Thought: step {i}\nAction: search(name {i})" for i in range(10)])
    row, _ = agent_run("spinach", model, max_actions=4, window=2)
    assert row["extra.stopped_by"] == "budget" and row["error_category"] == "budget_exhausted"
    assert row["extra.actions"] == 4 and row["model_calls"] == {"controller": 4, "reparse": 4}
    last = model.controller_requests[-1].last_user_message
    assert "(1 earlier step not shown)" in last and "search(name 1)" in last and "search(name 0)" not in last


BLOCKED_SCRIPT = ["Thought: who is Jackson\nAction: lookup(wd:Q900001)",
                  "Thought: country\nAction: execute(SELECT ?c WHERE { wd:Q900001 wdt:P17 ?c })",
                  "Thought: done\nAction: stop()"]


def test_blocked_fires_on_a_known_domain_conflict_only(agent_run):
    row, trace = agent_run("saga", Scripted(BLOCKED_SCRIPT))
    assert row["extra.blocked"] == 1 and row["error_category"] == "no_query"
    blocked = [e for e in trace if e.kind == "blocked"]
    assert len(blocked) == 1 and "human" in blocked[0].data["text"]
    assert not any(e.kind == "query" and "wdt:P17" in e.data.get("sparql", "") for e in trace)  # never executed
    # the same query runs when filtering is off, and a compatible pattern is never blocked
    row, _ = agent_run("saga", Scripted(BLOCKED_SCRIPT), features={"type_filter": False})
    assert row["extra.blocked"] == 0 and row["predicted_answers"] == ["http://www.wikidata.org/entity/Q145"]
    ok = ["Thought: x\nAction: execute(SELECT ?p WHERE { ?x wdt:P31 wd:Q5 . ?x wdt:P19 ?p })",
          "Thought: done\nAction: stop()"]
    row, _ = agent_run("saga", Scripted(ok))
    assert row["extra.blocked"] == 0 and not row["extra.final_empty"]


def test_without_persistent_type_state_the_entity_just_looked_up_still_feeds_blocked(agent_run):
    """Table 5 "− persistent type state" removes Θ's persistence only: the latest lookup's types still block a
    conflicting pattern (the type filter stays on), an entity looked up before it is forgotten."""
    row, _ = agent_run("saga", Scripted(BLOCKED_SCRIPT), features={"type_state": False})
    assert row["extra.blocked"] == 1
    earlier = [BLOCKED_SCRIPT[0], "Thought: and the US\nAction: lookup(wd:Q30)", *BLOCKED_SCRIPT[1:]]
    row, _ = agent_run("saga", Scripted(earlier))
    assert row["extra.blocked"] == 1
    row, _ = agent_run("saga", Scripted(earlier), features={"type_state": False})
    assert row["extra.blocked"] == 0


def test_variable_types_from_a_type_pattern_block_in_the_same_query(agent_run):
    script = ["Thought: x\nAction: execute(SELECT ?c WHERE { ?x wdt:P31 wd:Q5 ; wdt:P17 ?c })",
              "Thought: done\nAction: stop()"]
    row, _ = agent_run("saga", Scripted(script))
    assert row["extra.blocked"] == 1
    row, _ = agent_run("saga", Scripted(script), features={"type_state": False})  # the query's own pattern still counts
    assert row["extra.blocked"] == 1


def test_saga_lookup_filters_and_annotates_while_spinach_prunes(agent_run):
    script = ["Thought: x\nAction: lookup(wd:Q1045540)", "Thought: done\nAction: stop()"]
    saga_model = Scripted(script)
    row, _ = agent_run("saga", saga_model)
    observation = saga_model.controller_requests[-1].last_user_message
    assert "place of birth" not in observation and "author (wdt:P50)" in observation
    assert "domain: literary work range: human" in observation
    assert row["extra.properties_filtered"] == 1 and "prune" not in row["model_calls"]
    assert "Expected answer type: country (wd:Q6256)" in saga_model.controller_requests[-1].messages[0][1]
    assert "White Fang (wd:Q1045540): literary work" in saga_model.controller_requests[-1].messages[0][1]
    spinach_model = Scripted(script)
    row, _ = agent_run("spinach", spinach_model)
    assert row["model_calls"]["prune"] == 1 and row["extra.properties_filtered"] == 0


def test_a_large_kgs_index_samples_properties_when_an_agent_meets_them(agent_run, monkeypatch):
    from sparqlab.methods.agents.schema import index as schema_index

    monkeypatch.setattr(schema_index, "EAGER_SAMPLING_LIMIT", 0)  # treat the test KG like Wikidata
    occupation = "http://www.wikidata.org/prop/direct/P106"
    script = ["Thought: x\nAction: lookup(wd:Q45765)", "Thought: done\nAction: stop()"]
    model = Scripted(script)
    row, trace = agent_run("saga", model)
    sampling = [e for e in trace if e.kind == "query" and f"<{occupation}>" in e.data["sparql"]]
    assert len(sampling) == 4  # type counts and sample size, for subjects and for objects
    observation = model.controller_requests[-1].last_user_message
    assert "occupation (wdt:P106): occupation of a person domain: usually human range: usually profession" \
        in observation


def test_the_answer_type_may_be_any_class_of_the_kg_and_an_unindexed_one_is_kept_as_a_label(agent_run):
    """F.1: "the most relevant Wikidata QID for this type"; the common mappings are examples, not a closed list."""
    outside = Scripted(["Thought: x\nAction: stop()"], answer_type="wd:Q486972")  # human settlement: not listed
    row, _ = agent_run("saga", outside)
    prompt = next(r.last_user_message for r in outside.requests if "answer_type_label" in r.last_user_message)
    assert "examples, not a complete list" in prompt and "from the list below" not in prompt
    assert "wd:Q486972" not in prompt and row["extra.answer_type"] == "country|http://www.wikidata.org/entity/Q486972"
    river = Scripted(["Thought: x\nAction: stop()"], answer_type="wd:Q4022")  # a class the index never met
    row, trace = agent_run("saga", river)
    assert row["extra.answer_type"] == "country|"
    logged = next(e for e in trace if e.kind == "answer_type")
    assert logged.data["unindexed"] == "http://www.wikidata.org/entity/Q4022"


def test_type_blind_failures_are_counted_from_final_queries(tmp_path, monkeypatch):
    """SAGA appendix A: a failed final query whose property's known domain excludes its subject's types is
    type-blind (P17 "country" on a human); a failure without such a conflict is not."""
    import pandas as pd

    from sparqlab.experiments.agents import type_blind, type_blindness_table
    from sparqlab.methods.agents.schema.index import default_schema_folder, load_or_build

    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    kg = open_wikidata(WIKIDATA_FIXTURES["handwritten"])
    try:
        schema = load_or_build(kg, default_schema_folder(kg))
        blind = "SELECT ?c WHERE { wd:Q900001 wdt:P17 ?c }"
        assert type_blind(blind, kg, schema)
        assert type_blind("SELECT ?c WHERE { ?x wdt:P31 wd:Q5 ; wdt:P17 ?c }", kg, schema)
        assert not type_blind("SELECT ?p WHERE { wd:Q900001 wdt:P19 ?p }", kg, schema) and not type_blind(None, kg, schema)
        gold = {"gold_answers": ["x"], "gold_source": "given", "empty": False}
        frame = pd.DataFrame([
            {"variant": "SPINACH", "predicted_sparql": blind, "predicted_answers": [], "f1": 0.0, "em": False, **gold},
            {"variant": "SPINACH", "predicted_sparql": "SELECT ?p WHERE { wd:Q900001 wdt:P19 ?p }",
             "predicted_answers": ["y"], "f1": 0.0, "em": False, **gold},
            {"variant": "SPINACH", "predicted_sparql": "ASK {}", "predicted_answers": ["x"], "f1": 1.0, "em": True, **gold},
        ])
        row = type_blindness_table(frame, kg).loc["SPINACH"]
        assert row.tolist() == [2, 1, 50.0]
    finally:
        kg.close()


def test_saga_state_last_layout_moves_the_changing_blocks_after_the_history(agent_run):
    paper, moved = Scripted(BLOCKED_SCRIPT), Scripted(BLOCKED_SCRIPT)
    agent_run("saga", paper)
    row, _ = agent_run("saga", moved, prompt_layout="state_last")
    assert row["extra.blocked"] == 1  # the same behaviour: only the prompt's layout differs
    paper_systems = [r.messages[0][1] for r in paper.controller_requests]
    moved_systems = {r.messages[0][1] for r in moved.controller_requests}
    assert len(set(paper_systems)) > 1 and "## Knowledge log" in paper_systems[-1]  # the paper's: changes per step
    assert len(moved_systems) == 1 and "## Knowledge log" not in next(iter(moved_systems))
    last = moved.controller_requests[-1].last_user_message
    assert last.index("Action: lookup(wd:Q900001)") < last.index("## Current type context") < \
        last.index("## Knowledge log") < last.index('Write one "Thought"')
    # the paper's text, moved: every line of the paper layout's prompt is in the moved layout's messages
    paper_text = "\n".join(paper.controller_requests[-1].messages[0][1:] + (paper.controller_requests[-1].last_user_message,))
    moved_text = "\n".join((next(iter(moved_systems)), last))
    assert set(paper_text.splitlines()) - set(moved_text.splitlines()) <= {""}


def test_the_prefix_cache_model_reuses_full_blocks_of_an_unchanged_prefix_only():
    from sparqlab.llm.prefix_cache import PrefixCacheModel

    cache = PrefixCacheModel(block_tokens=4)
    first = [f"t{i}" for i in range(10)]
    assert cache.request(first) == 10  # cold: all computed; blocks t0-3 and t4-7 are cached
    assert cache.request(first[:9] + ["x"]) == 2  # two full blocks reused
    assert cache.request(["y"] + first[1:]) == 10  # a change in the first block invalidates every later block
    assert cache.request(first[:8]) == 1  # fully cached: vLLM still computes the last token
    cache.generated(["a", "b"], "c d e f g")
    assert cache.request(["a", "b", "c", "d", "e"]) == 1  # the reply's full block was cached
