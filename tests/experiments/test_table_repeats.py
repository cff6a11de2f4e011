"""A grid with `repeats: 3`: each cell runs three seeded repeats and writes a run group; `sparqlab table` prints
mean ± sd with the two-level interval and the number of repeats, and compares with the baseline by the paired
two-level bootstrap (significant only when that interval excludes 0); `runs compare` of two groups prints it."""

from __future__ import annotations

import json
import statistics

import numpy as np
import pytest
from matplotlib.container import ErrorbarContainer

from sparqlab.cli import main
from sparqlab.experiments.executors import run_local
from sparqlab.experiments.grid import GridError, load_grid
from sparqlab.experiments.table import build_table, render

GRID = """\
    name: reps
    repeats: 3
    run: {{limit: 10, temperature: 0.8, cache_path: {cache}, model: standin-keyword-rules}}
    methods:
      rules: {{method: direct}}
      hot: {{method: direct, temperature: 2.0}}
    datasets:
      metaqa-1hop: {{dataset: metaqa-1hop}}
    """


@pytest.fixture
def finished(write_grid):
    grid = load_grid(write_grid(GRID))
    run_local(grid, grid.cells, workers=0)
    return grid


def test_repeated_cells_are_groups_shown_with_their_spread(finished, isolated_runs, capsys):
    assert len(finished.cells) == 6 and {c.repeat for c in finished.cells} == {0, 1, 2}
    seeds = sorted(c.run_config().seed for c in finished.cells if c.row == "rules")
    assert seeds == [0, 1, 2]
    table = build_table(finished, baseline="rules")
    groups = [json.loads(path.with_name("metrics.json").read_text()) for path in isolated_runs.glob("reps/*/group.json")]
    assert len(groups) == 2 and all(g["n_repeats"] == 3 and g["complete"] for g in groups)
    for group in groups:
        members = [[json.loads(line) for line in (isolated_runs / "reps" / name / "predictions.jsonl").read_text()
                    .splitlines()] for name in group["members"]]
        per_run = [statistics.fmean(0.0 if r["predicted_answers"] is None else r["f1"] for r in run) for run in members]
        row = table.frame[table.frame["run"] == group["members"][0]]["row"].iloc[0]
        line = table.frame[(table.frame["row"] == row) & (table.frame["measure"] == "f1")].iloc[0]
        assert line["value"] == pytest.approx(statistics.fmean(per_run), abs=1e-9)
        assert line["sd"] == pytest.approx(statistics.stdev(per_run), abs=1e-9)
        assert [line["ci_low"], line["ci_high"]] == pytest.approx(group["scores"]["f1"]["interval"], abs=1e-9)
        assert table.value(row, "metaqa-1hop", "repeats") == 3
    text = render(table)
    hot = next(line for line in text.splitlines() if line.startswith("hot"))
    assert " ± " in hot and "[" in hot, "mean ± sd [interval]"
    diff = table.frame[(table.frame["row"] == "hot [standin]") & (table.frame["measure"] == "f1_diff")].iloc[0]
    excludes_zero = diff["ci_low"] > 0 or diff["ci_high"] < 0
    assert table.value("hot [standin]", "metaqa-1hop", "significant") == float(excludes_zero)

    from sparqlab.plots import repeat_bars, subplots

    ax = repeat_bars({f"group {index}": group for index, group in enumerate(groups)}, "f1", ax=subplots()[1])
    bars = next(container for container in ax.containers if isinstance(container, ErrorbarContainer))
    segments = bars.lines[2][0].get_segments()
    assert [bound for seg in segments for bound in (seg[0][1], seg[1][1])] == pytest.approx(
        [100 * bound for group in groups for bound in group["scores"]["f1"]["interval"]])
    assert "two-level bootstrap CI over questions and repeats" in ax.get_xlabel().replace("\n", " ")

    assert main(["runs", "compare", *(group["group"] for group in groups)]) == 0
    out = capsys.readouterr().out
    assert "paired over questions and repeats on 10 questions" in out and "paired two-level bootstrap CI" in out
    assert "majority answer set differs on" in out


