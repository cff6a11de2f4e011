"""The three agent notebooks execute headless (`sparqlab reproduce`) with tiny parameters and write their tables'
runs and figures; runs, figures, responses and artifacts go to a temporary folder, while the movie KG store and
its label index are reused from the project cache (linked, not rebuilt)."""

import json

from sparqlab.core.paths import cache_dir
from support.notebooks import reproduce

NOTEBOOKS = ["01_agent_runs", "02_schema_coverage", "03_ablations"]


def test_agent_notebooks_run_headless(tmp_path):
    from sparqlab.kg import open_kg

    with open_kg("movies") as kg:  # build the store and its label index once, in the project cache
        kg.search("Ridley Scott")
    cache = tmp_path / "cache"
    cache.mkdir()
    for shared in ("kg", "search"):
        (cache / shared).symlink_to(cache_dir() / shared, target_is_directory=True)
    done = reproduce(tmp_path, *NOTEBOOKS, cache=cache, output_dir=tmp_path / "out", parameters={
        "sample": "2", "datasets": "metaqa-1hop", "coverages": "0.5,1.0", "seeds": "0,1"})
    for name in NOTEBOOKS:
        assert all(cell.get("outputs") is not None for cell in done.code_cells(name))
    figures = {p.parent.name: p for p in (tmp_path / "figures").glob("*/*.png")}
    assert set(figures) == {"agents", "schema-coverage", "ablations"}
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in figures.values())
    metrics = [json.loads(p.read_text()) for p in (tmp_path / "runs").glob("*/*/metrics.json")]
    methods = {(p.parent.parent.name, json.loads((p.parent / "config.json").read_text())["method"]["method"])
               for p in (tmp_path / "runs").glob("*/*/metrics.json")}
    assert ("agents", "spinach") in methods and ("agents", "saga") in methods and ("ablations", "spinach") in methods
    # coverage: one masked level x 2 seeds + full coverage once; ablations: 4 SAGA variants + SPINACH
    assert sum(1 for p in (tmp_path / "runs" / "schema-coverage").glob("*/metrics.json")) == 3
    assert sum(1 for p in (tmp_path / "runs" / "ablations").glob("*/metrics.json")) == 5
    assert all(m["model_is_standin"] and m["n_done"] == 2 for m in metrics)
