"""notebooks/07_uri_correction.ipynb executes headless (`sparqlab reproduce`) with tiny parameters."""

import os
import subprocess
import sys

import nbformat


def test_uri_correction_notebook_reproduces_headless(tmp_path):
    env = {**os.environ, "SPARQLAB_RUNS": str(tmp_path / "runs"), "SPARQLAB_FIGURES": str(tmp_path / "figures"),
           "SPARQLAB_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    parameters = {"limit": "4", "train_limit": "150", "embedder": "hashing", "wikidata_limit": "2",
                  "wikidata_sets": "['qald10']", "lcquad2_limit": "2", "lcquad2_train_limit": "20",
                  "experiment": "desq-nb"}
    args = [item for name, value in parameters.items() for item in ("-p", name, value)]
    done = subprocess.run([sys.executable, "-m", "sparqlab", "reproduce", "07_uri_correction", *args],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    executed = nbformat.read(tmp_path / "runs" / "notebooks" / "07_uri_correction.ipynb", as_version=4)
    text = "\n".join(str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", ""))
                     for cell in executed.cells if cell.cell_type == "code" for o in cell.get("outputs", []))
    for strategy in ("oracle", "always-retrieve", "roundtrip-exact", "roundtrip-fuzzy", "score-threshold",
                     "combined"):
        assert strategy in text
    assert "qald10" in text and "empty-vs-empty pairs" in text and "corpus BLEU" in text
    assert "train raw / test ref" in text and "unknown_slots" in text and "mapping_em" in text
    for name in ("uri_strategies", "desq_table2", "desq_panels"):  # the strategy chart, Figures 2 and 3
        figures = list((tmp_path / "figures" / "desq-nb").glob(f"{name}--*limit-4*.png"))
        assert len(figures) == 1 and figures[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
