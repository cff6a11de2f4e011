"""Benchmarks as :class:`Question` records: ``load(name_or_path, split=..., limit=...)``.

Names: ``metaqa-1hop``, ``metaqa-2hop``, ``metaqa-3hop``, ``mcqa-movies`` (movie KG); ``qald7``, ``qald10``,
``qald9plus``, ``wwq``, ``spinach``, ``lcquad2`` (Wikidata). A path to a JSONL file in the workbench's own format
(one :meth:`Question.to_dict` per line), or to a folder of ``<split>.jsonl`` files, works wherever a name does;
other packages register named datasets (docs/adding-a-dataset.md).
"""

from sparqlab.data.files import read_questions, write_questions
from sparqlab.data.question import Question
from sparqlab.data.registry import (
    DATASETS,
    Dataset,
    dataset_kg,
    dataset_names,
    load,
    register_dataset,
    training_source,
)

__all__ = ["DATASETS", "Dataset", "Question", "dataset_kg", "dataset_names", "load", "read_questions",
           "register_dataset", "training_source", "write_questions"]
