"""JSONL reading tolerates the torn last line a killed run leaves, and nothing else."""

import pytest

from sparqlab.core.jsonl import LineProblem, decode_line, read_jsonl, write_jsonl


def test_round_trip(tmp_path):
    records = [{"id": "1", "x": "é"}, {"id": "2"}]
    write_jsonl(tmp_path / "a.jsonl", records)
    assert list(read_jsonl(tmp_path / "a.jsonl")) == records


def test_torn_last_line_is_skipped(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text('{"id": "1"}\n{"id": "2"}\n{"id": "3", "pa')
    assert [r["id"] for r in read_jsonl(path)] == ["1", "2"]


def test_corrupt_middle_line_raises_with_location(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text('{"id": "1"}\nnot json\n{"id": "3"}\n')
    with pytest.raises(ValueError, match="a.jsonl:2"):
        list(read_jsonl(path))


def test_missing_file_yields_nothing(tmp_path):
    assert list(read_jsonl(tmp_path / "none.jsonl")) == []


@pytest.mark.parametrize("escape", ["\\ud800", "\\uDFFF", "\\uDbFf"])
def test_a_lone_surrogate_escape_is_refused_wherever_it_is(escape):
    line = '{"id": "1", "gold": [{"k": "a' + escape + '"}]}'
    with pytest.raises(LineProblem, match=r"gold\[0\]\.k \(character 2, U\+D[8-9A-F]..\) is a lone UTF-16 surrogate"):
        decode_line(line.encode())


@pytest.mark.parametrize("line, text", [('{"t": "\\ud83d\\ude00"}', "\U0001F600"),  # a pair is one character
                                        ('{"t": "\\\\ud800"}', "\\ud800"),  # an escaped backslash, then text
                                        ('{"t": "\\u00e9 \u00e9"}', "\u00e9 \u00e9")])
def test_escapes_that_are_not_a_lone_surrogate_are_read(line, text):
    assert decode_line(line.encode()) == {"t": text}
