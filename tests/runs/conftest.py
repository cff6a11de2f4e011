"""Fixtures of the runner tests: a fresh runs root and response cache per test."""

import pytest


@pytest.fixture(autouse=True)
def isolated_paths(tmp_path, monkeypatch):
    """Runs and caches of a test go to its tmp folder, never into the checkout."""
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    return tmp_path


@pytest.fixture
def root(tmp_path):
    return tmp_path / "runs"
