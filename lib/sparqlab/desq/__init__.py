"""DeSQ (decomposition-based SPARQL generation): gold decompositions into atomic constraints and SPARQL fragments,
the structured output with URI grounding, the deterministic assembler, the KB memory, the seven URI correction
strategies, and the method ``desq`` on the platform. Specification: ``../shared/papers/desq-decomposition-sparql.md``.

Importing the package registers the method ``desq`` and the stand-in model ``standin-desq``.
"""

from sparqlab.desq.correction import STRATEGIES, Correction, Retriever, correct_slots, word_jaccard
from sparqlab.desq.evaluation import score_output, strategy_long, strategy_table
from sparqlab.desq.fragments import (
    AssemblyError,
    Decomposition,
    Fragment,
    IdScheme,
    Slot,
    assemble,
    decompose,
    scheme_for,
)
from sparqlab.desq.generation import DesqStandin, Example, finetune_records, gold_example, nearest
from sparqlab.desq.memory import Entry, KBMemory, kg_entries, wikidata_property_entries
from sparqlab.desq.method import Desq, DesqConfig
from sparqlab.desq.prompts import PROMPTS
from sparqlab.desq.structured import ParsedOutput, output_json, parse_output
from sparqlab.desq.verbalise import template_constraint, verbalise_with_model, verbalise_with_templates

__all__ = [
    "PROMPTS", "STRATEGIES", "AssemblyError", "Correction", "Decomposition", "Desq", "DesqConfig", "DesqStandin",
    "Entry", "Example", "Fragment", "IdScheme", "KBMemory", "ParsedOutput", "Retriever", "Slot", "assemble",
    "correct_slots", "decompose", "finetune_records", "gold_example", "kg_entries", "nearest", "output_json",
    "parse_output", "scheme_for", "score_output", "strategy_long", "strategy_table", "template_constraint",
    "verbalise_with_model", "verbalise_with_templates", "wikidata_property_entries", "word_jaccard",
]
