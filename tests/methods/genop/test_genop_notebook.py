"""Notebook 08 runs headless with tiny parameters (isolated runs, figures and cache), offline with the scripted
model, and shows the worked example's typed answer and both figures."""

from __future__ import annotations

from support.notebooks import reproduce, with_movie_store


def test_generative_sparql_notebook_runs_headless(tmp_path):
    done = reproduce(tmp_path, "08_generative_sparql", cache=with_movie_store(tmp_path), timeout=300,
                     parameters={"examples": '["example1"]', "experiment": "genop-test"})
    text = done.text("08_generative_sparql")
    assert "art (gen)" in text and "Florence (gen)" in text
    assert "Thriller (rdf)" in text                 # generated genres joined back to the KG's genres
    figures = tmp_path / "figures" / "genop-test"
    # `examples` is overridden and not in the figures' names: a digest of the overrides keeps the defaults' files
    [graphs] = figures.glob("dependency_graphs--model-scripted--p-*.png")
    [calls] = figures.glob("memoisation_calls--model-scripted--k-5--b-10--p-*.pdf")
    assert graphs.read_bytes()[:4] == b"\x89PNG" and calls.read_bytes()[:5] == b"%PDF-"
