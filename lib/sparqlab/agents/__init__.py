"""Agentic text-to-SPARQL: a SPINACH-style ReAct agent (``spinach``) and SAGA schema-aware grounding (``saga``).

Importing the package registers both methods, their tools and the ``standin-agent`` stand-in controller.
"""

from sparqlab.agents import standin, tools  # noqa: F401  (register the stand-in and the tools)
from sparqlab.agents.actions import Action, parse_action, parse_reparse
from sparqlab.agents.core import AgentConfig, AgentMethod, AgentSession, session_of
from sparqlab.agents.prompts import PROMPTS
from sparqlab.agents.saga import Saga, SagaConfig
from sparqlab.agents.spinach import Spinach

__all__ = ["PROMPTS", "Action", "AgentConfig", "AgentMethod", "AgentSession", "Saga", "SagaConfig", "Spinach",
           "parse_action", "parse_reparse", "session_of"]
