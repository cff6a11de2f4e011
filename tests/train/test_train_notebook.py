"""Notebook 09 runs headless with tiny parameters (isolated runs, figures and cache), labels a generator run,
trains correctors on two compositions and the gates, runs each corrector in the gated pipeline, and prints the
pipeline-check banner."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import nbformat


def test_corrector_composition_notebook_runs_headless(tmp_path):
    from sparqlab.kg.movies import ensure_store

    store = ensure_store()                      # reuse the built movie KG: copy it into the isolated cache
    shutil.copytree(store.parent, tmp_path / "cache" / "kg" / store.parent.name)
    env = {**os.environ, "SPARQLAB_RUNS": str(tmp_path / "runs"), "SPARQLAB_FIGURES": str(tmp_path / "figures"),
           "SPARQLAB_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "sparqlab", "reproduce", "09_corrector_data_composition",
                           "-p", "limit", "16", "-p", "generator_options", "{start: 4000, stop: 4100}",
                           "-p", "compositions", "[W1.0, W1.0+C0.2]", "-p", "max_steps", "3", "-p", "train_generator", "false",
                           "-p", "gate_epochs", "1", "-p", "experiment", "train-test", "-p", "evaluate", "true",
                           "-p", "eval_limit", "3", "-p", "eval_max_tokens", "8", "-p", "threshold", "0"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    executed = nbformat.read(tmp_path / "runs" / "notebooks" / "09_corrector_data_composition.ipynb", as_version=4)
    code = [cell for cell in executed.cells if cell.cell_type == "code"]
    assert [cell.execution_count for cell in code] == list(range(1, len(code) + 1))
    text = "\n".join(str(output) for cell in code for output in cell.get("outputs", []))
    assert "PIPELINE CHECK" in text
    for module in ("Corrector W1.0", "Corrector W1.0+C0.2", "Gate (SBERT)"):
        assert module in text
    out = tmp_path / "runs" / "train-test" / "tiny-random-mcqa-movies-train-16"
    table = json.loads((out / "table6.json").read_text())
    rows = {row["module"]: row for row in table["rows"]}
    assert rows["Corrector W1.0"]["correct (C)"] == 0 and rows["Corrector W1.0"]["wrong (W)"] > 0
    assert rows["Corrector W1.0+C0.2"]["correct (C)"] == round(rows["Corrector W1.0"]["wrong (W)"] / 4)
    assert rows["Corrector W1.0+C0.2"]["steps"] == 3 and table["pipeline_check"] is True
    assert (out / "sft" / "W1.0+C0.2" / "adapter" / "adapter_model.safetensors").is_file()
    eval_runs = sorted((tmp_path / "runs" / "train-composition-eval").iterdir())
    assert len(eval_runs) == 2  # one gated run per trained corrector
    for run_dir in eval_runs:
        records = [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines()]
        assert len(records) == 3 and all(r["extra"]["triggered"] for r in records)  # tau = 0 corrects all
        assert all(r["role_usage"]["corrector"]["calls"] == {"correct": 1} for r in records)
    assert "corrector_calls" in text
    figure = tmp_path / "figures" / "train-test" / "loss_curves--model-tiny-random--limit-16--steps-3.png"
    assert figure.read_bytes()[:4] == b"\x89PNG"
