"""`sparqlab genop run`: the typed table and the exact --format json shape."""

from __future__ import annotations

import json

from genop_helpers import EXAMPLE1, EXAMPLE1_SCRIPT, EXAMPLES_TTL

from sparqlab.cli import main


def _files(tmp_path):
    (tmp_path / "g.ttl").write_text(EXAMPLES_TTL, encoding="utf-8")
    (tmp_path / "q.rq").write_text(EXAMPLE1, encoding="utf-8")
    (tmp_path / "s.json").write_text(json.dumps(EXAMPLE1_SCRIPT), encoding="utf-8")
    return ["genop", "run", str(tmp_path / "q.rq"), "--kg", str(tmp_path / "g.ttl"),
            "--model", f"scripted:{tmp_path / 's.json'}"]


def test_json_output_has_the_documented_shape(tmp_path, capsys):
    assert main([*_files(tmp_path), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"class", "model_calls", "rows"}
    assert out["class"] == "stratified" and out["model_calls"] > 0
    assert out["rows"] == [{"x": {"value": "http://example.org/Paris", "origin": "rdf"},
                            "y": {"value": "art", "origin": "gen"}, "z": {"value": "Florence", "origin": "gen"}}]


def test_table_output_and_options(tmp_path, capsys):
    args = _files(tmp_path)
    assert main([*args, "--no-memo", "-K", "2"]) == 0
    text = capsys.readouterr().out
    assert "class: stratified" in text and "Paris (rdf)" in text and "art (gen)" in text and "Florence (gen)" in text
    assert "g1 -+-> g2 via ?y" in text and "model calls:" in text and "[standin]" in text


def test_errors_are_one_line_messages(tmp_path, capsys):
    args = _files(tmp_path)
    (tmp_path / "bad.rq").write_text('SELECT ?y WHERE { GENOP("about ?q" AS ?y) }', encoding="utf-8")
    args[2] = str(tmp_path / "bad.rq")
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "Def. 3" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_served_model_over_http_gives_the_same_answer(tmp_path, capsys, monkeypatch):
    """The oracle through the OpenAI-compatible HTTP path: the scripted model served on 127.0.0.1."""
    from sparqlab.methods.genop import ScriptedModel
    from sparqlab.serving.model_server import serve_in_background

    model = ScriptedModel(EXAMPLE1_SCRIPT)
    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SPARQLAB_MODEL", model.name)
    args = _files(tmp_path)
    with serve_in_background(model) as url:
        args[-1] = url
        assert main([*args, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["class"] == "stratified" and out["model_calls"] == 23
    assert [(row["y"]["value"], row["z"]["value"]) for row in out["rows"]] == [("art", "Florence")]
