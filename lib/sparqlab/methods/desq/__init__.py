"""DeSQ (decomposition-based SPARQL generation): gold decompositions into atomic constraints and SPARQL fragments,
the structured output with URI grounding, the deterministic assembler, the KB memory, the seven URI correction
strategies, and the method ``desq`` on the platform. Specification: ``../shared/papers/desq-decomposition-sparql.md``.

Importing the package registers the method ``desq``, the stand-in model ``standin-desq`` and the ``desq``
training-data builder.
"""

from sparqlab.methods.desq import training_data  # noqa: F401  (registers the desq data builder)
from sparqlab.methods.desq.correction import STRATEGIES, Correction, Retriever, correct_slots, word_jaccard
from sparqlab.methods.desq.fragments import (
    AssemblyError,
    Decomposition,
    Fragment,
    IdScheme,
    Slot,
    assemble,
    decompose,
    scheme_for,
)
from sparqlab.methods.desq.generation import DesqStandin, Example, finetune_records, gold_example, nearest
from sparqlab.methods.desq.kb_memory import Entry, KBMemory, catalogue_entries, kg_entries
from sparqlab.methods.desq.method import Desq, DesqConfig
from sparqlab.methods.desq.metrics import score_output, strategy_long, strategy_table
from sparqlab.methods.desq.prompts import PROMPTS
from sparqlab.methods.desq.structured import ParsedOutput, output_json, parse_output
from sparqlab.methods.desq.verbalise import template_constraint, verbalise_with_model, verbalise_with_templates

__all__ = [
    "PROMPTS", "STRATEGIES", "AssemblyError", "Correction", "Decomposition", "Desq", "DesqConfig", "DesqStandin",
    "Entry", "catalogue_entries", "Example", "Fragment", "IdScheme", "KBMemory", "ParsedOutput", "Retriever", "Slot", "assemble",
    "correct_slots", "decompose", "finetune_records", "gold_example", "kg_entries", "nearest", "output_json",
    "parse_output", "scheme_for", "score_output", "strategy_long", "strategy_table", "template_constraint",
    "verbalise_with_model", "verbalise_with_templates", "word_jaccard",
]
