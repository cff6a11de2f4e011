"""A KG and a dataset the project has never seen, brought the ways docs/adding-a-kg.md and docs/adding-a-dataset.md
describe: an RDF file used as it is, then a third-party package registering the KG and its questions through the
``sparqlab.kgs`` / ``sparqlab.datasets`` entry points, with every method run on them and GGC and DeSQ learning from
the KG's own train split with no option given.

The KG (``university/university.ttl``, 560 triples) has an RDFS schema with a class hierarchy (GraduateStudent ⊑
Student ⊑ Person, Professor ⊑ Person) and its own prefixes ``uo:`` / ``ur:``; ``train.jsonl`` (20) and
``test.jsonl`` (10) are questions with gold SPARQL (the test split with gold answers too)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.plugin_helpers import install_package

HERE = Path(__file__).parent / "university"
TTL = HERE / "university.ttl"
SPARQLAB = Path(sys.executable).with_name("sparqlab")


def sparqlab(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(SPARQLAB), *args], capture_output=True, text=True, env=env)


def test_a_file_kg_gets_its_own_prefixes_labels_and_schema():
    from sparqlab.kg import open_kg
    from sparqlab.kg.describe import kg_notes

    with open_kg(TTL, cache=False) as kg:
        profile = kg.profile
        assert profile.name == "university" and profile.prefixes["uo"] == "http://uni.example.org/ontology#"
        assert kg.query("SELECT ?p WHERE { ?p a uo:Professor }").rows  # the file's prefix, undeclared in the query
        notes = kg_notes(kg)
    assert "graduate student (uo:GraduateStudent), subclass of student (uo:Student)" in notes
    assert "- teaches (uo:teaches): professor (uo:Professor) -> course (uo:Course)" in notes
    assert profile.shorten("http://uni.example.org/resource/AdaLovelace") == "ur:AdaLovelace"
    kinds = {shape.kind for shape in profile.id_shapes if shape.split("http://uni.example.org/ontology#Professor")}
    assert kinds == {"class", "entity"} and profile.id_shapes[0].kind == "class"  # classes are tried first

    listed = sparqlab("kg", "prefixes", str(TTL))
    assert listed.returncode == 0 and "PREFIX uo:" in listed.stdout and "<http://uni.example.org/ontology#>" in listed.stdout
    answered = sparqlab("query", "--kg", str(TTL), "--no-cache",
                        'SELECT ?c WHERE { ?p rdfs:label "Ada Lovelace" ; uo:teaches ?c }')
    assert answered.returncode == 0, answered.stderr
    assert "ur:Algorithms (Algorithms)" in answered.stdout


def test_training_data_of_a_file_kg_names_the_kg_not_its_path(tmp_path):
    from sparqlab.kg import open_kg
    from sparqlab.train.data import build_from_dataset

    with open_kg(TTL.resolve(), cache=False) as kg:
        for builder in ("generic", "ggc-generator"):
            out = tmp_path / f"{builder}.jsonl"
            build_from_dataset(builder, str(HERE), "train", out, kg=kg, progress=False)
            text = out.read_text()
            assert "over the university knowledge graph" in text and str(HERE) not in text


def test_a_memory_of_a_file_kg_is_built_under_the_cache_not_beside_the_file(tmp_path):
    shutil.copy(TTL, tmp_path / "university.ttl")
    env = {**os.environ, "SPARQLAB_CACHE": str(tmp_path / "cache")}
    built = sparqlab("desq", "memory", "build", "--kg", str(tmp_path / "university.ttl"), "--embedder", "hashing",
                     env=env)
    assert built.returncode == 0, built.stderr
    folder = Path(built.stdout.split()[1])
    assert folder.parent == tmp_path / "cache" / "desq-memory" and folder.name.startswith("university-")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "university.ttl"]


def test_a_refinement_file_beside_the_data_changes_the_profile(tmp_path):
    from sparqlab.kg import open_kg

    shutil.copy(TTL, tmp_path / "uni.ttl")
    (tmp_path / "uni.kg.yaml").write_text("name: campus\ntopic: a university\nnotes: Courses have credits.\n"
                                          "answer_types: [[person, uo:Person]]\n", encoding="utf-8")
    with open_kg(tmp_path / "uni.ttl", cache=False) as kg:
        assert kg.profile.name == "campus" and kg.profile.conventions.topic == "a university"
        assert kg.profile.prompt_notes.endswith("Courses have credits.")
        assert kg.profile.conventions.answer_types == (("person", "uo:Person"),)
    (tmp_path / "uni.kg.yaml").write_text("lable_predicate: rdfs:label\n", encoding="utf-8")
    with pytest.raises(ValueError, match="unknown keys 'lable_predicate' \\(did you mean 'label_predicate'\\?\\)"):
        open_kg(tmp_path / "uni.ttl", cache=False)


ALIASED = """@prefix ex: <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
ex:Aspirin rdfs:label "aspirin"@en ; skos:altLabel "acetylsalicylic acid"@en .
ex:Ibuprofen rdfs:label "ibuprofen"@en .
"""


def test_a_file_kgs_aliases_are_searched_unless_the_refinement_names_none(tmp_path, monkeypatch):
    from sparqlab.kg import open_kg

    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    (tmp_path / "drugs.ttl").write_text(ALIASED, encoding="utf-8")
    with open_kg(tmp_path / "drugs.ttl", cache=False) as kg:
        assert kg.profile.alias_predicates == ("http://www.w3.org/2004/02/skos/core#altLabel",)
        hit = kg.search("acetylsalicylic acid", kind="entity", limit=1)[0]
        assert hit.id == "http://example.org/Aspirin" and hit.matched == "acetylsalicylic acid"
    (tmp_path / "drugs.kg.yaml").write_text("alias_predicates: []\n", encoding="utf-8")
    with open_kg(tmp_path / "drugs.ttl", cache=False) as kg:
        assert kg.profile.alias_predicates == ()
        assert all(hit.matched != "acetylsalicylic acid" for hit in kg.search("acetylsalicylic acid", limit=5))


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory):
    """A third-party package holding the university KG and its questions, installed into a folder of its own,
    with an environment whose runs and cache are private to this module."""
    root = tmp_path_factory.mktemp("uni-plugin")
    env = install_package(root, "uni-kg", "uni_kg", '''
        """The university KG and its questions, as a plug-in."""
        from functools import partial
        from pathlib import Path

        from sparqlab.data import Dataset, read_questions, register_dataset
        from sparqlab.kg import register_file_kg

        HERE = Path(__file__).parent
        register_file_kg("university", HERE / "university.ttl")
        register_dataset(Dataset("uni-qa", "university", "questions over the university KG",
                                 {split: partial(read_questions, HERE / f"{split}.jsonl") for split in ("train", "test")}))
    ''', {"sparqlab.kgs": "university", "sparqlab.datasets": "university"},
        data={name: HERE / name for name in ("university.ttl", "train.jsonl", "test.jsonl")})
    return {**env, "SPARQLAB_RUNS": str(root / "runs"), "SPARQLAB_CACHE": str(root / "cache"), "HF_HUB_OFFLINE": "1"}


METHOD_RUNS = {
    "direct": ["-m", "standin-schema-rules"],
    "spinach": ["-m", "standin-agent"],
    "saga": ["-m", "standin-agent"],
    # generator_share=0: the stand-in answers none of the 10 training questions it does not remember, so a gate
    # labelled on those alone would see one class (docs/adding-a-dataset.md)
    "ggc": ["-m", "standin-knn", "--model-roles", "corrector=standin-corrector", "-o", "gate.backend=tfidf",
            "-o", "generator_share=0"],
    "desq": ["-m", "standin-desq", "-o", "embedder=hashing"],
}


def _run_folder(runs: Path, experiment: str) -> Path:
    folders = [p.parent for p in (runs / experiment).glob("*/config.json")]
    assert len(folders) == 1, folders
    return folders[0]


def _train_ids() -> set[str]:
    return {json.loads(line)["id"] for line in (HERE / "train.jsonl").read_text().splitlines()}


@pytest.mark.slow
@pytest.mark.parametrize("method", list(METHOD_RUNS))
def test_every_method_runs_on_a_plugin_kg(plugin_env, method):
    runs = Path(plugin_env["SPARQLAB_RUNS"])
    ran = sparqlab("run", method, "-d", "uni-qa", "-e", f"uni-{method}", "--concurrency", "2", *METHOD_RUNS[method],
                   env=plugin_env)
    assert ran.returncode == 0, ran.stderr
    folder = _run_folder(runs, f"uni-{method}")
    metrics = json.loads((folder / "metrics.json").read_text())
    assert metrics["kg"] == "university" and metrics["n_done"] == 10
    traces = (folder / "traces.jsonl").read_text()
    assert "uo:" in traces  # the prompts speak the KG's own prefixes
    listing = "professor (uo:Professor), subclass of person (uo:Person)"
    if method not in ("desq", "ggc"):  # the agents' and direct prompts list the schema with its class hierarchy
        assert listing in traces
    if method == "ggc":  # GGC's prompts are appendix B's: the schema listing is an option, off by default
        assert listing not in traces
    described = json.loads((folder / "config.json").read_text())["method"]
    if method == "ggc":  # trained on the KG's own train split, with its own conventions, no option given
        assert described["config"]["train_dataset"] is None and described["config"]["variant"] is None
        assert {"gate", "conventions"} <= set(described["artifacts"])
        gate_runs = [p.parent for p in runs.glob("ggc-gate-data-*/*/predictions.jsonl")]
        assert len(gate_runs) == 1
        gate_ids = {json.loads(line)["id"] for line in (gate_runs[0] / "predictions.jsonl").read_text().splitlines()}
        assert gate_ids == _train_ids()
        assert "over the university knowledge graph" in traces and "about films" not in traces
    if method == "desq":
        assert described["config"]["train_dataset"] is None and "examples" in described["artifacts"]
        examples = list(Path(plugin_env["SPARQLAB_CACHE"]).glob("artifacts/desq-examples-*/examples.jsonl"))
        assert len(examples) == 1
        example_ids = {json.loads(line)["id"] for line in examples[0].read_text().splitlines()}
        assert example_ids and example_ids <= _train_ids()
        assert "keep the prefix in front of the placeholder, as in uo:uri1" in traces


@pytest.mark.slow
def test_plugin_dataset_is_listed_and_genop_evaluates_its_queries(plugin_env, tmp_path):
    listed = sparqlab("data", "list", env=plugin_env)
    assert listed.returncode == 0 and "uni-qa" in listed.stdout
    questions = tmp_path / "genop.jsonl"  # GenOp evaluates the query a question gives: here the gold SELECT query
    selects = [json.loads(line) for line in (HERE / "test.jsonl").read_text().splitlines()]
    questions.write_text("".join(json.dumps({**q, "query": q["gold_sparql"]}) + "\n"
                                 for q in selects if q["answer_form"] == "select"))
    ran = sparqlab("run", "genop", "-d", str(questions), "-e", "uni-genop", "-m", "standin-echo", env=plugin_env)
    assert ran.returncode == 0, ran.stderr
    metrics = json.loads((_run_folder(Path(plugin_env["SPARQLAB_RUNS"]), "uni-genop") / "metrics.json").read_text())
    assert metrics["kg"] == "university" and metrics["f1"] == 1.0


@pytest.mark.slow
def test_training_on_another_kgs_questions_is_refused_naming_the_option(plugin_env):
    other = sparqlab("run", "ggc", "-d", "uni-qa", "-e", "uni-other", "-o", "train_dataset=mcqa-movies",
                     *METHOD_RUNS["ggc"], env=plugin_env)
    assert other.returncode == 1
    assert "mcqa-movies is a dataset of the movies KG but this run is on university" in other.stderr
    assert "-o allow_other_kg=true" in other.stderr
