"""Open the quickstart in JupyterLab in headless Chromium, run it there, and check the trace browser renders.

The same check as tests/notebooks/test_lab_browser.py, for a machine where you want the timing or a visible
verdict: `python benchmarks/lab_browser_check.py`. Needs Chromium (`apt-get install chromium`, or
SPARQLAB_CHROMIUM=/path/to/chrome); without it the script says so and exits 0 (nothing to check).
Runs and figures go to a temporary folder.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import papermill

from sparqlab.notebooks import BROWSER_CONTROLS, NOTEBOOKS_DIR, browser_check, find_chromium


def main() -> int:
    chromium = find_chromium()
    if chromium is None:
        print("skipped: no Chromium on PATH (apt-get install chromium, or set SPARQLAB_CHROMIUM)")
        return 0
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        os.environ.update(SPARQLAB_RUNS=str(root / "runs"), SPARQLAB_FIGURES=str(root / "figures"),
                          HF_HUB_OFFLINE="1")
        notebook = root / "00_quickstart.ipynb"
        papermill.execute_notebook(str(NOTEBOOKS_DIR / notebook.name), str(notebook), prepare_only=True,
                                   parameters={"limit": 2, "datasets": ["metaqa-1hop"]}, progress_bar=False)
        start = time.perf_counter()
        labels = browser_check(notebook, chromium)
        elapsed = time.perf_counter() - start
    missing = [label for label in BROWSER_CONTROLS if label not in labels]
    print(f"{chromium}: trace browser {'rendered' if not missing else 'MISSING ' + str(missing)} "
          f"in JupyterLab after {elapsed:.1f} s (controls: {', '.join(labels)})")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
