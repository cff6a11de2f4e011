"""`sparqlab run --repeats N`: N runs with seeds seed, seed+1, ... and one run group whose metrics.json is
recomputed here independently from the five prediction files; a rerun replays every repeat from the cache;
`runs list` shows the group as one row; pass@k is the unbiased estimator."""

import json
import math
import statistics
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from sparqlab.cli import main

REPEATS = 5
COMMAND = ["run", "direct", "-d", "metaqa-1hop", "--limit", "40", "-m", "standin-keyword-rules", "--temperature",
           "0.8", "--repeats", str(REPEATS), "-e", "rep", "--progress", "false"]


@pytest.fixture(scope="module")
def group_run(tmp_path_factory, movies_store):
    """The done-when command once, in a tmp runs root with its own response cache."""
    folder = tmp_path_factory.mktemp("repeats")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SPARQLAB_RUNS", str(folder / "runs"))
        cache = ["--cache-path", str(folder / "responses.sqlite")]
        assert main([*COMMAND, *cache]) == 0
        group = next((folder / "runs" / "rep").glob("*/group.json")).parent
        yield folder, group, cache


@pytest.fixture
def runs_env(group_run, monkeypatch):
    monkeypatch.setenv("SPARQLAB_RUNS", str(group_run[0] / "runs"))
    return group_run


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def member_predictions(group: Path) -> list[list[dict]]:
    listed = json.loads((group / "group.json").read_text())
    return [lines_of(group.parent / name / "predictions.jsonl") for name in listed["members"]]


def test_five_runs_with_consecutive_seeds_and_one_group(runs_env, capsys):
    folder, group, _ = runs_env
    listed = json.loads((group / "group.json").read_text())
    assert listed["seeds"] == list(range(REPEATS)) and len(listed["members"]) == REPEATS
    seeds = [json.loads((group.parent / name / "config.json").read_text())["run"]["models"]["model_params"]["seed"]
             for name in listed["members"]]
    assert seeds == list(range(REPEATS)), "each member is an ordinary run with its own seed"
    assert len(set(listed["members"])) == REPEATS, "the seed is part of each run's id"
    assert main(["runs", "list", "-e", "rep"]) == 0
    rows = capsys.readouterr().out.splitlines()[1:]
    assert len(rows) == 1 and group.name in rows[0] and "±" in rows[0] and f"{REPEATS} repeats" in rows[0]
    assert "[standin]" in rows[0]


def judged_f1_em(record: dict) -> tuple[float, float]:
    """A question's (F1, EM) as judged: no answer obtained scores 0 (every metaqa-1hop question has gold)."""
    if record["predicted_answers"] is None:
        return 0.0, 0.0
    return float(record["f1"]), float(bool(record["em"]))


def test_group_metrics_recomputed_from_the_prediction_files(runs_env):
    _, group, _ = runs_env
    metrics = json.loads((group / "metrics.json").read_text())
    runs = member_predictions(group)
    ids = [r["id"] for r in runs[0]]
    by_id = [{r["id"]: r for r in run} for run in runs]
    for index, key in enumerate(("f1", "em")):
        per_run = [statistics.fmean(judged_f1_em(r)[index] for r in run) for run in runs]
        score = metrics["scores"][key]
        assert score["mean"] == pytest.approx(sum(per_run) / REPEATS, abs=1e-9)
        mean = sum(per_run) / REPEATS
        assert score["sd"] == pytest.approx(math.sqrt(sum((v - mean) ** 2 for v in per_run) / (REPEATS - 1)),
                                            abs=1e-9)
        values = np.array([[judged_f1_em(run[q])[index] for run in by_id] for q in ids])
        rng = np.random.default_rng(0)
        questions = rng.integers(0, len(ids), size=(2000, len(ids)))
        repeats = rng.integers(0, REPEATS, size=(2000, len(ids), REPEATS))
        means = [sum(values[questions[b, j], repeats[b, j, r]] for j in range(len(ids)) for r in range(REPEATS))
                 / (len(ids) * REPEATS) for b in range(2000)]
        assert score["interval"] == pytest.approx(list(np.percentile(means, [2.5, 97.5])), abs=1e-9)
    assert metrics["scores"]["f1"]["sd"] > 0, "the stochastic stand-in varies between seeds"
    exact = [[judged_f1_em(run[q])[1] for run in by_id] for q in ids]
    assert metrics["pass@5"]["value"] == pytest.approx(statistics.fmean(float(any(e)) for e in exact), abs=1e-9)
    majority = []
    for q in ids:
        answers = [frozenset(run[q]["predicted_answers"]) if run[q]["predicted_answers"] is not None else None
                   for run in by_id]
        counts = Counter(answers)
        chosen = next(i for i, a in enumerate(answers) if counts[a] == max(counts.values()))
        majority.append(judged_f1_em(by_id[chosen][q])[1])
    assert metrics["majority@5"]["value"] == pytest.approx(statistics.fmean(majority), abs=1e-9)
    assert metrics["model_is_standin"] is True


