"""Shared fixtures of the CK25 / TEXT2SPARQL tests: the ck25 KG (built once into the cache) and its questions."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def ck25_kg():
    """The ck25 KG without a query cache, shared by the session's tests."""
    from sparqlab.kg import open_kg

    kg = open_kg("ck25", cache=False)
    yield kg
    kg.close()


@pytest.fixture(scope="session")
def ck25_questions():
    from sparqlab.data import registry

    return registry.load("ck25")
