"""Text-to-SPARQL methods: the platform every method plugs into, and the one-shot baseline.

Importing this package registers the stand-in models of this layer (``standin-keyword-rules``), so
``sparqlab serve-model`` and ``sparqlab.llm.get_model`` know them by name. Method packages above this layer
(agents, ggc, desq, genop) register themselves with :func:`register_method`; :func:`get_method` finds them.
"""

from typing import Any

from sparqlab.methods import (
    keyword_rules,  # noqa: F401  (registers standin-keyword-rules)
    schema_rules,  # noqa: F401  (registers standin-schema-rules)
)
from sparqlab.methods.base import Method, MethodOutput
from sparqlab.methods.config import MethodConfig
from sparqlab.methods.context import PrepareContext, QuestionContext, RoleModel
from sparqlab.methods.direct import DirectConfig, DirectSparql
from sparqlab.methods.parsing import extract_sparql
from sparqlab.methods.prompts import PromptTemplate, prompt_table
from sparqlab.methods.registry import METHOD_MODULES, get_method, method_names, register_method
from sparqlab.methods.tools import Observation, Tool, get_tools, register_tool
from sparqlab.methods.trace import Trace, TraceEvent, conversation


def make_method(name: str, **options: Any) -> Method:
    """A method by its registered name, with config ``options`` (validated; errors list the valid names)."""
    return get_method(name)(**options)


__all__ = [
    "METHOD_MODULES", "DirectConfig", "DirectSparql", "Method", "MethodConfig", "MethodOutput", "Observation",
    "PrepareContext", "PromptTemplate", "QuestionContext", "RoleModel", "Tool", "Trace", "TraceEvent",
    "conversation", "extract_sparql", "get_method", "get_tools", "make_method", "method_names", "prompt_table",
    "register_method", "register_tool",
]
