"""An MCQA-style question set generated over the movie KG from the 64 MCQA question templates.

MCQA (Hoang et al. 2024; templates CC BY 4.0, ``data/mcqa/``) names each question type by a role path and a
constraint, ``<topic>_to_..._to_<answer>_constraint_<role>``. Four query shapes cover all 64 types; gold SPARQL is
label-based in the GGC paper's style (appendix C) and gold answers are what it returns on the movie KG:

* ``actor_to_movie_constraint_genre`` — films linked to the topic and to the constraint entity;
* ``movie_to_writer_constraint_movie`` — entities linked to both the topic film and the constraint film;
* ``movie_to_actor_to_movie_constraint_tag`` — other films sharing an entity with the topic film and linked to
  the constraint entity;
* ``writer_to_movie_to_actor_constraint_movie`` — entities (other than the topic) of the topic's films that are
  also linked to the constraint film.

Generation is seeded: topic and constraint entities are sampled per question type from the KG's label graph,
each candidate's gold query is executed, and questions with no answers or more than ``max_answers`` (MCQA's
``ANS_LEN_THRESHOLD`` of 10) are dropped. Splits are filled round-robin over question types, so every split is
balanced across types as far as the KG allows, and no (type, topic, constraint) instance is in two splits.
"""

from __future__ import annotations

import json
import math
import random
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sparqlab.core.paths import data_dir
from sparqlab.data.files import require_file, write_questions
from sparqlab.data.movieqa import PREFIXES, ROLE_RELATION, run_label_queries, select_labels
from sparqlab.data.question import Question
from sparqlab.sparql.tree import quote_literal

if TYPE_CHECKING:
    from sparqlab.kg.base import KnowledgeGraph

DEFAULT_SIZES = {"train": 5000, "dev": 500, "test": 1000}
SPLIT_FILL_ORDER = ("test", "dev", "train")
"""Smaller splits are filled first so that a type with few instances still appears in every evaluation split."""
POOL_MARGIN = 1.25
"""Candidates sought per type, relative to an even share of the total, so short types' slack can be refilled."""


def templates_path() -> Path:
    """The bundled MCQA template file."""
    return data_dir() / "mcqa" / "all_selected_qn_templates.json"


@dataclass(frozen=True)
class QuestionType:
    """An MCQA question type parsed into its role path (topic first) and constraint role."""

    name: str
    path: tuple[str, ...]
    constraint: str

    @classmethod
    def parse(cls, name: str) -> QuestionType:
        path, separator, constraint = name.partition("_constraint_")
        roles = tuple(path.split("_to_"))
        unknown = [r for r in (*roles, constraint) if r != "movie" and r not in ROLE_RELATION]
        if not separator or len(roles) not in (2, 3) or unknown:
            raise ValueError(f"not an MCQA question type this generator knows: {name!r}")
        return cls(name, roles, constraint)

    @property
    def topic(self) -> str:
        return self.path[0]

    @property
    def hops(self) -> int:
        return len(self.path) - 1

    @property
    def linking_role(self) -> str:
        """The non-film role whose relation the path follows (the topic's, or the answer's/intermediate's)."""
        return self.path[1] if self.topic == "movie" else self.topic


class LabelGraph:
    """The movie KG's nine relations as label-level adjacency: ``films[rel][obj]``, ``objects[rel][film]``."""

    def __init__(self, triples: list[tuple[str, str, str]]):
        self.objects: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        self.films: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        for film, relation, obj in triples:
            self.objects[relation][film].add(obj)
            self.films[relation][obj].add(film)

    @classmethod
    def from_kg(cls, kg: KnowledgeGraph) -> LabelGraph:
        """All (film label, relation label, object label) triples of the MetaQA relations, read by one query."""
        relations = " ".join(quote_literal(r) for r in sorted(set(ROLE_RELATION.values())))
        sparql = (
            f"{PREFIXES}SELECT ?s ?r ?o WHERE {{\n"
            f"  VALUES ?r {{ {relations} }}\n"
            "  ?rel rdfs:label ?r . ?film ?rel ?obj . ?film rdfs:label ?s . ?obj rdfs:label ?o .\n}"
        )
        return cls([(row["s"], row["r"], row["o"]) for row in kg.bulk_values(sparql)])

    def related(self, role: str, film: str) -> set[str]:
        """Entities in ``role`` of ``film``."""
        return self.objects[ROLE_RELATION[role]].get(film, set())

    def films_of(self, role: str, entity: str) -> set[str]:
        """Films having ``entity`` in ``role``."""
        return self.films[ROLE_RELATION[role]].get(entity, set())

    def topics(self, role: str) -> list[str]:
        """Every entity that some film has in ``role``, sorted."""
        relation = ROLE_RELATION[role]
        return sorted(self.films[relation])

    def film_topics(self, role: str) -> list[str]:
        """Films that have an entity in ``role``, sorted."""
        return sorted(self.objects[ROLE_RELATION[role]])


