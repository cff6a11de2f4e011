"""The three GGC notebooks execute headless (papermill via `sparqlab reproduce`) with tiny parameters, offline,
and write their tables and figures."""

from support.notebooks import reproduce

NOTEBOOKS = ("04_ggc_main", "05_gate_threshold_sweep", "06_error_categorisation")


def test_ggc_notebooks_run_headless(tmp_path, session_cache):
    done = reproduce(tmp_path, *NOTEBOOKS, cache=session_cache, output_dir=tmp_path / "executed", parameters={
        "train_limit": "60", "test_limit": "12", "memory_start": "4800", "gate_backends": '["tfidf"]',
        "thresholds": "[0.25, 0.5, 0.75]", "threshold": "0.5"})
    for name in NOTEBOOKS:
        assert all(cell.get("outputs") is not None for cell in done.code_cells(name))
    figures = {p.parent.name: p.name for p in (tmp_path / "figures").rglob("*.png")}
    assert figures["ggc-main"].startswith("ggc_accuracy_by_setting--") and "limit-12" in figures["ggc-main"]
    assert figures["ggc-sweep"].startswith("ggc_threshold_sweep--") and "0.25-0.5-0.75" in figures["ggc-sweep"]
    assert figures["ggc-errors"].startswith("error_categories--")
    text = done.text("04_ggc_main")
    assert "generator only" in text and "correct all" in text and "gated" in text
