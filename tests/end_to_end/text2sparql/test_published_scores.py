"""Scoring the organisers' system result sets reproduces their published evaluations exactly, in both editions'
formats; a file that cannot be a system's output is refused; the strict convention differs where documented."""

from __future__ import annotations

import json
import shutil

import pytest

from sparqlab.core.paths import data_dir
from sparqlab.text2sparql.editions import load_edition
from sparqlab.text2sparql.metric import OfficialScore, summarise_official
from sparqlab.text2sparql.result_sets import (
    NotGenuine,
    compare_with_published,
    read_published_scores,
    score_result_set,
)

PUBLISHED = data_dir() / "text2sparql" / "published"

SHIPPED_PAIRS = [  # (dataset, team, system result set, evaluation): 2025 and 2026 formats
    ("ck25", "LABIC", "ck25_system_result_set.json", "ck25_eval.json"),
    ("db25", "AIFB", "db25_system_result_set.json", "db25_eval.json"),
    ("db25", "FRANZ", "db25_system_result_set.json", "db25_eval.json"),
    ("db26", "INFAI-ETI-AND-FRIENDS-B", "db26_pred_result_set.json", "db26_results.json"),
]


@pytest.mark.parametrize(("dataset", "team", "result_set", "evaluation"), SHIPPED_PAIRS)
def test_every_published_score_is_reproduced_exactly(dataset, team, result_set, evaluation):
    questions = load_edition(dataset)
    ours = score_result_set(PUBLISHED / dataset / team / result_set, questions)
    published = read_published_scores(PUBLISHED / dataset / team / evaluation)
    agreement = compare_with_published(ours, published)
    assert len(published.questions) == len(questions)
    assert agreement.differ == {} and len(agreement.agree) == len(questions)
    # every published average, per language too, to the last bit (numpy's mean as trec_eval aggregates)
    assert agreement.averages and all(p == o for p, o in agreement.averages.values()), agreement.averages
    assert any(row["set_F"] > 0 for row in ours["questions"].values())


def test_the_2025_edition_has_no_extra_term_per_language_but_2026_has():
    db25 = read_published_scores(PUBLISHED / "db25" / "AIFB" / "db25_eval.json")
    ck26 = read_published_scores(PUBLISHED / "ck26" / "INFAI-ETI-AND-FRIENDS-B" / "ck26_results.json")
    for published, year in ((db25, 2025), (ck26, 2026)):
        ours = summarise_official(published.questions, edition=year)
        for language, block in published.averages["languages"].items():
            assert ours["languages"][language]["set_F_ndcg"] == block["set_F_ndcg"], (year, language)
        other = summarise_official(published.questions, edition=2026 if year == 2025 else 2025)
        assert any(other["languages"][lang]["set_F_ndcg"] != block["set_F_ndcg"]
                   for lang, block in published.averages["languages"].items())


