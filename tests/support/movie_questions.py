"""A small, stable selection of MetaQA 1-hop questions on the movie KG, for end-to-end agent tests."""

from __future__ import annotations

from sparqlab.data import load
from sparqlab.data.question import Question

RELATION_OF_QTYPE = {"movie_to_director": "directed_by", "actor_to_movie": "starred_actors",
                     "movie_to_year": "release_year", "movie_to_genre": "has_genre", "writer_to_movie": "written_by",
                     "movie_to_language": "in_language"}
"""The movie KG relation each of six MetaQA 1-hop question types asks for."""


def movie_questions() -> list[Question]:
    """The first question of each of the six question types of :data:`RELATION_OF_QTYPE` (stable dataset order)."""
    chosen = {}
    for question in load("metaqa-1hop", "test"):
        qtype = question.metadata.get("qtype")
        if qtype in RELATION_OF_QTYPE and qtype not in chosen:
            chosen[qtype] = question
    return list(chosen.values())
