import pytest


@pytest.fixture(scope="session")
def movies_store():
    """The movie KG store, built on first use into the project cache (the CLI opens it by name)."""
    from sparqlab.graphs.movies import ensure_store

    return ensure_store()
