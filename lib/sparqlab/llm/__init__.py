"""Chat models behind one interface: any OpenAI-compatible endpoint, deterministic stand-ins, the response
cache with replay, accounting (the OpenAI-compatible server that serves them is :mod:`sparqlab.serving`).

Typical use::

    from sparqlab.llm import make_model
    model = make_model({"model": "standin-echo", "cache_path": run_dir / "responses.sqlite"})
    response = model.chat_sync("Who directed Alien?", temperature=0, max_tokens=64)

The embeddings are imported from their module (``sparqlab.llm.embeddings``), which loads heavier libraries; :class:`OpenAIModel` is imported on first use.
"""

from sparqlab.llm.accounting import UsageTotals, aggregate_usage
from sparqlab.llm.base import (
    ChatModel,
    ChatRequest,
    ChatResponse,
    InFlightLimit,
    Message,
    Usage,
    estimate_tokens,
)
from sparqlab.llm.cache import CACHE_MODES, CachedModel, default_cache_path, request_key
from sparqlab.llm.errors import (
    ContextOverflow,
    ModelError,
    ModelOverloaded,
    ModelRequestError,
    ModelUnavailable,
    ReplayMiss,
    UnknownModel,
)
from sparqlab.llm.factory import get_model, make_model
from sparqlab.llm.standins import (
    STANDIN_PREFIX,
    EchoStandin,
    LatencyStandin,
    RunBinding,
    StandinModel,
    bind_standins,
    create_standin,
    register_standin,
    standin_names,
)

__all__ = [
    "CACHE_MODES",
    "STANDIN_PREFIX",
    "RunBinding",
    "bind_standins",
    "CachedModel",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "EchoStandin",
    "InFlightLimit",
    "LatencyStandin",
    "Message",
    "ModelError",
    "ModelRequestError",
    "ModelOverloaded",
    "ModelUnavailable",
    "OpenAIModel",
    "ReplayMiss",
    "ContextOverflow",
    "StandinModel",
    "UnknownModel",
    "Usage",
    "UsageTotals",
    "aggregate_usage",
    "create_standin",
    "default_cache_path",
    "estimate_tokens",
    "get_model",
    "make_model",
    "register_standin",
    "request_key",
    "standin_names",
]


def __getattr__(name: str) -> type:
    """``OpenAIModel`` on first use (PEP 562): its module loads the ``openai`` SDK (~0.6 s), which every
    ``sparqlab`` command would otherwise pay at start-up (``sparqlab.cli`` imports :mod:`sparqlab.llm.errors`)."""
    if name == "OpenAIModel":
        from sparqlab.llm.openai_backend import OpenAIModel

        return OpenAIModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
