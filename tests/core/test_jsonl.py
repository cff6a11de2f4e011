"""JSONL reading tolerates the torn last line a killed run leaves, and nothing else."""

import pytest

from sparqlab.core.jsonl import read_jsonl, write_jsonl


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
