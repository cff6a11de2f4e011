"""Agentic text-to-SPARQL: a SPINACH-style ReAct agent (``spinach``) and SAGA schema-aware grounding (``saga``).

Importing the package registers both methods, their tools and the ``standin-agent`` stand-in controller.
"""

from sparqlab.methods.agents import standins, tools  # noqa: F401  (register the stand-in and the tools)
from sparqlab.methods.agents.actions import Action, parse_action, parse_reparse
from sparqlab.methods.agents.controller import AgentConfig, AgentMethod, AgentSession, session_of
from sparqlab.methods.agents.prompts import PROMPTS
from sparqlab.methods.agents.saga import Saga, SagaConfig
from sparqlab.methods.agents.spinach import Spinach

__all__ = ["PROMPTS", "Action", "AgentConfig", "AgentMethod", "AgentSession", "Saga", "SagaConfig", "Spinach",
           "parse_action", "parse_reparse", "session_of"]
