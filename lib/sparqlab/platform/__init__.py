"""The method platform: what every text-to-SPARQL method plugs into.

A method (:class:`Method`) has a typed config (:class:`MethodConfig`), model roles, prompt tables
(:class:`PromptTemplate`), and answers one question at a time through a :class:`QuestionContext` (model calls per
role, KG tools, typed traces); once per run it may ``prepare`` through a :class:`PrepareContext` (artifact folders,
training questions, sub-runs). Method packages live in :mod:`sparqlab.methods` and are found through the plug-in
registry (:mod:`sparqlab.core.plugins`); no method package imports another.
"""

from sparqlab.platform.base import Method, MethodOutput
from sparqlab.platform.config import MethodConfig
from sparqlab.platform.context import PrepareContext, QuestionContext, RoleModel
from sparqlab.platform.parsing import extract_sparql
from sparqlab.platform.prompts import PromptTemplate, prompt_table
from sparqlab.platform.registry import get_method, make_method, method_from_config, method_names, register_method
from sparqlab.platform.tools import Observation, Tool, get_tools, register_tool
from sparqlab.platform.trace import Trace, TraceEvent, conversation

__all__ = [
    "Method", "MethodConfig", "MethodOutput", "Observation", "PrepareContext", "PromptTemplate", "QuestionContext",
    "RoleModel", "Tool", "Trace", "TraceEvent", "conversation", "extract_sparql", "get_method", "get_tools",
    "make_method", "method_from_config", "method_names", "prompt_table", "register_method", "register_tool",
]
