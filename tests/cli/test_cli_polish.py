"""The CLI's everyday surface: one clean error line (traceback only with --debug), `| head` without a BrokenPipe
traceback, `eval --by` validation and run names, `kg prefixes`, prefix errors, labels beside IRIs."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sparqlab.cli import main

SPARQLAB = [str(Path(sys.executable).parent / "sparqlab")]


def sparqlab(*args, env=None):
    return subprocess.run(SPARQLAB + list(args), capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def test_error_is_one_line_and_debug_shows_the_traceback(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SPARQLAB_DEBUG", raising=False)
    missing = str(tmp_path / "nothing.jsonl")
    assert main(["eval", missing]) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [err.strip()]  # one line
    assert "no predictions file, run folder or run named" in err
    with pytest.raises(FileNotFoundError):  # --debug: the exception (and so its traceback) propagates
        main(["--debug", "eval", missing])
    monkeypatch.setenv("SPARQLAB_DEBUG", "1")
    with pytest.raises(FileNotFoundError):
        main(["eval", missing])
    debug = sparqlab("eval", missing, env={"SPARQLAB_DEBUG": "1"})  # and from the shell, a real traceback
    assert debug.returncode != 0 and "Traceback" in debug.stderr and "FileNotFoundError" in debug.stderr


def test_unexpected_errors_are_one_line_with_a_debug_hint(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SPARQLAB_DEBUG", raising=False)
    folder = tmp_path / "params.yaml"
    folder.mkdir()  # a folder where a file is expected: an operating-system error no command expects
    assert main(["reproduce", "00_quickstart", "-f", str(folder)]) == 1
    err = capsys.readouterr().err
    assert "IsADirectoryError" in err and str(folder) in err
    assert "--debug" in err and "Traceback" not in err
    bad = tmp_path / "bad.yaml"
    bad.write_text("limit: [unclosed", encoding="utf-8")  # invalid YAML is expected: the file is named, no hint
    assert main(["reproduce", "00_quickstart", "-f", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}: not valid YAML" in err and "--debug" not in err


def test_reading_only_the_head_of_the_output_ends_quietly(movies_store):
    query = "SELECT ?film ?p ?o WHERE { ?film ?p ?o } LIMIT 5000"
    process = subprocess.Popen(SPARQLAB + ["query", "--kg", "movies", "--limit", "5000", "--no-labels", query],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = process.stdout.readline()
    process.stdout.close()  # what `| head -1` does
    stderr = process.stderr.read().decode()
    process.stderr.close()
    assert process.wait(timeout=120) == 141
    assert first.startswith(b"film") and "Traceback" not in stderr and "BrokenPipe" not in stderr


def test_kg_prefixes_and_unknown_prefix_error_lists_them(movies_store, capsys):
    assert main(["kg", "prefixes", "movies"]) == 0
    listed = capsys.readouterr().out
    assert "PREFIX mrel:" in listed and "<http://sparqlab.org/movies/relation/>" in listed
    assert main(["query", "--kg", "movies", "SELECT ?x WHERE { ?x foo:bar ?y }"]) == 1
    err = capsys.readouterr().err
    assert "undeclared prefix foo:" in err and "predefined here: mclass:, movie:, mrel:" in err


def test_query_table_shows_labels_beside_iris(movies_store, capsys):
    query = 'SELECT ?film WHERE { ?film rdfs:label "Bartleby" ; mrel:directed_by ?d }'
    assert main(["query", "--kg", "movies", query]) == 0
    assert "entity/Film/Bartleby> (Bartleby)" in capsys.readouterr().out
    assert main(["query", "--kg", "movies", "--no-labels", query]) == 0
    assert "(Bartleby)" not in capsys.readouterr().out


@pytest.fixture
def predictions(tmp_path):
    path = tmp_path / "predictions.jsonl"
    rows = [{"id": "a", "predicted_answers": ["x"], "gold_answers": ["x"], "metadata": {"qtype": "t1"}},
            {"id": "b", "predicted_answers": [], "gold_answers": ["y"], "metadata": {"qtype": "t2"}},
            {"id": "c", "predicted_answers": ["z"], "gold_answers": ["z", "w"], "metadata": {"qtype": "t2"}}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_eval_by_unknown_field_lists_the_known_ones(predictions, capsys):
    assert main(["eval", str(predictions), "--by", "qtyp"]) == 1
    err = capsys.readouterr().err
    assert "no record has field 'qtyp'" in err and "qtype" in err and "metadata" in err


def test_eval_prints_percent_with_one_decimal(predictions, capsys):
    assert main(["eval", str(predictions), "--by", "qtype"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1].split()[:4] == ["all", "3", "55.6", "33.3"]


def test_eval_accepts_a_run_name(predictions, tmp_path, monkeypatch, capsys):
    run = tmp_path / "runs" / "exp" / "direct-m-abc123"
    run.mkdir(parents=True)
    (run / "predictions.jsonl").write_text(predictions.read_text(), encoding="utf-8")
    (run / "manifest.json").write_text("{}", encoding="utf-8")
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    assert main(["eval", "direct-m", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["all"]["n"] == 3


def test_run_model_errors_speak_in_the_commands_flags(tmp_path, monkeypatch, capsys, movies_store):
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    for name in ("SPARQLAB_MODEL", "SPARQLAB_MODEL_URL", "SPARQLAB_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    base = ["run", "direct", "-d", "metaqa-1hop", "--limit", "2", "-e", "errs"]
    assert main(base) == 1
    assert "needs a model: name one (sparqlab run -m NAME" in capsys.readouterr().err
    assert main(base + ["-m", "my-llama"]) == 1  # no endpoint anywhere: said, not a silent try of 127.0.0.1:8000
    err = capsys.readouterr().err
    assert "no endpoint is given: pass its URL (--model-url" in err and not (tmp_path / "runs").exists()
    # a temperature no other run used: its requests are certainly not in the shared response cache
    assert main(base + ["-m", "standin-echo", "--cache", "replay", "--temperature", "0.123457"]) == 1
    err = capsys.readouterr().err
    assert "what to do: --cache replay only serves cached responses" in err and "Traceback" not in err
