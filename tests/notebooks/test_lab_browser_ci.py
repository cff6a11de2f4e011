"""In CI the real-browser check cannot be skipped: without Chromium it fails. (Elsewhere it skips, as
every run on a machine without Chromium shows.)"""

import os
import subprocess
import sys
from pathlib import Path

BROWSER_TEST = Path(__file__).with_name("test_lab_browser.py")


def test_a_missing_chromium_fails_in_ci(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "SPARQLAB_CHROMIUM"}
    env["PATH"] = str(tmp_path)  # an empty folder: no chromium, chromium-browser or google-chrome on it
    env["CI"] = "true"
    in_ci = subprocess.run([sys.executable, "-m", "pytest", str(BROWSER_TEST), "-q", "-n", "0", "-p", "no:cacheprovider"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert in_ci.returncode == 1, in_ci.stdout + in_ci.stderr
    assert "2 failed" in in_ci.stdout and "cannot be skipped in CI" in in_ci.stdout  # both browser checks
