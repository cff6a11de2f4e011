"""`runs compare` says which KG each run used and refuses to pair questions whose gold answers differ between
the runs (here: the KG file was edited between them), naming how many and why."""

import re
import shutil
from pathlib import Path

from sparqlab.cli import main
from sparqlab.methods import DirectSparql
from sparqlab.runs import RunConfig, run
from sparqlab.runs.gold_check import gold_agreement

MUSIC = Path(__file__).parents[1] / "end_to_end" / "own_kg" / "music"


def test_runs_on_an_edited_kg_are_paired_only_where_their_gold_agrees(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    kg = tmp_path / "music.ttl"
    shutil.copy(MUSIC / "music.ttl", kg)
    settings = dict(experiment="edited", kg=str(kg), dataset=str(MUSIC / "test.jsonl"), limit=3, progress=False,
                    model="standin-keyword-rules", cache="off")
    before = run(DirectSparql(), config=RunConfig(**settings))
    text = kg.read_text()
    kg.write_text(re.sub(r'(mr:IronMoss a mo:Album .*mo:releaseYear )"\d+"', r'\1"1901"', text))  # music-40's answer
    after = run(DirectSparql(), config=RunConfig(**settings))
    assert before.run_id != after.run_id, "the KG's content is in the run id"

    assert main(["runs", "compare", before.run_id, after.run_id]) == 0
    out = capsys.readouterr().out
    kgs = re.findall(r"^KG of (\S+): (file:\w+)$", out, re.M)  # each run named by its folder, never "A"/"B"
    assert [name for name, _ in kgs] == [f"edited/{before.run_id}", f"edited/{after.run_id}"]
    assert kgs[0][1] != kgs[1][1]
    assert "WARNING: gold answers differ for 1 of 3 paired questions (e.g. 'music-40')" in out
    assert f"why: KG content ({kgs[0][1]} vs {kgs[1][1]})" in out
    assert "paired comparison on 2 questions" in out


def test_a_changed_gold_query_is_blamed_on_the_dataset_file():
    a = [{"id": "q1", "gold_answers": ["x"], "gold_sparql": "SELECT 1"}, {"id": "q2", "gold_answers": ["y"]}]
    b = [{"id": "q1", "gold_answers": ["z"], "gold_sparql": "SELECT 2"}, {"id": "q2", "gold_answers": ["y"]}]
    agreement = gold_agreement(a, b, ({"kg": "k", "gold_snapshot": None}, {"kg": "k", "gold_snapshot": None}))
    assert (agreement.same, agreement.differ) == (["q2"], ["q1"])
    assert agreement.causes == ["dataset file (the gold query of 1 of them differs, e.g. 'q1')"]
    assert gold_agreement(a[1:], b[1:]).warning() is None
