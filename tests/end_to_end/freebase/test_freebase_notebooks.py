"""Notebooks 01 (SAGA Table 2 layout) and 07 (DeSQ's Freebase columns) with ``kg=freebase`` and the fixture's URL,
headless through `sparqlab reproduce`, with tiny parameters and stand-in models."""

from __future__ import annotations

import json

import pytest

from support.notebooks import reproduce


def _reproduce(tmp_path, notebook: str, parameters: dict[str, str]) -> str:
    """The notebook's printed text (its cache, ``tmp_path / "cache"``, is the shared_search_cache fixture's)."""
    return reproduce(tmp_path, notebook, parameters=parameters, timeout=900).text(notebook)


@pytest.mark.slow
def test_agent_notebook_runs_on_a_freebase_endpoint(tmp_path, freebase_url, shared_search_cache):
    text = _reproduce(tmp_path, "01_agent_runs", {"kg": "freebase", "kg_url": freebase_url,
                                                  "datasets": "freebase-fixture", "sample": "None"})
    assert "freebase-fixture" in text and "SAGA" in text and "SPINACH" in text
    configs = [json.loads(p.read_text()) for p in (tmp_path / "runs" / "agents").glob("*/config.json")]
    assert {c["method"]["method"] for c in configs} == {"spinach", "saga"}
    assert all(c["run"]["graph"]["kg"] == "freebase" for c in configs)
    metrics = [json.loads(p.read_text()) for p in (tmp_path / "runs" / "agents").glob("*/metrics.json")]
    assert all(m["n_done"] == 5 for m in metrics)


@pytest.mark.slow
def test_uri_correction_notebook_scores_freebase_without_an_endpoint(tmp_path, freebase_url, shared_search_cache):
    text = _reproduce(tmp_path, "07_uri_correction", {
        "kg": "freebase", "kg_url": freebase_url, "dataset": "freebase-fixture", "limit": "5",
        "train_dataset": "webqsp", "train_limit": "40", "embedder": "hashing", "wikidata_sets": "[]",
        "freebase_sets": "['freebase-fixture']", "freebase_limit": "5", "freebase_memory_limit": "200", "lcquad2_limit": "0",
        "freebase_train_limit": "40", "experiment": "desq-fb"})  # 40 worked examples, not all 3,098 of WebQSP's
    assert "freebase-fixture" in text and "roundtrip-exact" in text and "structural_em" in text  # offline table
    assert list((tmp_path / "figures" / "desq-fb").glob("uri_strategies--*.png"))
