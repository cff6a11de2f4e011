"""Fixtures of the schema tests: the Wikidata-shaped test KGs (embedded, no query cache) and their schema index."""

import pytest


@pytest.fixture(scope="session")
def wd_kg(wikidata_ttl):
    from support.wikidata_fixtures import open_wikidata

    kg = open_wikidata(wikidata_ttl)
    yield kg
    kg.close()


@pytest.fixture(scope="session")
def wd_index(wd_kg):
    from sparqlab.methods.agents.schema import build_schema_index

    return build_schema_index(wd_kg, progress=False)


@pytest.fixture(scope="session")
def ttl_path(wikidata_ttl):
    return wikidata_ttl
