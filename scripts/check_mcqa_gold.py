"""Check the MCQA-style gold answers against an independent reading of the raw MetaQA KB file (no SPARQL, no RDF).

The gold answers of ``mcqa-movies`` are by construction what the gold SPARQL returns on the movie KG, so checking
them against the KG only shows that data and KG agree. This script evaluates what each question type *means*
(MCQA, Hoang et al. 2024: the type name ``<topic>_to_..._to_<answer>_constraint_<role>`` is a walk along roles from
the topic entity whose end is kept when it is linked to the constraint entity; MCQA's generator then drops the
topic entity itself from the answers) in plain Python over ``data/metaqa/kb_derived_kb.txt.gz`` (``s|r|o`` lines),
and compares it with the stored gold answers and, for a sample, with what the gold query returns on the KG.

It deliberately shares no code with ``sparqlab.data`` (its own reader, role table and walk), so a wrong relation,
direction, filter or constraint in the generator's gold queries shows up as a mismatch.

    .venv/bin/python scripts/check_mcqa_gold.py [--kg-sample 300] [--workers 2]
"""

from __future__ import annotations

import argparse
import gzip
import random
import sys
import time
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
RAW_KB = ROOT / "data" / "metaqa" / "kb_derived_kb.txt.gz"

MOVIE = "movie"
RELATION_OF_ROLE = {
    "actor": "starred_actors", "director": "directed_by", "writer": "written_by", "year": "release_year",
    "genre": "has_genre", "tag": "has_tags", "language": "in_language", "imdb_rating": "has_imdb_rating",
    "imdb_vote": "has_imdb_votes", "tags": "has_tags",
}
"""MCQA's (and MetaQA's, which also says ``tags``) role names and the MetaQA relation that links a film to an
entity in that role (every MetaQA fact is ``film|relation|entity``)."""
PERSON_RELATIONS = {"starred_actors", "directed_by", "written_by"}


def node_kind(relation: str) -> str:
    """The kind of entity at the object end of a MetaQA relation: one person can act, direct and write."""
    return "person" if relation in PERSON_RELATIONS else relation


class RawKB:
    """The MetaQA facts as typed nodes ``(name, kind)``: a name used as a film and as a person is two nodes, as in
    MCQA's KG where entities have ids (kind ``film`` for subjects, else from the relation)."""

    def __init__(self, lines: list[str]):
        self.objects: dict[tuple[str, str], set[str]] = defaultdict(set)  # (film, relation) -> entity names
        self.subjects: dict[tuple[str, str], set[str]] = defaultdict(set)  # (relation, entity) -> film names
        for number, line in enumerate(lines, start=1):
            parts = line.split("|")
            if len(parts) != 3:
                raise ValueError(f"raw KB line {number}: expected subject|relation|object, got {line!r}")
            film, relation, entity = parts
            self.objects[(film, relation)].add(entity)
            self.subjects[(relation, entity)].add(film)

    @classmethod
    def read(cls, path: str | Path = RAW_KB) -> RawKB:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            return cls(handle.read().splitlines())

    def step(self, nodes: set[tuple[str, str]], source: str, target: str) -> set[tuple[str, str]]:
        """One hop of a role walk: from films to their entities in ``target``, or from entities in ``source`` to
        the films that have them in that role."""
        if source == MOVIE:
            relation = RELATION_OF_ROLE[target]
            return {(e, node_kind(relation)) for film, _ in nodes for e in self.objects.get((film, relation), ())}
        relation = RELATION_OF_ROLE[source]
        return {(f, "film") for name, _ in nodes for f in self.subjects.get((relation, name), ())}

    def linked(self, node: tuple[str, str], role: str, constraint: str, constraint_role: str) -> bool:
        """Whether an answer node in ``role`` is linked to the constraint entity in ``constraint_role``."""
        name, kind = node
        if kind == "film":
            return constraint in self.objects.get((name, RELATION_OF_ROLE[constraint_role]), ())
        if constraint_role == MOVIE:
            return name in self.objects.get((constraint, RELATION_OF_ROLE[role]), ())
        raise ValueError(f"no MCQA type constrains a {role} by a {constraint_role}")


def meaning(kb: RawKB, qtype: str, topic: str, constraint: str) -> set[str]:
    """The answer names of an MCQA question type for one topic and constraint, by walking the KB."""
    path, _, constraint_role = qtype.partition("_constraint_")
    roles = path.split("_to_")
    start_kind = "film" if roles[0] == MOVIE else node_kind(RELATION_OF_ROLE[roles[0]])
    start = (topic, start_kind)
    nodes = {start}
    for source, target in zip(roles, roles[1:], strict=False):
        nodes = kb.step(nodes, source, target)
    answers = {node for node in nodes if node != start and kb.linked(node, roles[-1], constraint, constraint_role)}
    return {name for name, _ in answers}


def question_meaning(kb: RawKB, question) -> set[str]:
    """:func:`meaning` of a generated question (its type from the metadata, entities as the text names them)."""
    topic, constraint = question.topic_entities
    return meaning(kb, question.metadata["qtype"], topic, constraint)


def compare(kb: RawKB, questions) -> Counter:
    """Per question type, how many questions' gold answers differ from the KB meaning; prints the first few."""
    wrong: Counter[str] = Counter()
    for question in questions:
        expected, got = question_meaning(kb, question), set(question.gold_answers)
        if expected != got:
            wrong[question.metadata["qtype"]] += 1
            if sum(wrong.values()) <= 3:
                tqdm.write(f"  {question.id} {question.text!r}: KB meaning only {sorted(expected - got)[:5]}, "
                      f"gold only {sorted(got - expected)[:5]}")
    return wrong


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kg-sample", type=int, default=300,
                        help="questions per split whose gold query is also executed on the KG (default 300)")
    parser.add_argument("--workers", type=int, default=2, help="parallel KG queries (default 2)")
    args = parser.parse_args(argv)

    from sparqlab.data import load
    from sparqlab.data.movieqa import run_label_queries
    from sparqlab.kg import open_kg

    start = time.perf_counter()
    kb = RawKB.read()
    ok = True
    with open_kg("movies", workers=args.workers) as kg:
        for split in tqdm(("test", "dev", "train"), desc="splits", unit="split"):
            questions = load("mcqa-movies", split=split)
            wrong = compare(kb, questions)
            sample = random.Random(0).sample(questions, min(args.kg_sample, len(questions)))
            executed = run_label_queries(kg, [q.gold_sparql for q in sample], args.workers)
            wrong_kg = compare(kb, [replace(q, gold_answers=got) for q, got in zip(sample, executed, strict=True)])
            types = len({q.metadata["qtype"] for q in questions})
            tqdm.write(f"mcqa-movies {split}: {len(questions) - sum(wrong.values())}/{len(questions)} stored gold "
                  f"answer sets equal the raw-KB meaning ({types} types); gold query on the KG: "
                  f"{len(sample) - sum(wrong_kg.values())}/{len(sample)}")
            for qtype, count in (wrong + wrong_kg).most_common():
                tqdm.write(f"    {count:5d}  {qtype}")
            ok &= not wrong and not wrong_kg
    print(f"({time.perf_counter() - start:.1f}s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