@dataclass(frozen=True)
class Instance:
    """One sampled (question type, topic entity label, constraint entity label)."""

    qtype: QuestionType
    topic: str
    constraint: str


def _candidates(graph: LabelGraph, qtype: QuestionType, topic: str) -> tuple[list[str], Callable[[str], set[str]]]:
    """Constraint entities that can apply to ``topic`` and a function giving the answers for one of them."""
    link, con = qtype.linking_role, qtype.constraint
    if qtype.hops == 1 and qtype.topic != "movie":
        films = graph.films_of(link, topic)
        options = {c for f in films for c in graph.related(con, f)} - ({topic} if con == link else set())
        return sorted(options), lambda c: {f for f in films if c in graph.related(con, f)}
    if qtype.hops == 1:
        shared = graph.related(link, topic)
        options = {f for e in shared for f in graph.films_of(link, e)} - {topic}
        return sorted(options), lambda c: shared & graph.related(link, c)
    if qtype.topic == "movie":
        films = {f for e in graph.related(link, topic) for f in graph.films_of(link, e)} - {topic}
        options = {c for f in films for c in graph.related(con, f)}
        return sorted(options), lambda c: {f for f in films if c in graph.related(con, f)}
    answer_role = qtype.path[2]
    reached = {e for f in graph.films_of(link, topic) for e in graph.related(answer_role, f)} - {topic}
    options = {f for e in reached for f in graph.films_of(answer_role, e)}
    return sorted(options), lambda c: reached & graph.related(answer_role, c)


def sample_instances(
    graph: LabelGraph, qtype: QuestionType, count: int, rng: random.Random, max_answers: int
) -> list[Instance]:
    """Up to ``count`` distinct instances whose predicted answer set has 1..``max_answers`` members.

    Random (topic, constraint) draws first; if they fall short (types whose constraint few films have, such as
    IMDb votes), every topic is then tried in a seeded order with each of its constraints.
    """
    topics = graph.film_topics(qtype.linking_role) if qtype.topic == "movie" else graph.topics(qtype.topic)
    candidates: dict[str, tuple[list[str], Callable[[str], set[str]]]] = {}
    found: dict[tuple[str, str], Instance] = {}

    def consider(topic: str, constraint: str) -> None:
        if (topic, constraint) not in found and 1 <= len(candidates[topic][1](constraint)) <= max_answers:
            found[(topic, constraint)] = Instance(qtype, topic, constraint)

    def options(topic: str) -> list[str]:
        if topic not in candidates:
            candidates[topic] = _candidates(graph, qtype, topic)
        return candidates[topic][0]

    for _ in range(count * 20):
        if len(found) == count:
            return list(found.values())
        topic = rng.choice(topics)
        if options(topic):
            consider(topic, rng.choice(options(topic)))
    for topic in rng.sample(topics, len(topics)):
        for constraint in rng.sample(options(topic), len(options(topic))):
            if len(found) == count:
                return list(found.values())
            consider(topic, constraint)
    return list(found.values())


def gold_query(instance: Instance) -> str:
    """The label-based gold SPARQL of an instance, in the query shapes of the GGC paper's appendix C.

    Triple patterns are the paper's; their order puts the named entities first, because the embedded store
    joins in the written order (about 100x faster than starting from the relation's triples).
    """
    qtype, topic, con = instance.qtype, quote_literal(instance.topic), quote_literal(instance.constraint)
    link = quote_literal(ROLE_RELATION[qtype.linking_role])
    if qtype.hops == 1 and qtype.topic != "movie":
        return select_labels(
            [
                f"?e1 rdfs:label {topic} .",
                f"?rel1 rdfs:label {link} .",
                f"?e2 rdfs:label {con} .",
                f"?rel2 rdfs:label {quote_literal(ROLE_RELATION[qtype.constraint])} .",
                "?uri ?rel1 ?e1 ; ?rel2 ?e2 ; rdfs:label ?label .",
            ]
        )
    if qtype.hops == 1:
        return select_labels(
            [
                f"?e1 rdfs:label {topic} ; ?rel ?uri .",
                f"?rel rdfs:label {link} .",
                f"?e3 rdfs:label {con} ; ?rel ?uri .",
                "?uri rdfs:label ?label .",
            ]
        )
    if qtype.topic == "movie":
        return select_labels(
            [
                f"?e1 rdfs:label {topic} ; ?rel1 ?e2 .",
                f"?rel1 rdfs:label {link} .",
                f"?e4 rdfs:label {con} .",
                f"?rel4 rdfs:label {quote_literal(ROLE_RELATION[qtype.constraint])} .",
                "?uri ?rel1 ?e2 ; ?rel4 ?e4 ; rdfs:label ?label .",
                f"FILTER(?label != {topic})",
            ]
        )
    return select_labels(
        [
            f"?e1 rdfs:label {topic} .",
            f"?rel1 rdfs:label {link} .",
            "?e2 ?rel1 ?e1 ; ?rel2 ?uri .",
            f"?rel2 rdfs:label {quote_literal(ROLE_RELATION[qtype.path[2]])} .",
            f"?e3 rdfs:label {con} ; ?rel2 ?uri .",
            "?uri rdfs:label ?label .",
            f"FILTER(?label != {topic})",
        ]
    )


