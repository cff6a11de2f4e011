"""The method platform's building blocks: typed configs, prompt templates, the registry, tools, the KG
observations and neighbourhoods, typed traces."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Literal

import pytest

from sparqlab.data.question import Question
from sparqlab.kg.neighbourhood import lookup, property_examples
from sparqlab.kg.results import QueryResult, Term
from sparqlab.methods import DirectSparql, get_method, method_names
from sparqlab.platform import (
    Method,
    MethodConfig,
    PromptTemplate,
    QuestionContext,
    Tool,
    Trace,
    conversation,
    get_tools,
    method_from_config,
    register_method,
)
from support.platform_helpers import EX, FilmKG, films_by


@dataclass(frozen=True)
class GateConfig(MethodConfig):
    """- ``threshold``: gate threshold."""

    threshold: float = 0.5


@dataclass(frozen=True)
class KnobConfig(MethodConfig):
    """Every kind of field the validators understand."""

    threshold: float = 0.5
    steps: int = 3
    feedback: bool = True
    strategy: Literal["none", "greedy"] = "none"
    few_shot_ids: tuple[str, ...] = ()
    limit: int | None = None
    weights: dict[str, float] = field(default_factory=dict)
    gate: GateConfig = field(default_factory=GateConfig)


# -- configs ------------------------------------------------------------------------------------------------------

def test_config_round_trips_through_plain_values():
    config = KnobConfig.from_dict({"threshold": 1, "few_shot_ids": ["a", "b"], "gate": {"threshold": 0.9},
                                   "weights": {"x": 2}})
    assert config.threshold == 1.0 and isinstance(config.threshold, float)
    assert config.few_shot_ids == ("a", "b") and config.gate == GateConfig(0.9)
    plain = config.to_dict()
    assert plain["few_shot_ids"] == ["a", "b"] and plain["gate"] == {"threshold": 0.9}
    assert KnobConfig.from_dict(plain) == config


def test_config_typo_lists_the_valid_names_and_suggests_one():
    with pytest.raises(ValueError, match=r"'treshold' \(did you mean 'threshold'\?\).*valid options: threshold, "
                                         r"steps, feedback, strategy"):
        KnobConfig.from_dict({"treshold": 0.3})


@pytest.mark.parametrize("bad", [{"steps": 1.5}, {"steps": True}, {"feedback": "yes"}, {"strategy": "best"},
                                 {"few_shot_ids": "a"}, {"threshold": None}, {"gate": 3}, {"weights": {"x": "y"}}])
def test_config_refuses_wrong_types(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        KnobConfig.from_dict(bad)


def test_options_from_the_shell_are_parsed_by_field_type():
    config = KnobConfig.from_options({"threshold": "0.3", "steps": "7", "feedback": "false", "strategy": "greedy",
                                      "few_shot_ids": "train_1, train_2", "limit": "none",
                                      "gate": '{"threshold": 0.7}'})
    assert (config.threshold, config.steps, config.feedback, config.strategy) == (0.3, 7, False, "greedy")
    assert config.few_shot_ids == ("train_1", "train_2") and config.limit is None and config.gate.threshold == 0.7
    assert KnobConfig.from_options({"few_shot_ids": '["a,b"]'}).few_shot_ids == ("a,b",)
    with pytest.raises(ValueError, match="steps must be int"):
        KnobConfig.from_options({"steps": "many"})
    with pytest.raises(ValueError, match="feedback must be true or false"):
        KnobConfig.from_options({"feedback": "maybe"})
    with pytest.raises(ValueError, match="valid options"):
        KnobConfig.from_options({"step": "1"})


# -- prompts ------------------------------------------------------------------------------------------------------

def test_prompt_renders_named_fields_and_refuses_missing_or_unused_ones():
    template = PromptTemplate("t", "Answer {question} over {kg}; JSON like {{\"a\": 1}}")
    assert template.fields == {"question", "kg"}
    assert template.render(question="Q", kg="movies") == 'Answer Q over movies; JSON like {"a": 1}'
    with pytest.raises(ValueError, match="missing kg"):
        template.render(question="Q")
    with pytest.raises(ValueError, match="unused extra"):
        template.render(question="Q", kg="m", extra="x")
    with pytest.raises(ValueError, match="plain name"):
        PromptTemplate("bad", "positional {} placeholder")
    with pytest.raises(ValueError, match="plain name"):
        PromptTemplate("bad", "attribute {q.text}")


def test_prompt_digest_is_stable_and_follows_the_text():
    a = PromptTemplate("t", "Answer {question}")
    assert a.digest == PromptTemplate("other-name", "Answer {question}").digest
    assert a.digest != PromptTemplate("t", "Answer {question}.").digest
    assert len(a.digest) == 16 and int(a.digest, 16) >= 0


# -- registry -----------------------------------------------------------------------------------------------------

def test_methods_register_by_name_and_rebuild_from_describe():
    from sparqlab.core.plugins import load_plugins
    from sparqlab.platform.registry import METHODS

    # the test method must not leak into tests that list every method
    load_plugins()  # first, so that no plug-in is loaded inside the block alone
    with METHODS.restored():
        _register_and_rebuild()


def _register_and_rebuild():
    @register_method("test-registered")
    class Registered(Method):
        config_class = KnobConfig

    assert get_method("test-registered") is Registered and Registered.name == "test-registered"
    assert "direct" in method_names() and "test-registered" in method_names()
    method = Registered(threshold=0.25, few_shot_ids=("a",))
    saved = method.describe()
    assert saved["method"] == "test-registered" and saved["config"]["few_shot_ids"] == ["a"]
    rebuilt = method_from_config(saved)
    assert type(rebuilt) is Registered and rebuilt.config == method.config
    with pytest.raises(ValueError, match="unknown method 'nope'.*; known: .*direct"):
        get_method("nope")
    with pytest.raises(ValueError, match="valid options"):
        Registered(treshold=1.0)


def test_from_config_refuses_a_run_made_with_other_prompts():
    saved = DirectSparql().describe()
    saved["prompts"]["system"] = "0" * 16
    with pytest.raises(ValueError, match="other versions of the prompts system"):
        method_from_config(saved)


# -- KG observations and neighbourhoods ---------------------------------------------------------------------------

def test_query_result_observation_shows_labels_and_says_what_is_cut():
    rows = [{"f": Term("uri", f"{EX}f{i}"), "y": Term("literal", str(1970 + i))} for i in range(5)]
    result = QueryResult("select", ["f", "y"], rows, truncated=True)
    text = result.to_observation(max_rows=2, labels={f"{EX}f0": "Alien"})
    lines = text.splitlines()
    assert lines[0] == "?f | ?y"
    assert lines[1] == f"Alien ({EX}f0) | 1970" and lines[2] == f"{EX}f1 | 1971"
    assert lines[3] == "... 3 more rows not shown" and "row cap" in lines[4]
    assert QueryResult("ask", boolean=False).to_observation() == "false"
    assert QueryResult("select", ["x"], []).to_observation() == "(no rows)"


def test_lookup_reads_types_edges_and_labels_both_ways():
    kg = FilmKG()
    hood = lookup(kg, f"<{EX}alien>")
    assert (hood.label, hood.types) == ("Alien", [(f"{EX}Film", "film")])
    outgoing = {(e.property_label, e.value_label or e.value) for e in hood.outgoing}
    assert outgoing == {("directed by", "Ridley Scott"), ("", "1979")}
    scott = lookup(kg, f"{EX}scott")
    assert {e.value_label for e in scott.incoming} == {"Alien", "Blade Runner"}
    assert all(e.direction == "in" for e in scott.incoming)
    assert lookup(kg, f"<{EX}scott>", incoming=False).incoming == []
    text = scott.to_observation(values_per_property=1)
    assert text.startswith(f"Ridley Scott ({EX}scott)") and "incoming (1 property)" in text
    assert "… (+1 more)" in text  # the second film is counted, not dropped
    alien = lookup(kg, f"<{EX}alien>").to_observation(max_properties=1)
    assert "outgoing (2 properties)" in alien and f"(1 more property not shown: {EX}year)" in alien
    with pytest.raises(ValueError, match="is not an id"):
        kg.profile.resolve_id("Ridley Scott")
    assert kg.profile.resolve_id("rdfs:label") == "http://www.w3.org/2000/01/rdf-schema#label"


def test_property_examples_give_real_uses_with_labels():
    rows = property_examples(FilmKG(), f"<{EX}directed_by>", limit=2)
    assert len(rows) == 2
    labels = {"Alien": "Ridley Scott", "Blade Runner": "Ridley Scott", "Heat": "Michael Mann"}
    assert all(labels[r["subject_label"]] == r["object_label"] for r in rows)


# -- tools --------------------------------------------------------------------------------------------------------

def context(kg=None) -> QuestionContext:
    return QuestionContext(Question("q", "Who directed Alien?"), kg or FilmKG())


def test_tools_are_selected_by_name_and_counted_per_tool():
    with pytest.raises(ValueError, match="unknown tool 'browse'; known: .*execute.*lookup"):
        get_tools(["lookup", "browse"])
    tools = get_tools(["execute", "lookup", "stop"])
    assert list(tools) == ["execute", "lookup", "stop"]
    assert isinstance(tools["execute"], Tool) and tools["execute"].describe()["parameters"]["sparql"]
    ctx = context()

    async def use():
        rows = await tools["execute"](ctx, {"sparql": films_by("scott"), "max_rows": 1})
        broken = await tools["execute"](ctx, {"sparql": "SELECT ?x WHERE {"})
        missing = await tools["lookup"](ctx, {})
        hood = await tools["lookup"](ctx, {"entity": f"<{EX}heat>"})
        stop = await tools["stop"](ctx, {"sparql": "ASK {}"})
        return rows, broken, missing, hood, stop

    rows, broken, missing, hood, stop = asyncio.run(use())
    assert rows.text.endswith("... 1 more rows not shown") and len(rows.data) == 2
    assert broken.text.startswith("Error (syntax_error)")
    assert missing.text.startswith("Error: tool lookup needs argument 'entity'")
    assert "Michael Mann" in hood.text
    assert stop.final and stop.data == "ASK {}"
    assert ctx.kg_calls == {"query": 2, "lookup": 1}
    kinds = [e.kind for e in ctx.trace.events]
    assert kinds.count("observation") == 5 and kinds.count("query") == 2 and kinds.count("tool") == 1


def test_search_and_examples_through_the_context_are_counted():
    ctx = context()
    hits = asyncio.run(ctx.search("Ridley Scot"))
    assert hits[0].id == f"{EX}scott"
    examples = asyncio.run(ctx.examples(f"<{EX}directed_by>", limit=1))
    assert len(examples) == 1 and ctx.kg_calls == {"search": 1, "examples": 1}


# -- traces -------------------------------------------------------------------------------------------------------

def test_model_calls_log_only_new_messages_and_rebuild_the_conversation():
    trace = Trace()
    history = [{"role": "system", "content": "You are an agent. " * 50}, {"role": "user", "content": "Q?"}]
    sent = []
    for step in range(30):
        sent.append(list(history))
        response = f"Thought {step}"
        trace.model_call(history, response, step=step, role="controller")
        history = [*history, {"role": "assistant", "content": response},
                   {"role": "user", "content": f"Observation {step}"}]
    events = trace.events
    assert len(events[0].data["messages"]) == 2
    assert all(len(e.data["messages"]) == 1 and e.data["continues"] == i for i, e in enumerate(events[1:]))
    logged = sum(len(e.data["messages"]) for e in events)
    assert logged == 2 + 29, "each message is logged once: linear, not quadratic, in the number of calls"
    for index, messages in enumerate(sent):
        assert conversation(events, index) == messages
    # A call that departs from every earlier conversation logs its messages in full.
    trace.model_call([{"role": "user", "content": "fresh"}], "ok", step=None, role="controller")
    assert "continues" not in trace.events[-1].data and len(trace.events[-1].data["messages"]) == 1


def test_a_long_reply_quoted_by_a_later_event_is_stored_once():
    import json

    trace = Trace()
    long_reply, short_reply = "no query here " * 4000, "Hmm."
    trace.model_call([{"role": "user", "content": "Q?"}], long_reply, step=None, role="generator")
    trace.add("parse_failure", data={"response": long_reply, "failure": "parse_failure"})
    trace.model_call([{"role": "user", "content": "Q2?"}], short_reply, step=None, role="generator")
    trace.add("parse_failure", data={"response": short_reply})
    assert json.dumps(trace.to_json()).count("no query here") == 4000
    assert trace.events[1].data == {"response_event": 0, "failure": "parse_failure"}
    assert trace.events[3].data == {"response": "Hmm."}, "a short reply stays where it is quoted"


# -- structure ----------------------------------------------------------------------------------------------------

def _kg_import_graph():
    import ast
    from pathlib import Path

    import sparqlab.kg

    graph = {}
    for path in Path(sparqlab.kg.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                       and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
        graph[f"sparqlab.kg.{path.stem}"] = {
            node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and id(node) not in typing_only
            and node.module and node.module.startswith("sparqlab.kg.")}
    return graph


def test_kg_modules_import_each_other_without_cycles():
    graph = _kg_import_graph()
    assert "sparqlab.kg.profiles" not in graph["sparqlab.kg.vocab"] and not graph["sparqlab.kg.vocab"]
    visiting, done = set(), set()

    def visit(module, path):
        assert module not in visiting, f"import cycle: {' -> '.join([*path, module])}"
        if module in done:
            return
        visiting.add(module)
        for dependency in graph.get(module, ()):
            visit(dependency, [*path, module])
        visiting.discard(module)
        done.add(module)

    for module in graph:
        visit(module, [])


def test_the_movie_store_builder_is_registered_by_its_own_module():
    from sparqlab.graphs import movies
    from sparqlab.graphs.profiles import MOVIES, WIKIDATA
    from sparqlab.kg.profiles import STORE_BUILDERS

    assert STORE_BUILDERS["movies"] is movies.ensure_store and MOVIES.store_builder is movies.ensure_store
    assert WIKIDATA.store_builder is None


def test_embedded_query_workers_follow_the_run_concurrency(monkeypatch):
    from sparqlab.runs import RunConfig
    from sparqlab.runs.plan import kg_open_options

    monkeypatch.setattr("os.cpu_count", lambda: 16)
    assert kg_open_options(RunConfig(concurrency=1)) == {"workers": 2}
    assert kg_open_options(RunConfig(concurrency=12)) == {"workers": 12}
    assert kg_open_options(RunConfig(concurrency=64)) == {"workers": 16}
    assert kg_open_options(RunConfig(concurrency=64, kg_options={"workers": 3, "timeout_s": 5})) == {
        "workers": 3, "timeout_s": 5}


def test_packages_import_only_the_layers_docs_design_lists_above_them():
    import ast
    import re
    from pathlib import Path

    import sparqlab

    lib = Path(sparqlab.__file__).parent
    design = (lib.parents[1] / "docs" / "DESIGN.md").read_text()
    block = design.split("## Layers", 1)[1].split("```")[1]
    order = [m.group(1) for m in re.finditer(r"^([a-z][a-z0-9]*)\s", block, re.MULTILINE)]
    rank = {name: i for i, name in enumerate(order)}
    problems = []
    for path in sorted(lib.rglob("*.py")):
        layer = path.relative_to(lib).parts[0].removesuffix(".py")
        if layer in ("__init__", "__main__"):
            continue
        assert layer in rank, f"{layer} is not in the layer list of docs/DESIGN.md"
        tree = ast.parse(path.read_text())
        typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                       and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and id(node) not in typing_only and node.module:
                parts = node.module.split(".")
                if parts[0] == "sparqlab" and len(parts) > 1 and rank.get(parts[1], -1) > rank[layer]:
                    problems.append(f"{path.relative_to(lib)} imports {node.module}")
    assert not problems, problems


def test_no_library_module_is_used_only_by_the_tests():
    """Every module under lib/ is reached from the library, its commands, notebooks, scripts, benchmarks or docs
    (imported, or listed in the plug-in tables): test equipment lives in tests/support/, not in the package."""
    import ast
    import json
    from pathlib import Path

    import sparqlab
    from sparqlab.core.plugins import BUILT_IN, method_packages

    lib = Path(sparqlab.__file__).parent
    root = lib.parents[1]

    def module_name(path: Path) -> str:
        parts = path.relative_to(lib.parent).with_suffix("").parts
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    def imported(source: str, package: str) -> set[str]:
        names = set()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join([*package.split(".")[:len(package.split(".")) - node.level + 1], base]).strip(".")
                names.add(base)
                names.update(f"{base}.{alias.name}" for alias in node.names)
        return names

    modules = {module_name(path): path for path in lib.rglob("*.py")}
    reached = {"sparqlab", "sparqlab.__main__"}
    reached |= {module for group in BUILT_IN.values() for module in group} | set(method_packages())
    reached.add("sparqlab.cli")  # the console script
    for path in sorted(lib.rglob("*.py")):
        package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
        reached |= imported(path.read_text(), package) - {module_name(path)}
    for folder in ("scripts", "benchmarks"):
        for path in (root / folder).rglob("*.py"):
            reached |= imported(path.read_text(), "")
    for path in (root / "notebooks").glob("*.ipynb"):
        cells = json.loads(path.read_text())["cells"]
        code = "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "code")
        reached |= imported("\n".join(line for line in code.splitlines()
                                      if not line.lstrip().startswith(("%", "!"))), "")
    docs = "\n".join(p.read_text() for p in [root / "README.md", *(root / "docs").glob("*.md")])
    reached |= {name for name in modules if f"python -m {name}" in docs or f"from {name} import" in docs}
    reached |= {name.rsplit(".", depth)[0] for name in reached for depth in range(1, name.count(".") + 1)}
    # (importing a module runs its packages)
    only_tests = sorted(set(modules) - reached)
    assert not only_tests, f"modules reached by no library code, command, notebook, script, benchmark or doc: " \
                           f"{only_tests}"
