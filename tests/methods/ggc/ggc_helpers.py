"""Shared settings of the GGC tests: the stand-ins' small memory, question counts and the run configuration.
(A named module, not ``conftest``: test folders share the name ``conftest``, so importing from it picks whichever
folder's came first.)"""

from __future__ import annotations

from contextlib import contextmanager

import pytest

MEMORY = {"start": 4000, "stop": 4200}
"""The stand-ins' memory in these tests: 200 questions of mcqa-movies train (disjoint from the gate data)."""
TRAIN_LIMIT = 80
TEST_LIMIT = 16


def base_config(**changes):
    """A run configuration with the GGC stand-ins on the small memory (response cache off)."""
    from sparqlab.runs import RunConfig

    settings = dict(experiment="ggc-test", kg="movies", model="standin-knn", model_options=dict(MEMORY),
                    model_roles={"corrector": {"model": "standin-corrector", "options": dict(MEMORY)}},
                    cache="off", concurrency=2, progress=False)
    return RunConfig(**{**settings, **changes})


@contextmanager
def environment(**values: str):
    """Environment variables set for a session or module fixture's set-up only: a plain ``os.environ`` write there
    outlives the GGC tests and moves the cache or runs folder of whichever test the worker runs next."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in values.items():
            patch.setenv(name, value)
        yield
