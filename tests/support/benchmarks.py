"""The scripts in ``benchmarks/`` imported as modules, for the tests of their probes and helpers (``benchmarks/``
is no package: each file runs as a script)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load_benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as the module ``benchmark_<name>`` (imported once per test session)."""
    module_name = f"benchmark_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # its dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module
