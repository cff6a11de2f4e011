"""Hostile input files and arguments through the CLI: each gives one clean message (no traceback) naming the
file and line, and nothing is scored from a malformed answer."""

from __future__ import annotations

import json

import pytest

from sparqlab.cli import main


def _fails_cleanly(capsys, argv: list[str]) -> str:
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and len(captured.err.strip().splitlines()) == 1, captured.err
    return captured.err


def _lines(path, *records) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


GOOD = {"id": "a", "predicted_answers": ["x"], "gold_answers": ["x"]}


@pytest.mark.parametrize(("record", "message"), [
    ({"id": "s", "predicted_answers": "Alien", "gold_answers": ["A", "l", "i", "e", "n"]},
     "line 2 (id 's'): predicted_answers must be a list"),
    ({"id": "g", "predicted_answers": ["x"], "gold_answers": "x"}, "line 2 (id 'g'): gold_answers must be a list"),
    ({"id": "d", "predicted_answers": ["x"], "gold_answers": {"x": 1}}, "gold_answers must be a list"),
    ({"id": "e", "predicted_answers": ["x", {"v": 1}], "gold_answers": ["x"]}, "predicted_answers[1] must be"),
    ({"id": "n", "predicted_answers": [None], "gold_answers": ["x"]}, "predicted_answers[0] must be"),
])
def test_eval_refuses_malformed_answer_lists(tmp_path, capsys, record, message):
    path = _lines(tmp_path / "p.jsonl", GOOD, record)
    err = _fails_cleanly(capsys, ["eval", path])
    assert message in err and "p.jsonl" in err


def test_eval_reports_a_torn_last_line_and_scores_the_rest(tmp_path, capsys):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + '{"id": "b", "predicted_answers": ["x"], "gold_', encoding="utf-8")
    assert main(["eval", str(path), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert "line 2" in captured.err and "incomplete" in captured.err
    assert json.loads(captured.out)["all"]["n"] == 1


@pytest.mark.parametrize(("content", "message"), [
    (b'{"id": "1", "text": "q", "gold_answers": {"Alien": 1}}\n', "line 1: 'gold_answers' must be a list"),
    (b'{"id": "1", "text": "q"}\n{"id": "2", "text": "q", "gold_answers": [["nested"]]}\n',
     "line 2: gold_answers[0] must be a string"),
    (b'{"id": "1", "text": "ok"}\n{"id": "2", "text": "a\xffb"}\n', "line 2: not UTF-8 (byte 0xff at column 23)"),
    (b'{"id": "1", "text": "q", "gold_answers": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",
     "line 1: JSON nested too deeply"),
    (b'{"id": "1", "text": "a\\ud800b"}\n', "line 1: text (character 2, U+D800) is a lone UTF-16 surrogate"),
    (b"", "holds no questions"),
    (b'{"id": "1", "text": "q"}\n{"id": "2", "te', "line 2: not valid JSON"),
])
def test_question_files_are_checked_where_they_are_read(tmp_path, capsys, content, message):
    path = tmp_path / "questions.jsonl"
    path.write_bytes(content)
    err = _fails_cleanly(capsys, ["data", "show", str(path)])
    assert message in err and "questions.jsonl" in err


def test_a_query_with_a_lone_surrogate_is_a_syntax_error(small_ttl, capsys):
    """An argument that is not UTF-8 reaches Python as a lone surrogate; it crashed kg.query with
    UnicodeEncodeError."""
    err = _fails_cleanly(capsys, ["query", "--kg", str(small_ttl), "--no-cache", 'SELECT * { ?s ?p "\udcff" }'])
    assert "SparqlSyntaxError" in err and "U+DCFF" in err


def test_a_run_in_progress_is_one_message(movie_cache, tmp_path, capsys):
    from sparqlab.runs.store import RunStore

    questions = _lines(tmp_path / "q.jsonl", {"id": "1", "text": "who directed Alien", "kg": "movies",
                                              "gold_answers": ["Ridley Scott"]})
    argv = ["run", "direct", "-d", questions, "-m", "standin-keyword-rules", "-e", "locked", "--kg", "movies"]
    assert main(argv) == 0
    folder = capsys.readouterr().out.splitlines()[0]
    with RunStore(folder) as store:
        store.open()
        err = _fails_cleanly(capsys, argv)
    assert "RunInProgressError" in err and "being written by another process" in err


def test_a_run_without_gold_is_unscored_not_a_crash(movie_cache, tmp_path, capsys):
    questions = _lines(tmp_path / "q.jsonl", {"id": "1", "text": "who directed Alien", "kg": "movies"})
    assert main(["run", "direct", "-d", questions, "-m", "standin-keyword-rules", "-e", "nogold", "--kg",
                 "movies"]) == 0
    assert "unscored" in capsys.readouterr().out


def test_a_corrupt_response_cache_is_one_message_naming_the_file(movie_cache, tmp_path, capsys):
    responses = movie_cache / "responses.sqlite"
    responses.write_bytes(b"this is not a database" * 1000)
    questions = _lines(tmp_path / "q.jsonl", {"id": "1", "text": "who directed Alien", "kg": "movies"})
    err = _fails_cleanly(capsys, ["run", "direct", "-d", questions, "-m", "standin-keyword-rules", "-e", "c",
                                  "--kg", "movies"])
    assert "CacheCorrupt" in err and str(responses) in err and "rm -f" in err
