"""``spinach``: the SPINACH-style ReAct agent (Liu et al. 2024) as SAGA's paper runs it as a baseline — the
shared controller, plain search and execute, and an LLM pruning call on every looked-up neighbourhood; no
schema features."""

from __future__ import annotations

from sparqlab.methods.agents.controller import AgentConfig, AgentMethod
from sparqlab.platform import register_method


@register_method("spinach")
class Spinach(AgentMethod):
    """The ReAct loop over ``agent_search`` / ``agent_lookup`` (LLM-pruned) / ``agent_examples`` /
    ``agent_execute`` / ``agent_stop``."""

    config_class = AgentConfig
    action_tools = {"search": "agent_search", "lookup": "agent_lookup", "examples": "agent_examples",
                    "execute": "agent_execute", "stop": "agent_stop"}
