"""Methods on CK25 through the runner, scored with the official metric: `run_methods` + `official_frame` (what
notebook 10 calls), with the schema-reading stand-in that learns nothing from the 50 questions."""

from __future__ import annotations

import pytest


def test_direct_with_schema_rules_is_scored_officially(ck25_kg, ck25_questions, tmp_path):
    from sparqlab.text2sparql.answers import official_frame, run_methods

    folders = run_methods(["direct"], ["standin-schema-rules"], ck25_kg, output_root=tmp_path, limit=3,
                          cache="off", progress=False)
    assert list(folders) == ["direct (standin-schema-rules [standin])"]
    frame, summaries = official_frame(folders, ck25_questions, ck25_kg)
    assert list(frame["qname"]) == ["ck25:1-en", "ck25:2-en", "ck25:3-en"]
    # "Who is the manager of Heinrich Hoch?": the schema's `has manager` and the named person give the answer
    assert frame.set_index("qname").loc["ck25:3-en", "set_F"] == 1.0
    assert (frame["model_calls"] >= 1).all() and (frame["latency_s"] > 0).all()
    assert summaries["direct (standin-schema-rules [standin])"]["set_F"] == pytest.approx(frame["set_F"].mean())


def test_schema_rules_reads_only_the_prompt_schema():
    from sparqlab.methods.direct.schema_rules import mentioned_name, schema_query

    prompt = ("Relations (subject class -> object class):\n- has manager (pv:hasManager): Employee -> Manager (x)\n"
              "- phone number (pv:phone): Agent -> xsd:string (A phone number.)\n"
              "Classes:\n- class Employee (pv:Employee): An employee.\n")
    assert mentioned_name("In which department is Ms. Brant?", set()) == "Brant"
    query = schema_query(prompt, "Who is the manager of Heinrich Hoch?")
    assert "pv:hasManager" in query and '"heinrich hoch"' in query
    assert schema_query(prompt, "How many employees are there?") == (
        "SELECT (COUNT(DISTINCT ?result) AS ?count) WHERE { ?result a pv:Employee . }")
    assert schema_query(prompt, "what about it?") is None
