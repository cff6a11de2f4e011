"""Notebook 09 runs headless with tiny parameters (isolated runs, figures and cache), labels a generator run,
trains correctors on two compositions and the gates, runs each corrector in the gated pipeline, and prints the
pipeline-check banner."""

from __future__ import annotations

import json

from support.notebooks import reproduce, with_movie_store


def test_corrector_composition_notebook_runs_headless(tmp_path):
    done = reproduce(tmp_path, "09_corrector_data_composition", cache=with_movie_store(tmp_path), parameters={
        "limit": "16", "generator_options": "{start: 4000, stop: 4100}", "compositions": "[W1.0, W1.0+C0.2]",
        "max_steps": "3", "train_generator": "false", "gate_epochs": "1", "experiment": "train-test",
        "evaluate": "true", "eval_limit": "3", "eval_max_tokens": "8", "threshold": "0"})
    code = done.code_cells("09_corrector_data_composition")
    assert [cell.execution_count for cell in code] == list(range(1, len(code) + 1))
    text = done.text("09_corrector_data_composition")
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
    # parameters overridden and not in the figure's name add a digest of the overrides (never the defaults' file)
    [figure] = (tmp_path / "figures" / "train-test").glob("loss_curves--model-tiny-random--limit-16--steps-3*.png")
    assert figure.read_bytes()[:4] == b"\x89PNG"
