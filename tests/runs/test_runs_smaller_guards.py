"""Issue 40's smaller run-level guards: a gold snapshot holding a string answer (its digest recomputed) is refused,
a question id "" is refused by the loader, NaN in question metadata is written as JSON null, `runs merge` compares
the shards' configurations and a merge killed midway leaves no half-written run folder."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap

import pytest
from runs_helpers import EchoChatMethod, LookupMethod, TinyKG, tiny_questions
from test_runs_shards import config, run_shards

from sparqlab.data.files import read_questions
from sparqlab.data.gold_snapshot import GoldSnapshot
from sparqlab.data.question import Question
from sparqlab.runs import MergeError, RunConfig, merge_shards, run, run_summary
from sparqlab.runs.results import InterruptedMergeWarning, list_runs
from sparqlab.runs.store import CONFIG, MANIFEST, PREDICTIONS, read_json, write_json


def test_a_gold_snapshot_with_a_string_answer_is_refused_even_with_its_digest_recomputed(tmp_path):
    snapshot = GoldSnapshot("d", None, "movies", "embedded", "exclude", "2026-12-05",
                            {"q1": {"query_digest": "0" * 16, "answers": ["Alien"]}})
    path = snapshot.save(tmp_path / "snap.json")
    assert GoldSnapshot.load(path).entries["q1"]["answers"] == ["Alien"]
    snapshot.entries["q1"]["answers"] = "Alien"  # would be scored letter by letter
    path.write_text(json.dumps(snapshot.to_json()), encoding="utf-8")  # digest recomputed: not "changed"
    with pytest.raises(ValueError, match=r"snap.json: entry 'q1': answers must be a list of answers"):
        GoldSnapshot.load(path)


def test_a_question_id_that_is_empty_is_refused_by_the_loader_and_the_runner(tmp_path, root):
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "a", "text": "x"}\n{"id": "", "text": "y"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"q.jsonl, line 2: 'id' must be a non-empty string, got ''"):
        read_questions(path)
    with pytest.raises(ValueError, match="'id' must be a non-empty string"):
        run(LookupMethod(), [Question(" ", "x", gold_answers=["v0"])], RunConfig(output_root=str(root)),
            kg=TinyKG(1))


def test_nan_in_question_metadata_is_written_as_null(root):
    questions = tiny_questions(2)
    questions[0].metadata.update(hops=math.nan, weight=math.inf, kind="a")
    result = run(LookupMethod(), questions, RunConfig(experiment="nan", output_root=str(root), progress=False),
                 kg=TinyKG(2))
    text = (result.run_dir / PREDICTIONS).read_text(encoding="utf-8")
    assert "NaN" not in text and "Infinity" not in text
    lines = [json.loads(line, parse_constant=lambda name: pytest.fail(f"bare {name} in the line"))
             for line in text.splitlines()]
    first = next(line for line in lines if line["id"] == questions[0].id)  # lines come in the order answered
    assert first["metadata"] == {"hops": None, "weight": None, "kind": "a"}


def test_merge_refuses_shards_run_with_different_configurations(root):
    shards = run_shards(root, "mixed", tiny_questions(4), 2)
    odd = shards[1].run_dir / CONFIG
    document = read_json(odd)
    document["method"]["calls"] = 3  # a shard run with another setting under the same folder name
    write_json(odd, document)
    with pytest.raises(MergeError, match=r"different configurations: .*shard1of2/config.json differs from "
                                         r".*shard0of2/config.json in method"):
        merge_shards(shards[0].run_dir)
    assert not (root / "mixed" / shards[0].run_id).exists()


def test_a_merge_killed_midway_leaves_no_hidden_run_and_the_next_merge_completes(root, tmp_path):
    shards = run_shards(root, "killed", tiny_questions(6), 2)
    target = root / "killed" / shards[0].run_id
    script = tmp_path / "merge_and_die.py"
    script.write_text(textwrap.dedent(f"""
        import os, signal
        import sparqlab.runs.merge as merge
        real = merge.write_json
        def write_json(path, data):
            if path.name == {MANIFEST!r}:
                os.kill(os.getpid(), signal.SIGKILL)  # killed after every other file, before the manifest
            real(path, data)
        merge.write_json = write_json
        merge.merge_shards({str(target)!r})
    """), encoding="utf-8")
    killed = subprocess.run([sys.executable, str(script)], env={**os.environ}, capture_output=True)
    assert killed.returncode == -signal.SIGKILL
    assert not target.exists()  # never a run folder without its manifest (on main: one `runs list` skipped)
    with pytest.warns(InterruptedMergeWarning, match=rf"interrupted merge of killed/{shards[0].run_id} left; run "
                                                     rf"`sparqlab runs merge killed/{shards[0].run_id}` again"):
        assert shards[0].run_id + "-shard0of2" in {row["run"] for row in list_runs(root)}

    report = merge_shards(target)
    assert report.complete and run_summary(target)["status"] == "complete"
    assert sorted(p.name for p in target.parent.iterdir() if p.name.startswith(".")) == []
    assert run_summary(target)["n_done"] == 6


def test_merge_over_an_earlier_merge_replaces_it_whole(root):
    shards = run_shards(root, "again", tiny_questions(4), 2)
    merge_shards(shards[0].run_dir)
    report = merge_shards(shards[0].run_dir, overwrite=True)
    assert report.complete and run_summary(report.target)["n_done"] == 4
    assert not (report.target.parent / f".{report.target.name}.merging").exists()
    unsharded = run(EchoChatMethod(), tiny_questions(4), config(root, "again"), kg=TinyKG(4))
    assert unsharded.answered == 0  # the merged folder is the unsharded run's own folder
