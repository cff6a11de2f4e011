"""The run id names what the answers depend on: the KG's content, the dataset file's content, the KG endpoint and
the model endpoint. An edited file is a new run (never a silent resume of the old folder); an endpoint run and an
embedded run of the same KG are two runs; so are an HTTP-served and an in-process model."""

from __future__ import annotations

import json
import os

import pytest
from runs_helpers import EX, LookupMethod, tiny_questions

from sparqlab.cli import main
from sparqlab.engines.oxigraph_server import serve_store
from sparqlab.runs import RunConfig, run
from sparqlab.runs.config import identity


def write_kg(path, n: int, value: str = "v") -> None:
    path.write_text("".join(f'<{EX}e{i}> <{EX}value> "{value}{i}" .\n' for i in range(n)), encoding="utf-8")


def write_questions(path, questions) -> None:
    path.write_text("".join(json.dumps(q.to_dict()) + "\n" for q in questions), encoding="utf-8")


@pytest.fixture
def files(tmp_path):
    kg, questions = tmp_path / "tiny.nt", tmp_path / "questions.jsonl"
    write_kg(kg, 4)
    write_questions(questions, tiny_questions(4, gold="sparql"))
    return kg, questions


def settings(root, kg, questions, **more):
    return RunConfig(experiment="ids", output_root=str(root), progress=False, kg=str(kg), dataset=str(questions),
                     **more)


def bump_mtime(path) -> None:
    """An edit a coarse file-system clock could miss: move the modification time on explicitly."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))


def test_editing_the_kg_file_is_a_new_run_with_the_new_answers(root, files):
    kg, questions = files
    first = run(LookupMethod(), config=settings(root, kg, questions))
    assert run(LookupMethod(), config=settings(root, kg, questions)).answered == 0, "unchanged files resume"
    write_kg(kg, 4, value="w")  # same size, other values: the gold answers change with the KG
    bump_mtime(kg)
    edited = run(LookupMethod(), config=settings(root, kg, questions))
    assert edited.run_id != first.run_id and edited.answered == 4
    gold = [json.loads(line)["gold_answers"] for line in (edited.run_dir / "predictions.jsonl").open()]
    assert sorted(gold) == [[f"w{i}"] for i in range(4)]


def test_editing_the_refinement_beside_the_kg_file_is_a_new_run(root, files, capsys):
    kg, questions = files
    first = run(LookupMethod(), config=settings(root, kg, questions))
    (kg.parent / "tiny.kg.yaml").write_text("notes: Values are short codes.\n", encoding="utf-8")
    refined = run(LookupMethod(), config=settings(root, kg, questions))
    assert refined.run_id != first.run_id and refined.answered == 4, "the prompts' profile changed: a new run"
    identities = [json.loads((r.run_dir / "config.json").read_text())["identity"] for r in (first, refined)]
    assert identities[0]["kg"] == identities[1]["kg"] and identities[0]["kg_profile"] != identities[1]["kg_profile"]
    assert main(["runs", "list", "--root", str(root)]) == 0
    assert sum("kg profile" in line for line in capsys.readouterr().out.splitlines()) == 1


def test_editing_the_dataset_file_is_a_new_run(root, files):
    kg, questions = files
    first = run(LookupMethod(), config=settings(root, kg, questions))
    edited = tiny_questions(4, gold="sparql")
    edited[3].metadata["qtype"] = "changed"  # not even the text: any field of a question counts
    write_questions(questions, edited)
    again = run(LookupMethod(), config=settings(root, kg, questions))
    assert again.run_id != first.run_id and again.answered == 4


def test_an_endpoint_run_and_an_embedded_run_of_the_same_kg_are_two_runs(root, files, tmp_path):
    import pyoxigraph

    kg, questions = files
    store = pyoxigraph.Store(str(tmp_path / "store"))
    store.load(kg.read_bytes(), format=pyoxigraph.RdfFormat.N_TRIPLES)
    store.flush()
    del store
    embedded = run(LookupMethod(), config=settings(root, tmp_path / "store", questions))
    with serve_store(tmp_path / "store") as url:
        served = run(LookupMethod(), config=settings(root, url, questions))
    assert served.run_id != embedded.run_id
    assert (served.metrics["f1"], embedded.metrics["f1"]) == (1.0, 1.0), "the same answers, two runs"
    saved = json.loads((served.run_dir / "config.json").read_text())
    assert saved["identity"]["kg"] == f"endpoint:{url}"


def test_a_served_model_and_an_in_process_model_are_two_runs(monkeypatch):
    in_process = RunConfig(model="standin-echo").resolved(needs_model=True)
    served = RunConfig(model="standin-echo", model_url="http://127.0.0.1:9/v1").resolved(needs_model=True)
    assert in_process.model_url is None and identity(in_process, {}, "") != identity(served, {}, "")
    monkeypatch.setenv("SPARQLAB_MODEL_URL", "http://gpu1:8000/v1")
    monkeypatch.setenv("SPARQLAB_MODEL", "my-llama")
    resolved = RunConfig(model_roles={"corrector": "standin-corrector"}).resolved(needs_model=True)
    assert (resolved.model, resolved.model_url) == ("my-llama", "http://gpu1:8000/v1"), "the environment, once"
    assert resolved.model_roles["corrector"].url is None, "a stand-in role stays in process"
    assert RunConfig().resolved(needs_model=False).model is None, "a method without a model takes none"


def test_runs_list_says_what_changed_within_a_config_family(root, files, capsys):
    kg, questions = files
    run(LookupMethod(), config=settings(root, kg, questions))
    write_kg(kg, 4, value="w")
    bump_mtime(kg)
    run(LookupMethod(), config=settings(root, kg, questions))
    run(LookupMethod(), config=settings(root, kg, questions, limit=2))
    assert main(["runs", "list", "--root", str(root)]) == 0
    changed = [line for line in capsys.readouterr().out.splitlines() if "lookup" in line]
    assert len(changed) == 3
    assert sum("kg content" in line for line in changed) == 1 and sum("limit" in line for line in changed) == 1


def test_kg_client_options_and_the_gold_snapshot_setting_stay_out_of_the_id_but_the_snapshot_digest_enters():
    base = RunConfig(kg="movies", dataset="metaqa-1hop")
    client = base.replace(kg_options={"workers": 4, "max_in_flight": 2, "retry": {"budget_retries": 1}},
                          gold_snapshot="data/gold_snapshots/metaqa-1hop.test.movies.json")
    assert identity(client, {}, "", "kg", "profile") == identity(base, {}, "", "kg", "profile")
    assert identity(base.replace(kg_options={"timeout_s": 5}), {}, "") != identity(base, {}, "")
    assert identity(base, {}, "", gold_snapshot="abc") != identity(base, {}, "", gold_snapshot=None)
