"""Fixtures of the GenOp tests: the paper's examples opened through the KG layer."""

from __future__ import annotations

from pathlib import Path

import pytest
from genop_helpers import EXAMPLES_TTL


@pytest.fixture(scope="session")
def example_kg(tmp_path_factory):
    from sparqlab.kg import open_kg

    path: Path = tmp_path_factory.mktemp("genop") / "examples.ttl"
    path.write_text(EXAMPLES_TTL, encoding="utf-8")
    kg = open_kg(path, cache=False)
    yield kg
    kg.close()
