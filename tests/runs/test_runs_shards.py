"""Sharding and merging: the shards of a run merge into exactly what the unsharded run produces."""

import json

import pytest
from runs_helpers import EchoChatMethod, TinyKG, tiny_questions

from sparqlab.core.jsonl import read_jsonl, write_jsonl
from sparqlab.runs import MergeError, RunConfig, merge_shards, run, select_shard
from sparqlab.runs.store import RunStore

TIMING = {"latency_s", "model_latency_s"}
VOLATILE_METRICS = {"experiment", "wall_time_s", "updated", "latency_s", "usage", "model_cache_last_session", "merged_from",
                    "prepare", "prefix_cache"}
"""``prepare`` differs by design: every shard prepares once, so a merge reports the shards' summed cost."""


def config(root, experiment, **overrides):
    return RunConfig(experiment=experiment, output_root=str(root), model="standin-echo", progress=False, cache="off",
                     **overrides)


def run_shards(root, experiment, questions, num_shards, only=None):
    results = []
    for index in only if only is not None else range(num_shards):
        results.append(run(EchoChatMethod(), questions, config(root, experiment, shard_index=index,
                                                               num_shards=num_shards), kg=TinyKG(len(questions))))
    return results


def without(record, keys):
    """``record`` without ``keys``, and without the prompt tokens a prefix cache would recompute: they depend on
    the requests sent before, which differ between one run and its shards."""
    kept = {k: v for k, v in record.items() if k not in keys}
    if isinstance(kept.get("tokens"), dict):
        kept["tokens"] = {k: v for k, v in kept["tokens"].items() if k != "prompt_recomputed"}
    if isinstance(kept.get("role_usage"), dict):
        kept["role_usage"] = {role: {**usage, "tokens": without(usage, ())["tokens"]}
                              if isinstance(usage, dict) and isinstance(usage.get("tokens"), dict) else usage
                              for role, usage in kept["role_usage"].items()}
    return kept


def test_select_shard_is_a_partition():
    questions = tiny_questions(10)
    shards = [select_shard(questions, i, 3) for i in range(3)]
    assert [len(s) for s in shards] == [4, 3, 3]
    assert sorted(q.id for s in shards for q in s) == sorted(q.id for q in questions)
    assert select_shard(questions, 1, 3) == select_shard(list(questions), 1, 3)


def test_shards_plus_merge_equal_the_unsharded_run(root):
    questions = tiny_questions(11)
    whole = run(EchoChatMethod(), questions, config(root, "whole"), kg=TinyKG(11))
    shards = run_shards(root, "sharded", questions, 3)

    assert {s.run_id for s in shards} == {whole.run_id}, "shards share the run id of the unsharded run"
    assert [s.run_dir.name for s in shards] == [f"{whole.run_id}-shard{i}of3" for i in range(3)]
    assert [s.metrics["n_questions"] for s in shards] == [4, 4, 3]

    report = merge_shards(root / "sharded" / whole.run_id)
    assert report.complete and report.problems() == []
    merged_dir = root / "sharded" / whole.run_id
    merged = list(read_jsonl(merged_dir / "predictions.jsonl"))
    single = {r["id"]: r for r in read_jsonl(whole.run_dir / "predictions.jsonl")}
    assert [r["id"] for r in merged] == [q.id for q in questions], "merged in question order"
    assert {r["id"]: without(r, TIMING) for r in merged} == {k: without(r, TIMING) for k, r in single.items()}
    assert sorted(r["id"] for r in read_jsonl(merged_dir / "traces.jsonl")) == sorted(single)

    merged_metrics = json.loads((merged_dir / "metrics.json").read_text())
    assert without(merged_metrics, VOLATILE_METRICS) == without(whole.metrics, VOLATILE_METRICS)
    assert merged_metrics["prepare"]["artifacts"] == whole.metrics["prepare"]["artifacts"]
    assert merged_metrics["usage"]["model_calls"] == whole.metrics["usage"]["model_calls"]
    assert merged_metrics["merged_from"] == 3
    manifest = json.loads((merged_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["question_ids"] == [q.id for q in questions]
    assert json.loads((merged_dir / "config.json").read_text())["run"]["execution"]["num_shards"] == 1

    with pytest.raises(MergeError, match="already holds predictions"):
        merge_shards(merged_dir)
    assert merge_shards(shards[0].run_dir, overwrite=True).complete


def test_merge_names_missing_shards_and_unfinished_questions(root):
    questions = tiny_questions(9)
    shards = run_shards(root, "partial", questions, 3, only=[0, 2])
    run_id = shards[0].run_id
    lines = (shards[1].run_dir / "predictions.jsonl").read_text().splitlines(keepends=True)
    (shards[1].run_dir / "predictions.jsonl").write_text("".join(lines[:1]))

    with pytest.raises(MergeError) as error:
        merge_shards(root / "partial" / run_id)
    message = str(error.value)
    assert f"shard 1 of 3 is missing (no folder {run_id}-shard1of3)" in message
    assert "shard 2 has not finished 2 questions" in message

    report = merge_shards(root / "partial" / run_id, allow_incomplete=True)
    assert not report.complete and report.missing_shards == [1]
    assert report.metrics["complete"] is False
    assert report.metrics["n_questions"] == 9 and report.metrics["n_done"] == 4


def test_merge_refuses_overlapping_shards(root):
    questions = tiny_questions(6)
    shards = run_shards(root, "overlap", questions, 2)
    stolen = next(read_jsonl(shards[0].run_dir / "predictions.jsonl"))
    target = shards[1].run_dir / "predictions.jsonl"
    write_jsonl(target, [*read_jsonl(target), stolen])
    with pytest.raises(MergeError, match="overlap|not in its question list"):
        merge_shards(shards[0].run_dir)


def test_merge_waits_for_running_shards(root):
    shards = run_shards(root, "busy", tiny_questions(4), 2)
    with RunStore(shards[1].run_dir) as writer:
        writer.open()
        with pytest.raises(MergeError, match=r"shard\(s\) 1 of .* are still running"):
            merge_shards(shards[0].run_dir)
    assert merge_shards(shards[0].run_dir).complete


def test_merge_refuses_a_damaged_shard_line_as_resume_would(root):
    shards = run_shards(root, "damaged", tiny_questions(4), 2)
    target = shards[1].run_dir / "predictions.jsonl"
    records = list(read_jsonl(target))
    records[1]["f1"] = 50  # a hand edit resume sets aside: merged, it would be averaged into the run's F1
    write_jsonl(target, records)
    with pytest.raises(MergeError, match=rf"1 damaged line\(s\) in {target}:\n  {target}:2: f1 is 50, outside "
                                         r"\[0, 1\]\nresume that shard"):
        merge_shards(shards[0].run_dir)
    assert not (root / "damaged" / shards[0].run_id).exists(), "nothing merged"