def load_templates(path: str | Path | None = None) -> dict[str, list[str]]:
    """``{question type: [template, ...]}`` from the MCQA template file."""
    return json.loads(require_file(path or templates_path()).read_text(encoding="utf-8"))


def generate_mcqa(
    kg: KnowledgeGraph,
    sizes: dict[str, int] | None = None,
    seed: int = 0,
    *,
    templates: dict[str, list[str]] | None = None,
    max_answers: int = 10,
    workers: int = 2,
) -> dict[str, list[Question]]:
    """Generate the splits (``{"train": [...], "dev": [...], "test": [...]}`` by default sizes).

    The same KG, templates, sizes and seed always give the same questions in the same order.
    """
    sizes = dict(DEFAULT_SIZES if sizes is None else sizes)
    templates = load_templates() if templates is None else templates
    graph = LabelGraph.from_kg(kg)
    qtypes = [QuestionType.parse(name) for name in sorted(templates)]
    share = math.ceil(sum(sizes.values()) / len(qtypes) * POOL_MARGIN)
    candidates = [
        instance
        for qtype in qtypes
        for instance in sample_instances(graph, qtype, share, random.Random(f"{seed}:{qtype.name}"), max_answers)
    ]
    answers = run_label_queries(kg, [gold_query(instance) for instance in candidates], workers)
    pools: dict[str, list[tuple[Instance, list[str]]]] = defaultdict(list)
    for instance, labels in zip(candidates, answers, strict=True):
        if 1 <= len(labels) <= max_answers:
            pools[instance.qtype.name].append((instance, labels))
    rng = random.Random(f"{seed}:splits")
    allocated = _allocate(pools, sizes, rng)
    return {
        split: [
            _question(f"{split}_{number}", instance, labels, templates, rng)
            for number, (instance, labels) in enumerate(allocated[split])
        ]
        for split in sizes
    }


def _allocate(pools: dict[str, list], sizes: dict[str, int], rng: random.Random) -> dict[str, list]:
    """Fill each split round-robin over question types (in a seeded order), then shuffle it."""
    cursor = dict.fromkeys(pools, 0)
    allocated: dict[str, list] = {}
    order = sorted(
        sizes, key=lambda s: SPLIT_FILL_ORDER.index(s) if s in SPLIT_FILL_ORDER else len(SPLIT_FILL_ORDER)
    )
    for split in order:
        chosen: list = []
        names = sorted(pools)
        rng.shuffle(names)
        while len(chosen) < sizes[split] and any(cursor[n] < len(pools[n]) for n in names):
            for name in names:
                if len(chosen) == sizes[split]:
                    break
                if cursor[name] < len(pools[name]):
                    chosen.append(pools[name][cursor[name]])
                    cursor[name] += 1
        rng.shuffle(chosen)
        allocated[split] = chosen
    return allocated


def _question(
    qid: str, instance: Instance, labels: list[str], templates: dict[str, list[str]], rng: random.Random
) -> Question:
    qtype = instance.qtype
    choices = templates[qtype.name]
    index = rng.randrange(len(choices))
    text = (
        choices[index]
        .replace(f"[{qtype.topic}]", f"[{instance.topic}]")
        .replace(f"[con_{qtype.constraint}]", f"[{instance.constraint}]")
    )
    return Question(
        id=qid,
        text=text,
        gold_sparql=gold_query(instance),
        gold_answers=labels,
        topic_entities=[instance.topic, instance.constraint],
        kg="movies",
        metadata={
            "qtype": qtype.name,
            "template_id": f"{qtype.name}/{index}",
            "hops": qtype.hops,
            "topic_role": qtype.topic,
            "constraint_role": qtype.constraint,
            "answer_role": qtype.path[-1],
        },
    )


def write_mcqa(splits: dict[str, list[Question]], out_dir: str | Path) -> dict[str, Path]:
    """Write each split to ``out_dir/<split>.jsonl``; returns the paths."""
    out_dir = Path(out_dir)
    paths = {}
    for split, questions in splits.items():
        paths[split] = out_dir / f"{split}.jsonl"
        write_questions(paths[split], questions)
    return paths
