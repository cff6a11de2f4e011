"""Fixtures of the GGC tests: runs per test, one cache folder per session (memory embeddings, gates, query cache)
that reuses the project's movie KG store, small stand-in memories and a trained gate shared by the session.

Sizes are kept small: the MiniLM embedder runs a few hundred strings per second on two cores."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from ggc_helpers import TRAIN_LIMIT, base_config, environment


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory) -> Path:
    """A cache folder for the session whose ``kg`` entry links to the project's built movie KG."""
    from sparqlab.graphs.movies import ensure_store

    store = ensure_store()
    cache = tmp_path_factory.mktemp("ggc-cache")
    (cache / "kg").symlink_to(store.parent.parent, target_is_directory=True)
    return cache


@pytest.fixture(autouse=True)
def isolated_paths(tmp_path, monkeypatch, session_cache):
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("SPARQLAB_CACHE", str(session_cache))
    monkeypatch.setenv("SPARQLAB_FIGURES", str(tmp_path / "figures"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return tmp_path


@pytest.fixture(scope="session")
def movies(session_cache):
    from sparqlab.kg import open_kg

    with environment(SPARQLAB_CACHE=str(session_cache)):
        kg = open_kg("movies")
    yield kg
    kg.close()


@pytest.fixture(scope="session")
def trained(session_cache, movies, tmp_path_factory):
    """A tfidf gate trained on the generator's output over mcqa-movies train[:TRAIN_LIMIT] (its data run kept)."""
    from sparqlab.experiments.ggc import gate_from_generator_run
    from sparqlab.methods.ggc import GateSettings

    with environment(SPARQLAB_CACHE=str(session_cache), SPARQLAB_RUNS=str(tmp_path_factory.mktemp("gate-runs"))):
        config = base_config(dataset="mcqa-movies", split="train", limit=TRAIN_LIMIT)
        return gate_from_generator_run(GateSettings("tfidf"), config, kg=movies,
                                       folder=tmp_path_factory.mktemp("gate") / "tfidf")
