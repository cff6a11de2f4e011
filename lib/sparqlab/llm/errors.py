"""Typed errors of the model layer. Each message says what went wrong and what to try."""

from __future__ import annotations

from sparqlab.core.errors import InfrastructureError


class ModelError(Exception):
    """Base class: anything that stops a chat call from producing a response."""

    kind = "model_error"


class ModelUnavailable(ModelError, InfrastructureError):
    """The endpoint could not be reached, or kept failing (timeouts, 429, 5xx) after every retry: the run stops."""

    kind = "model_unavailable"


class ModelOverloaded(ModelUnavailable):
    """The endpoint answers, but kept refusing or timing out (429, 503, 5xx, timeouts) after every retry: it is
    overloaded. Lower the concurrency, or let the client retry for longer (``max_retries``, ``timeout_s``)."""


class ExternalUnavailable(ModelUnavailable):
    """A TEXT2SPARQL system asked as a method (``external``) could not be reached, or kept failing, after every
    retry: it plays the model's part, so the run stops as for an unreachable model (finished questions are saved;
    the same call resumes)."""

    kind = "external_unavailable"


class UnknownModel(ModelError, InfrastructureError):
    """The endpoint is up but does not serve the requested model name: the run stops."""

    kind = "unknown_model"


class ModelReplyInvalid(ModelUnavailable):
    """The endpoint answered 200 with something that is not a completion (an error body, HTML from a proxy, non-JSON):
    the server is broken, not the request, so the run stops. The message keeps the body's own words (e.g. "CUDA out
    of memory")."""

    kind = "model_reply_invalid"


class ModelRequestError(ModelError):
    """The endpoint refused the request (4xx other than an unknown model), e.g. a prompt longer than the context."""

    kind = "model_request_error"


class ModelAccessRefused(ModelRequestError, InfrastructureError):
    """The endpoint refuses every request of this client (HTTP 401, 403: the API key; 404: not an OpenAI-compatible
    /v1 URL): each later question would be refused the same way, so the run stops."""

    kind = "model_access_refused"


class ContextOverflow(ModelRequestError):
    """The prompt (plus ``max_tokens``) does not fit the served model's context (vLLM's 400 "maximum context
    length"). A method may trim what it can and retry once; else the question ends as ``context_overflow``."""

    kind = "context_overflow"


class ReplayMiss(ModelError, InfrastructureError):
    """Replay mode serves only cached responses, and this request has none: the run stops."""

    kind = "replay_miss"