def test_paired_repeats_recomputed_independently():
    from sparqlab.eval.repeats import paired_repeats

    def run(values):
        return [{"id": f"q{i}", "f1": v, "em": v == 1.0, "empty": False, "gold_answers": ["x"],
                 "predicted_answers": ["x"] if v == 1.0 else ["y"]} for i, v in enumerate(values)]

    a = [run([1, 0, 1, 0]), run([1, 1, 0, 0])]
    b = [run([1, 1, 1, 0]), run([1, 1, 1, 1]), run([0, 1, 1, 1])]
    compared = paired_repeats(a, b, "a", "b", ("f1",), resamples=500, seed=7)
    va, vb = np.array([[1, 1], [0, 1], [1, 0], [0, 0]], float), np.array([[1, 1, 0], [1, 1, 1], [1, 1, 1], [0, 1, 1]], float)
    rng = np.random.default_rng(7)
    questions = rng.integers(0, 4, size=(500, 4))
    ra, rb = rng.integers(0, 2, size=(500, 4, 2)), rng.integers(0, 3, size=(500, 4, 3))
    diffs = [np.mean([vb[questions[s, j], rb[s, j, r]] for j in range(4) for r in range(3)])
             - np.mean([va[questions[s, j], ra[s, j, r]] for j in range(4) for r in range(2)]) for s in range(500)]
    assert compared.differences["f1"]["mean"] == pytest.approx(vb.mean() - va.mean())
    assert compared.differences["f1"]["interval"] == pytest.approx(list(np.percentile(diffs, [2.5, 97.5])), abs=1e-12)
    # majority answers per question: a x, y (a tie: seed 0's), x, y; b x, x, x, x: they differ on q1 and q3
    assert compared.majority_differs == pytest.approx(2 / 4)


def test_repeats_and_shards_do_not_combine(write_grid):
    with pytest.raises(GridError, match="repeats and shards do not combine"):
        load_grid(write_grid(GRID.replace("rules: {{method: direct}}", "rules: {{method: direct, shards: 2}}")))
    with pytest.raises(GridError, match="repeats must be >= 1"):
        load_grid(write_grid(GRID.replace("repeats: 3", "repeats: 0")))


def test_leaderboard_row_of_a_run_group(tmp_path):
    """A group of three (hand-made) runs over two db26 questions is one row: the mean over repeats of set_F, the
    sd between runs and the two-level interval; against a single run its ΔF uses the paired two-level bootstrap."""
    from sparqlab.eval.repeats import two_level_interval
    from sparqlab.text2sparql.editions import load_edition
    from sparqlab.text2sparql.leaderboard import build_leaderboard
    from sparqlab.text2sparql.metric import OfficialScore, record_scores

    questions = load_edition("db26")[:2]
    set_f = [[1.0, 0.5], [0.0, 0.5], [1.0, 1.0]]  # per repeat, per question
    group = tmp_path / "exp" / "direct-db26-x3"
    group.mkdir(parents=True)
    for index, values in enumerate([*set_f, [0.5, 0.5]]):
        member = tmp_path / "exp" / f"direct-db26-seed{index}"
        member.mkdir()
        lines = [{"id": q.id, "scores": record_scores(OfficialScore(v, v, v))} for q, v in zip(questions, values, strict=True)]
        (member / "predictions.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
        (member / "manifest.json").write_text("{}")
    (group / "group.json").write_text(json.dumps({"name": group.name, "experiment": "exp", "seeds": [0, 1, 2],
                                                   "members": [f"direct-db26-seed{i}" for i in range(3)]}))
    table = build_leaderboard(["db26"], runs={"single": tmp_path / "exp" / "direct-db26-seed3", "rep": group},
                              baseline="single [sparqlab]")
    line = table.frame[(table.frame["row"] == "rep [sparqlab]") & (table.frame["dataset"] == "db26")
                       & (table.frame["measure"] == "set_F")].iloc[0]
    means = [statistics.fmean(values) for values in set_f]
    assert line["value"] == pytest.approx(statistics.fmean(means)) and line["sd"] == pytest.approx(statistics.stdev(means))
    assert [line["ci_low"], line["ci_high"]] == pytest.approx(list(two_level_interval(np.array(set_f).T)))
    assert "±" in render(table).split("rep [sparqlab]")[1].splitlines()[0]
    assert table.value("rep [sparqlab]", "db26", "f1_diff") == pytest.approx(statistics.fmean(means) - 0.5)