@pytest.mark.parametrize("path", sorted(PUBLISHED.glob("*/*/*_eval.json")) + sorted(PUBLISHED.glob("*/*/*_results.json")),
                         ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_every_shipped_evaluations_means_follow_from_its_own_rows(path):
    """Empty true sets count as 0 over all qnames; set_F_ndcg has the extra term (the client's running mean)."""
    published = read_published_scores(path)
    year = 2025 if path.parent.parent.name.endswith("25") else 2026
    ours = summarise_official(published.questions, edition=year)
    for measure, value in published.averages.items():
        if measure != "languages":
            assert ours[measure] == value, measure
    for language, block in published.averages.get("languages", {}).items():
        for measure, value in block.items():
            assert ours["languages"][language][measure] == value, (language, measure)


def test_empty_true_sets_count_as_zero_in_the_published_means():
    published = read_published_scores(PUBLISHED / "ck25" / "INFAI" / "ck25_eval.json")
    assert published.questions["ck25:25-en"] == OfficialScore(0.0, 0.0, 0.0)  # empty true set
    assert len(published.questions) == 50
    without = {q: s for q, s in published.questions.items() if q not in ("ck25:25-en", "ck25:41-en")}
    assert summarise_official(without)["set_F"] > published.averages["set_F"] == pytest.approx(0.4361, abs=1e-4)


def test_a_copy_of_the_true_result_set_is_refused(tmp_path, capsys):
    from sparqlab.cli import main

    planted = tmp_path / "db25_system_result_set.json"
    shutil.copy(data_dir() / "text2sparql" / "db25" / "db25_true_result_set.json", planted)
    with pytest.raises(NotGenuine, match="identical to the official true result set on all 200 qnames"):
        score_result_set(planted, load_edition("db25"))
    assert main(["eval", "--result-set", str(planted), "-d", "db25"]) != 0
    assert "not a genuine system result set" in capsys.readouterr().err
    # the published INFAI ck25 "system result set" is such a copy (its evaluation file says 0.436)
    with pytest.raises(NotGenuine, match="a copy of the gold"):
        score_result_set(PUBLISHED / "ck25" / "INFAI" / "ck25_system_result_set.json", load_edition("ck25"))


def test_other_signs_of_a_non_genuine_file(tmp_path):
    questions = load_edition("ck26")
    true_set = json.loads((data_dir() / "text2sparql" / "ck26" / "ck26_true_result_set.json").read_text())
    first = questions[0].id
    with_order = {first: {"x": 1}, "order_required": true_set["order_required"]}
    odd = {first: {"x": 2}}
    for values, reason in ((with_order, "order_required"), (odd, "relevance values other than 1")):
        path = tmp_path / "pred.json"
        path.write_text(json.dumps(values))
        with pytest.raises(NotGenuine, match=reason):
            score_result_set(path, questions)
    path.write_text(json.dumps({first: {"x": 1}, "ck26:99-en": {}}))
    table = score_result_set(path, questions)  # a genuine, poor system: scored, unknown qnames listed
    assert table["unknown_qnames"] == ["ck26:99-en"] and table["summary"]["n"] == 100


def test_strict_differs_exactly_on_asks_and_empty_true_sets():
    questions = {q.id: q for q in load_edition("db25")}
    path = PUBLISHED / "db25" / "FRANZ" / "db25_system_result_set.json"
    official = score_result_set(path, questions.values())
    strict = score_result_set(path, questions.values(), convention="text2sparql-strict")
    differ = {q for q in questions if official["questions"][q]["set_F"] != strict["questions"][q]["set_F"]}
    assert differ and all(questions[q].answer_form == "ask" or not questions[q].gold_answers for q in differ)
    # FRANZ answers every ASK "false": scored 1 against a true answer under the published rule, 0 strictly
    assert official["questions"]["db25:14-en"]["set_F"] == 1.0 and strict["questions"]["db25:14-en"]["set_F"] == 0.0
    assert official["questions"]["db25:93-en"]["set_F"] == 0.0 and strict["questions"]["db25:93-en"]["set_F"] == 1.0
    assert official["summary"]["set_F"] == pytest.approx(0.0733, abs=1e-4)
    assert strict["summary"]["set_F"] == pytest.approx(0.0183, abs=1e-4)


def test_eval_cli_scores_a_result_set_and_reports_agreement(capsys):
    from sparqlab.cli import main

    team = PUBLISHED / "db26" / "INFAI-ETI-AND-FRIENDS-B"
    assert main(["eval", "--result-set", str(team / "db26_pred_result_set.json"), "-d", "db26", "--published",
                 str(team / "db26_results.json"), "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert table["metric"] == "text2sparql" and len(table["published"]["agree"]) == 100
    assert table["summary"]["languages"]["es"]["set_F"] == pytest.approx(0.2200, abs=1e-4)
    assert main(["eval", "--result-set", str(team / "db26_pred_result_set.json"), "-d", "db26", "--language",
                 "es"]) == 0
    out = capsys.readouterr().out
    assert "db26:1-es" in out and "db26:1-en" not in out and "n 50" in out
