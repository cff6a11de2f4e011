"""What the movie-KG question sets (MetaQA, generated MCQA) share: the role vocabulary of their question types and
label-based gold SPARQL in the GGC paper's style.

Question types name entity roles (``movie_to_actor_to_movie``, ``actor_to_movie_constraint_genre``); every hop
between two roles follows the MetaQA relation of the non-movie role (all nine relations go from a film). Queries
find entities and relations by ``rdfs:label`` and return ``?label ?uri``, so gold answers are labels, as MetaQA's
and MCQA's are.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from typing import TYPE_CHECKING

from sparqlab.graphs.movies import FILM, RELATION_RANGES
from sparqlab.kg.profiles import RDFS
from sparqlab.kg.results import QueryResult

if TYPE_CHECKING:
    from sparqlab.kg.base import KnowledgeGraph

ROLE_RELATION = {
    "actor": "starred_actors",
    "director": "directed_by",
    "writer": "written_by",
    "year": "release_year",
    "genre": "has_genre",
    "tag": "has_tags",
    "tags": "has_tags",
    "language": "in_language",
    "imdb_rating": "has_imdb_rating",
    "imdb_vote": "has_imdb_votes",
}
"""The relation linking a film to an entity in each role (MetaQA uses ``tags`` and ``tag`` both)."""

ROLE_CLASS = {"movie": FILM, **{role: RELATION_RANGES[relation] for role, relation in ROLE_RELATION.items()}}
"""The movie-KG class of an entity in each role."""

PREFIXES = f"PREFIX rdfs: <{RDFS}>\n"
"""The one prefix gold queries declare, so they run as written on any endpoint."""


def hop_relations(roles: list[str]) -> list[tuple[str, bool]]:
    """``(relation, forward)`` for each hop of a role path; ``forward`` when the hop leaves a film."""
    return [
        (ROLE_RELATION[target], True) if source == "movie" else (ROLE_RELATION[source], False)
        for source, target in pairwise(roles)
    ]


def select_labels(patterns: Iterable[str]) -> str:
    """A ``SELECT DISTINCT ?label ?uri`` query over the given triple patterns and filters."""
    body = "".join(f"  {pattern}\n" for pattern in patterns)
    return f"{PREFIXES}SELECT DISTINCT ?label ?uri WHERE {{\n{body}}}"


def result_labels(result: QueryResult) -> list[str]:
    """The sorted distinct ``?label`` values of a label query's result."""
    return sorted({term.value for term in result.column("label")})


def run_label_queries(kg: KnowledgeGraph, queries: Sequence[str], workers: int = 2) -> list[list[str]]:
    """The ``?label`` values each label query returns on ``kg`` (in input order; queries run in parallel).

    Raises if a result hits the row cap, since a cut result cannot be compared with a gold answer set.
    """

    def run(sparql: str) -> list[str]:
        result = kg.query(sparql, timeout_s=120, max_rows=1_000_000, use_cache=False)
        if result.truncated:
            raise RuntimeError(f"a gold query's result was cut at the row cap:\n{sparql}")
        return result_labels(result)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(run, queries))
