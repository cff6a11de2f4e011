"""The three agent notebooks execute headless (`sparqlab reproduce`) with tiny parameters and write their tables'
runs and figures; runs, figures, responses and artifacts go to a temporary folder, while the movie KG store and
its label index are reused from the project cache (linked, not rebuilt)."""

import json
import os
import subprocess
import sys

import nbformat

from sparqlab.core.paths import cache_dir

NOTEBOOKS = ["01_agent_runs", "02_schema_coverage", "03_ablations"]


def test_agent_notebooks_run_headless(tmp_path):
    from sparqlab.kg import open_kg

    with open_kg("movies") as kg:  # build the store and its label index once, in the project cache
        kg.search("Ridley Scott")
    cache = tmp_path / "cache"
    cache.mkdir()
    for shared in ("kg", "search"):
        (cache / shared).symlink_to(cache_dir() / shared, target_is_directory=True)
    env = {**os.environ, "SPARQLAB_RUNS": str(tmp_path / "runs"), "SPARQLAB_FIGURES": str(tmp_path / "figures"),
           "SPARQLAB_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    result = subprocess.run([sys.executable, "-m", "sparqlab", "reproduce", *NOTEBOOKS, "-p", "sample", "2",
                             "-p", "datasets", "metaqa-1hop", "-p", "coverages", "0.5,1.0", "-p", "seeds", "0,1",
                             "--output-dir", str(tmp_path / "out"), "--no-progress"],
                            capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:] + result.stdout[-2000:]
    for name in NOTEBOOKS:
        executed = nbformat.read(tmp_path / "out" / f"{name}.ipynb", as_version=4)
        assert all(cell.get("outputs") is not None for cell in executed.cells if cell.cell_type == "code")
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
