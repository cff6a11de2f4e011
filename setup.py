"""The wheel carries the checkout's bundled resources and the commit it was built from.

Metadata lives in pyproject.toml; this file only extends ``build_py`` so that a built (non-editable) package gets
``sparqlab/bundled/``: copies of ``data/``, ``notebooks/`` and ``experiments/`` (read by
``sparqlab.core.paths``) and ``build.json``, the git revision and dirty flag of the tree it was built from
(recorded in every run's ``environment.json``, as a checkout's own git state is). An editable install reads the
checkout directly and gets neither.
"""

import json
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
BUNDLED = ("data", "notebooks", "experiments")
SKIPPED = shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints", "*.pyc")


def git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


class BuildWithBundle(build_py):
    def run(self):
        super().run()
        if self.editable_mode:
            return
        target = Path(self.build_lib) / "sparqlab" / "bundled"
        for name in BUNDLED:
            if (ROOT / name).is_dir():
                shutil.rmtree(target / name, ignore_errors=True)
                shutil.copytree(ROOT / name, target / name, ignore=SKIPPED)
        revision = git("rev-parse", "HEAD")
        status = git("status", "--porcelain", "--untracked-files=no")
        (target / "build.json").write_text(json.dumps(
            {"revision": revision, "dirty": bool(status) if status is not None else None}) + "\n")


setup(cmdclass={"build_py": BuildWithBundle})
