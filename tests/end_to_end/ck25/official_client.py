"""The official TEXT2SPARQL client (PyPI ``text2sparql-client``) in a virtual environment of its own, built once
and kept in the folder CI keeps between runs (:func:`support.ci.ci_cache`, keyed by the requirements and the
Python it runs on, so a fresh clone does not build it again): it pins numpy < 2 and fastapi 0.128, so it can never
share the workbench's venv.

Its ``pytrec-eval`` dependency builds from a source download; ``pytrec-eval-terrier`` ships the same
``pytrec_eval`` module as wheels, so the dependencies are installed first (with it) and the client itself with
``--no-deps`` (the route in data/ck25/PROVENANCE.md).
"""

from __future__ import annotations

import fcntl
import platform
import subprocess
import sys
from pathlib import Path

from sparqlab.core.hashing import stable_hash
from support.ci import ci_cache

CLIENT = "text2sparql-client==2.1.0"
DEPENDENCIES = ("pytrec-eval-terrier", "SPARQLWrapper>=2,<3", "click>=8.1.8,<9", "fastapi>=0.128,<0.129",
                "loguru>=0.7.3,<0.8", "numpy>=1.15.1,<2", "pydantic-settings>=2.8.1,<3", "pyyaml>=6.0.2,<7",
                "requests>=2.32.3,<3", "scipy>=1.1,<2", "setuptools<81", "tqdm>=4.67.1,<5", "uvicorn>=0.34.1,<0.35")
"""text2sparql-client 2.1.0's declared dependencies, with pytrec-eval-terrier for pytrec-eval."""


def client_program() -> Path:
    """The ``text2sparql`` program of the cached environment, built on first use. Raises ``RuntimeError`` with
    pip's last output lines when the environment cannot be built (no package registry, for example)."""
    key = stable_hash([CLIENT, DEPENDENCIES, sys.base_prefix, platform.python_version()], 12)
    venv = ci_cache() / f"venv-{CLIENT.replace('==', '-')}-{key}"
    program = venv / "bin" / "text2sparql"
    done = venv / ".installed"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with (venv.parent / f".{venv.name}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builder at a time (pytest-xdist workers)
        if done.exists():
            return program
        steps = [[sys.executable, "-m", "venv", "--clear", str(venv)],
                 [str(venv / "bin" / "pip"), "install", "--quiet", *DEPENDENCIES],
                 [str(venv / "bin" / "pip"), "install", "--quiet", "--no-deps", CLIENT]]
        for step in steps:
            finished = subprocess.run(step, capture_output=True, text=True, timeout=1800, check=False)
            if finished.returncode != 0:
                tail = "\n".join((finished.stdout + finished.stderr).strip().splitlines()[-5:])
                raise RuntimeError(f"cannot build the {CLIENT} environment ({' '.join(step[:3])} ...): {tail}")
        done.write_text(CLIENT + "\n")
    return program
