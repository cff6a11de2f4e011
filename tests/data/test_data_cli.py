"""``sparqlab data show`` prints Question records as JSONL; ``data list`` names every dataset; errors exit 1."""

import json

from sparqlab.cli import main
from sparqlab.data import DATASETS, Question, load, write_questions


def test_show_prints_questions_as_jsonl(capsys):
    assert main(["data", "show", "qald7", "--split", "train", "--limit", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    printed = [Question.from_dict(json.loads(line)) for line in lines]
    assert [q.to_dict() for q in printed] == [q.to_dict() for q in load("qald7", split="train", limit=3)]


def test_show_takes_a_path(tmp_path, capsys):
    path = tmp_path / "mine.jsonl"
    write_questions(path, [Question("q1", "Who directed [Wind]?", gold_answers=["Carroll Ballard"], kg="movies")])
    assert main(["data", "show", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["gold_answers"] == ["Carroll Ballard"]


def test_show_unknown_dataset_exits_1_with_the_names(capsys):
    assert main(["data", "show", "no-such-set"]) == 1
    error = capsys.readouterr().err
    assert "no-such-set" in error and "metaqa-2hop" in error


def test_show_bad_split_exits_1(capsys):
    assert main(["data", "show", "qald10", "--split", "train"]) == 1
    assert "valid splits: test" in capsys.readouterr().err


def test_list_names_every_dataset(capsys):
    assert main(["data", "list"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == list(DATASETS)
