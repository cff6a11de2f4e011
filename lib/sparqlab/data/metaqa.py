"""MetaQA vanilla 1/2/3-hop test questions over the movie KG, with gold SPARQL generated from the question type.

Files (``data/metaqa/qa/<k>-hop/``): ``qa_test.txt`` lines ``question<TAB>answer1|answer2|...`` with the topic
entity in ``[brackets]``, and ``qa_test_qtype.txt`` with the aligned question type (``movie_to_actor_to_movie``).

The gold query walks the type's relation path from the topic entity, found by label *and* class (a name can be a
film and a person at once). As in MetaQA's own construction, the topic entity is removed from the frontier of
every hop after the first (from hop 2 on the walk comes back to it: film -> actor -> the same film), by label, as
in the original KB where a name is one node. Hop 1 keeps a neighbour named like the topic (the film "Antwone
Fisher" written by Antwone Fisher is an answer in the 2-hop set; the 1-hop set has "Lemmy" starring Lemmy).
"""

from __future__ import annotations

import re
from pathlib import Path

from sparqlab.core.paths import data_dir
from sparqlab.data.files import require_file
from sparqlab.data.movieqa import ROLE_CLASS, hop_relations, select_labels
from sparqlab.data.question import Question
from sparqlab.graphs.movies import class_iri
from sparqlab.sparql.tree import quote_literal

_TOPIC = re.compile(r"\[([^\]]+)\]")


def path_query(topic: str, qtype: str) -> str:
    """Label-based SELECT of the entities reached from ``topic`` along ``qtype``'s relation path."""
    roles = qtype.split("_to_")
    hops = hop_relations(roles)
    relation_vars: dict[str, str] = {}
    patterns = [f"?e0 rdfs:label {quote_literal(topic)} ; a <{class_iri(ROLE_CLASS[roles[0]])}> ."]
    for number, (relation, forward) in enumerate(hops, start=1):
        if relation not in relation_vars:
            relation_vars[relation] = f"?rel{len(relation_vars) + 1}"
            patterns.append(f"{relation_vars[relation]} rdfs:label {quote_literal(relation)} .")
        last = number == len(hops)
        source, target = f"?e{number - 1}", "?uri" if last else f"?e{number}"
        subject, obj = (source, target) if forward else (target, source)
        patterns.append(f"{subject} {relation_vars[relation]} {obj} .")
        label = "?label" if last else f"?label{number}"
        if last or number > 1:
            patterns.append(f"{target} rdfs:label {label} .")
        if number > 1:
            patterns.append(f"FILTER({label} != {quote_literal(topic)})")
    return select_labels(patterns)


def load_metaqa(hops: int, split: str = "test", root: str | Path | None = None) -> list[Question]:
    """The MetaQA ``hops``-hop questions of ``split`` (only ``test`` is bundled)."""
    folder = Path(root or data_dir() / "metaqa" / "qa") / f"{hops}-hop"
    lines = require_file(folder / f"qa_{split}.txt").read_text(encoding="utf-8").splitlines()
    qtypes = require_file(folder / f"qa_{split}_qtype.txt").read_text(encoding="utf-8").splitlines()
    if len(lines) != len(qtypes):
        raise ValueError(f"{folder}: {len(lines)} questions but {len(qtypes)} question types")
    questions = []
    for number, (line, qtype) in enumerate(zip(lines, qtypes, strict=True)):
        where = f"{folder}/qa_{split}.txt:{number + 1}"
        if line.count("\t") != 1:
            raise ValueError(f"{where}: expected question<TAB>answer|answer|..., got {line!r}")
        text, answers = line.split("\t")
        topic = _TOPIC.search(text)
        if topic is None:
            raise ValueError(f"{where}: no [topic entity] in {text!r}")
        roles = qtype.split("_to_")
        questions.append(
            Question(
                id=f"{split}_{number}",
                text=text,
                gold_sparql=path_query(topic.group(1), qtype),
                gold_answers=list(dict.fromkeys(answers.split("|"))),
                topic_entities=[topic.group(1)],
                kg="movies",
                metadata={
                    "qtype": qtype,
                    "hops": hops,
                    "relation_path": [relation for relation, _ in hop_relations(roles)],
                    "topic_class": ROLE_CLASS[roles[0]],
                },
            )
        )
    return questions


def mismatch_kind(gold: set[str], got: set[str]) -> str:
    """Why a KG answer set differs from MetaQA's gold set (the 1-hop set's known causes, else ``other``).

    MetaQA's 1-hop answers come from WikiMovies, where films sharing a title (remakes) are separate; the MetaQA
    KB merges them into one node, so the KG returns the union of their neighbours. A few gold answers split a
    title at its comma ("Paris, Texas" -> "Paris", "Texas").
    """
    if gold < got:
        return "kg superset (same-title films merged in the MetaQA KB)"
    if got < gold:
        return "kg subset"
    if any(", " in label and set(label.split(", ")) <= gold - got for label in got - gold):
        return "gold split a title at its comma"
    return "other"