def test_rerun_replays_every_repeat_with_zero_model_calls(runs_env, capsys):
    folder, group, cache = runs_env
    before = json.loads((group / "metrics.json").read_text())
    middle = group.parent / json.loads((group / "group.json").read_text())["members"][2]
    (middle / "predictions.jsonl").unlink()  # this repeat is answered again: from the cache, as the same run
    capsys.readouterr()
    assert main([*COMMAND, *cache, "--cache", "replay"]) == 0
    out = capsys.readouterr().out
    assert out.count(", 0 answered now") == REPEATS - 1 and "(seed 2, 40 answered now)" in out
    assert json.loads((middle / "metrics.json").read_text())["model_cache_last_session"]["calls"] == 0
    after = json.loads((group / "metrics.json").read_text())
    assert {k: v for k, v in after.items() if k != "updated"} == {k: v for k, v in before.items() if k != "updated"}


def test_pass_at_k_is_the_unbiased_estimator_and_bad_k_or_repeats_are_refused(capsys):
    from sparqlab.eval.metrics import pass_at_k

    n, c, k = 5, 2, 3
    assert pass_at_k(n, c, k) == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k)) == pytest.approx(0.9)
    with pytest.raises(ValueError, match="k must be between 1 and the number of repeats n=5"):
        pass_at_k(5, 2, 6)
    assert main([*COMMAND[:-6], "--repeats", "0"]) != 0
    assert "repeats must be >= 1" in capsys.readouterr().err


def test_the_stochastic_standin_is_a_seeded_draw():
    from sparqlab.llm import ChatRequest
    from sparqlab.llm.standins import sampled

    candidates = ["a", "b", "c", "d"]
    draws = {seed: sampled(candidates, ChatRequest.build("standin-x", "q", temperature=0.8, seed=seed))
             for seed in range(20)}
    assert draws == {seed: sampled(candidates, ChatRequest.build("standin-x", "q", temperature=0.8, seed=seed))
                     for seed in range(20)}, "deterministic given the seed"
    assert len(set(draws.values())) > 1, "seeds draw different candidates"
    assert sampled(candidates, ChatRequest.build("standin-x", "q", temperature=0.0, seed=3)) == "a"


def test_show_and_report_of_the_group_name_the_questions_that_flip(runs_env, capsys, tmp_path):
    _, group, _ = runs_env
    by_id = [{r["id"]: r for r in run} for run in member_predictions(group)]
    flipping = [q for q in by_id[0] if len({json.dumps(sorted(run[q]["predicted_answers"] or []))
                                            if run[q]["predicted_answers"] is not None else None for run in by_id}) > 1]
    assert flipping, "some questions get other answers from other seeds"
    capsys.readouterr()
    assert main(["runs", "show", group.name]) == 0
    out = capsys.readouterr().out
    assert f"{len(flipping)} questions flip between repeats" in out and "pass@5" in out and "not an LLM result" in out
    assert main(["runs", "report", group.name, "-o", str(tmp_path / "group.html")]) == 0
    page = (tmp_path / "group.html").read_text()
    assert f"Questions that flip between repeats ({len(flipping)})" in page
    assert all(f"<b>{q}</b>" in page for q in flipping) and "[standin]" in page


def test_a_group_that_lost_a_member_is_listed_unreadable(tmp_path, capsys):
    group = tmp_path / "exp" / "g-x2"
    group.mkdir(parents=True)
    (group / "group.json").write_text(json.dumps({"name": "g-x2", "experiment": "exp", "seeds": [0, 1],
                                                  "members": ["gone-0", "gone-1"]}))
    with pytest.warns(UserWarning, match="lacks its members"):
        assert main(["runs", "list", "--root", str(tmp_path)]) == 0
    row = capsys.readouterr().out.splitlines()[1]
    assert "g-x2" in row and "unreadable" in row
