"""Notebook 08 runs headless with tiny parameters (isolated runs, figures and cache), offline with the scripted
model, and shows the worked example's typed answer and both figures."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import nbformat


def test_generative_sparql_notebook_runs_headless(tmp_path):
    from sparqlab.kg.movies import ensure_store

    store = ensure_store()                      # reuse the built movie KG: copy it into the isolated cache
    shutil.copytree(store.parent, tmp_path / "cache" / "kg" / store.parent.name)
    env = {**os.environ, "SPARQLAB_RUNS": str(tmp_path / "runs"), "SPARQLAB_FIGURES": str(tmp_path / "figures"),
           "SPARQLAB_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "sparqlab", "reproduce", "08_generative_sparql",
                           "-p", "examples", '["example1"]', "-p", "experiment", "genop-test"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    executed = nbformat.read(tmp_path / "runs" / "notebooks" / "08_generative_sparql.ipynb", as_version=4)
    text = "\n".join(str(output) for cell in executed.cells if cell.cell_type == "code"
                     for output in cell.get("outputs", []))
    assert "art (gen)" in text and "Florence (gen)" in text
    assert "Thriller (rdf)" in text                 # generated genres joined back to the KG's genres
    figures = tmp_path / "figures" / "genop-test"
    assert (figures / "dependency_graphs--model-scripted.png").read_bytes()[:4] == b"\x89PNG"
    assert (figures / "memoisation_calls--model-scripted--k-5--b-10.pdf").read_bytes()[:5] == b"%PDF-"
