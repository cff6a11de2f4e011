"""Fixtures of the schema tests: the Wikidata-shaped test KG (embedded, no query cache) and its schema index."""

from pathlib import Path

import pytest

from sparqlab.core.paths import PROJECT_ROOT

WIKIDATA_TEST_TTL = PROJECT_ROOT / "data" / "wikidata_test" / "wikidata_test.ttl"


@pytest.fixture(scope="session")
def wd_kg():
    from sparqlab.kg import open_kg

    kg = open_kg(WIKIDATA_TEST_TTL, profile="wikidata", search="local", cache=False)
    yield kg
    kg.close()


@pytest.fixture(scope="session")
def wd_index(wd_kg):
    from sparqlab.methods.agents.schema import build_schema_index

    return build_schema_index(wd_kg, progress=False)


@pytest.fixture(scope="session")
def ttl_path() -> Path:
    return WIKIDATA_TEST_TTL
