"""`sparqlab leaderboard`: the published averages from the shipped files, CIs, paired tests, run rows."""

from __future__ import annotations

import json
import shutil

import pytest

from sparqlab.experiments.table import render
from sparqlab.text2sparql.leaderboard import build_leaderboard, published_folder
from sparqlab.text2sparql.result_sets import read_published_scores


def _published_averages(dataset):
    for folder in sorted(published_folder(dataset).iterdir()):
        evaluation = next(iter(sorted(folder.glob("*_eval.json")) + sorted(folder.glob("*_results.json"))), None)
        if evaluation is not None:
            yield folder.name, read_published_scores(evaluation).averages


@pytest.mark.parametrize("dataset", ["ck25", "db25", "ck26", "db26"])
def test_means_are_the_published_averages(dataset):
    table = build_leaderboard([dataset])
    checked = 0
    for team, averages in _published_averages(dataset):
        for measure, value in averages.items():
            if measure == "languages":
                for language, block in value.items():
                    for name, number in block.items():
                        assert table.value(team, f"{dataset}-{language}", name) == number, (team, language, name)
                continue
            assert table.value(team, dataset, measure) == value, (team, measure)
            checked += 1
    assert checked >= 3


def test_ck25_ranks_as_the_challenge_did_and_refuses_the_copied_result_set():
    table = build_leaderboard(["ck25"])
    assert table.rows[:3] == ["INFAI", "IIS-Q", "IIS-L"]  # the Corporate category's podium, by set_F_ndcg
    assert table.value("INFAI", "ck25", "set_F") == pytest.approx(0.4361, abs=1e-4)
    assert any("INFAI" in note and "a copy of the gold" in note for note in table.notes)
    text = render(table, "text")
    assert "0.4472" in text and "0.4431" in text


def test_intervals_paired_tests_and_formats():
    table = build_leaderboard(["db25"], baseline="AIFB")
    row = table.frame[(table.frame["row"] == "FRANZ") & (table.frame["dataset"] == "db25")].set_index("measure")
    assert row.loc["set_F", "ci_low"] < row.loc["set_F", "value"] < row.loc["set_F", "ci_high"]
    assert row.loc["f1_diff", "value"] == pytest.approx(0.0733 - 0.4512, abs=1e-3) and row.loc["p_mcnemar", "value"] < 0.01
    assert "\\begin{tabular}" in render(table, "latex") and "| AIFB |" in render(table, "md")


def test_two_datasets_give_an_overall_group(tmp_path):
    table = build_leaderboard(["db25", "db26"])
    assert table.datasets[0] == "overall" and "db26-es" in table.datasets
    assert set(table.rows) == {"AIFB", "FRANZ", "INFAI-ETI-AND-FRIENDS-B"}


def test_a_sparqlab_run_is_an_extra_row(tmp_path):
    """A run's records carry the official scores; a fake run of two perfect answers is a row over those two."""
    from sparqlab.text2sparql.editions import load_edition
    from sparqlab.text2sparql.metric import OfficialScore, record_scores

    questions = load_edition("db26")[:2]
    run = tmp_path / "direct-db26-standin"
    run.mkdir()
    lines = [{"id": q.id, "scores": record_scores(OfficialScore(1.0, 1.0, 1.0))} for q in questions]
    (run / "predictions.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (run / "metrics.json").write_text(json.dumps({"model_is_standin": True}))
    table = build_leaderboard(["db26"], runs=[run])
    name = "direct-db26-standin [sparqlab] [standin]"
    assert table.rows[0] == name and table.value(name, "db26", "set_F") == 1.0
    assert any("covers 2 of 100 qnames" in note for note in table.notes)


def test_cli_prints_the_table_and_notes(capsys, tmp_path):
    from sparqlab.cli import main

    folder = tmp_path / "db25"
    shutil.copytree(published_folder("db25") / "FRANZ", folder / "FRANZ")
    assert main(["leaderboard", "db25", "--published-dir", f"db25={folder}", "--format", "md",
                 "--columns", "set_F"]) == 0
    captured = capsys.readouterr()
    assert "| FRANZ | 0.0733" in captured.out and "AIFB" not in captured.out
    assert "200/200 qnames agree" in captured.err
