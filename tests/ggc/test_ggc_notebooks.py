"""The three GGC notebooks execute headless (papermill via `sparqlab reproduce`) with tiny parameters, offline,
and write their tables and figures."""

import os
import subprocess
import sys

import nbformat

NOTEBOOKS = ("04_ggc_main", "05_gate_threshold_sweep", "06_error_categorisation")


def test_ggc_notebooks_run_headless(tmp_path, session_cache):
    env = {**os.environ, "SPARQLAB_RUNS": str(tmp_path / "runs"), "SPARQLAB_FIGURES": str(tmp_path / "figures"),
           "SPARQLAB_CACHE": str(session_cache), "HF_HUB_OFFLINE": "1"}
    tiny = ["-p", "train_limit", "60", "-p", "test_limit", "12", "-p", "memory_start", "4800",
            "-p", "gate_backends", '["tfidf"]', "-p", "thresholds", "[0.25, 0.5, 0.75]"]
    done = subprocess.run([sys.executable, "-m", "sparqlab", "reproduce", *NOTEBOOKS, *tiny, "--no-progress",
                           "--output-dir", str(tmp_path / "executed")], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr + done.stdout
    for name in NOTEBOOKS:
        executed = nbformat.read(tmp_path / "executed" / f"{name}.ipynb", as_version=4)
        assert all(cell.get("outputs") is not None for cell in executed.cells if cell.cell_type == "code")
    figures = {p.parent.name: p.name for p in (tmp_path / "figures").rglob("*.png")}
    assert figures["ggc-main"].startswith("ggc_accuracy_by_setting--") and "limit-12" in figures["ggc-main"]
    assert figures["ggc-sweep"].startswith("ggc_threshold_sweep--") and "0.25-0.5-0.75" in figures["ggc-sweep"]
    assert figures["ggc-errors"].startswith("error_categories--")
    main = nbformat.read(tmp_path / "executed" / "04_ggc_main.ipynb", as_version=4)
    text = "".join(o.get("data", {}).get("text/plain", "") for c in main.cells for o in c.get("outputs", []))
    assert "generator only" in text and "correct all" in text and "gated" in text
