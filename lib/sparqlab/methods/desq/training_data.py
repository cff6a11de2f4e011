"""DeSQ's training-data builder ``desq``, registered with :mod:`sparqlab.train.data`: two fine-tuning records per
question from its gold decomposition — question → atomic constraints, and question + constraints → the two-part
structured output (:func:`~sparqlab.methods.desq.generation.finetune_records`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sparqlab.data.question import Question
from sparqlab.methods.desq.fragments import scheme_for
from sparqlab.methods.desq.generation import finetune_records, gold_example
from sparqlab.methods.desq.kb_memory import catalogue_entries, describer
from sparqlab.methods.desq.metrics import gold_sparql_for
from sparqlab.sparql.tree import SparqlParseError
from sparqlab.train.data import register_builder


@register_builder("desq", "dataset", needs_kg=True,
                  description="two records per question: constraints, structured output")
def desq_records(questions: Sequence[Question], kg: Any, progress: bool = True) -> tuple[list[dict], dict]:
    """DeSQ fine-tuning records from gold decompositions; questions whose gold query does not decompose are
    skipped (as DeSQ's ``prepare`` skips them) and counted as ``undecomposable``. Slot labels come from the KG (a
    local store) or, on Wikidata, from the entries of ``memory=wikidata``; an id neither knows is ``null``."""
    from tqdm.auto import tqdm

    labels = ({e.id: e for e in catalogue_entries(kg.profile)}  # gold slots labelled as memory=catalogue does
              if kg.profile.catalogue is not None else None)
    scheme, describe = scheme_for(kg.profile), describer(labels, kg)
    examples, skipped = [], 0
    for question in tqdm(questions, desc="DeSQ gold decompositions", unit="q", disable=not progress):
        try:
            examples.append(gold_example(question, scheme, describe, gold_sparql_for(question, kg)))
        except (ValueError, SparqlParseError):
            skipped += 1
    return finetune_records(examples, scheme), {"undecomposable": skipped}
