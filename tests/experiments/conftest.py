"""Fixtures of the sweep tests: a grid file in the test's folder, its runs and response cache there too.

The movie KG stays in the project cache (``sparqlab kg build movies``); everything a sweep writes goes to the
test's own folder (``SPARQLAB_RUNS`` and the grid's ``cache_path``)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    return tmp_path / "runs"


@pytest.fixture
def write_grid(tmp_path):
    """Write a grid file into the test's folder: ``write_grid(text, name="grid")`` -> its path. The text may
    use ``{cache}`` for a response cache file of the test's own."""

    def write(text: str, name: str = "grid") -> Path:
        path = tmp_path / f"{name}.yaml"
        path.write_text(textwrap.dedent(text).format(cache=tmp_path / "responses.sqlite"), encoding="utf-8")
        return path

    return write


SLOW_GRID = """\
    # two direct configurations whose model waits per call, so a kill lands mid-run
    name: slow
    run: {{limit: 6, concurrency: 1, cache_path: {cache}, model: standin-latency,
           model_options: {{inner: standin-keyword-rules, delay_ms: 400}}}}
    methods:
      direct: {{method: direct}}
      direct-reparse2: {{method: direct, options: {{reparse_attempts: 2}}}}
    datasets:
      metaqa-1hop: {{dataset: metaqa-1hop}}
    executor:
      local: {{workers: 2}}
"""


@pytest.fixture
def slow_grid(write_grid) -> Path:
    return write_grid(SLOW_GRID, "slow")
