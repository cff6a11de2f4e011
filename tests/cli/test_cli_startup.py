"""Start-up imports of the ``sparqlab`` command: building the parser (what ``--help`` and every dispatch do
before a handler runs) loads none of the heavy libraries; handlers import what they need."""

import subprocess
import sys

HEAVY = ("openai", "pandas", "torch", "sklearn", "matplotlib", "rdflib", "sentence_transformers")


def test_building_the_parser_imports_no_heavy_library():
    code = ("import sys, sparqlab.cli; from sparqlab.cli import build_parser; build_parser(); "
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_lazy_names_still_import():
    code = ("from sparqlab.llm import OpenAIModel, make_model; from sparqlab.methods.ggc import sweep, stage_frame; "
            "print(OpenAIModel.__name__, sweep.__module__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["OpenAIModel", "sparqlab.methods.ggc.metrics"]
