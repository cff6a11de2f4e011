"""Any OpenAI-compatible chat endpoint (vLLM, SGLang, llama.cpp server, OpenAI) through the official ``openai``
client.

Retries are the client's own: on connection errors, timeouts, 408, 409, 429 and 5xx it retries up to
``max_retries`` times with exponential backoff (0.5 s doubling up to 8 s, with jitter, honouring ``Retry-After``).
Errors that retrying cannot fix become typed :mod:`sparqlab.llm.errors` with a message that says what to do.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from typing import Any
from urllib.parse import urlsplit

import openai

from sparqlab.llm.base import ChatModel, ChatRequest, ChatResponse, Usage
from sparqlab.llm.errors import ContextOverflow, ModelError, ModelRequestError, ModelUnavailable, UnknownModel
from sparqlab.llm.standins import STANDIN_PREFIX, standin_names

CONTEXT_OVERFLOW = re.compile(r"maximum context length|longer than the maximum model length|context length exceeded",
                              re.IGNORECASE)
"""How vLLM (and OpenAI) word a request that does not fit the model's context."""

PLACEHOLDER_API_KEY = "EMPTY"
"""Sent when no key is configured: local servers (vLLM without ``--api-key``) accept any key."""


def normalise_base_url(url: str) -> str:
    """Add the ``/v1`` that OpenAI-compatible servers expect when the URL has no path (``http://host:8000``)."""
    url = url.rstrip("/")
    return url + "/v1" if urlsplit(url).path in ("", "/") else url


def model_endpoint(name: str, base_url: str | None = None) -> str:
    """The /v1 URL serving model ``name``: ``base_url``, else ``SPARQLAB_MODEL_URL``. Neither is an error, never a
    silent guess at a local default port; the one rule and message of the Python API and the CLI (issue 24)."""
    url = base_url or os.environ.get("SPARQLAB_MODEL_URL")
    if not url:
        raise ValueError(
            f"model {name!r} is served by an OpenAI-compatible server, but no endpoint is given: pass its URL "
            "(--model-url http://HOST:PORT/v1 on the command line, base_url= or model_url= in Python) or set "
            f"SPARQLAB_MODEL_URL; offline, use a stand-in ({', '.join(standin_names())})")
    return normalise_base_url(url)


class OpenAIModel(ChatModel):
    """A model behind an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    ``model``, ``base_url`` and ``api_key`` default to ``SPARQLAB_MODEL``, ``SPARQLAB_MODEL_URL`` (no default: without
    either, :func:`model_endpoint` refuses) and ``SPARQLAB_API_KEY`` (else a placeholder, fine for vLLM). ``timeout_s`` bounds
    one attempt; reasoning models can take minutes for a long answer, hence the generous default.
    A served stand-in (name ``standin-*``) stays marked ``is_standin``.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_retries: int = 4,
        timeout_s: float = 600.0,
        connect_timeout_s: float = 10.0,
    ):
        name = model or os.environ.get("SPARQLAB_MODEL")
        if not name:
            raise ValueError("no model name: pass model=... or set SPARQLAB_MODEL")
        self.name = name
        self.is_standin = name.startswith(STANDIN_PREFIX)
        self.base_url = model_endpoint(name, base_url)
        self._api_key = api_key or os.environ.get("SPARQLAB_API_KEY") or PLACEHOLDER_API_KEY
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.connect_timeout_s = connect_timeout_s
        self._clients: dict[asyncio.AbstractEventLoop, openai.AsyncOpenAI] = {}

    def _client(self) -> openai.AsyncOpenAI:
        """The client of the running event loop: an async connection pool belongs to one loop, and blocking
        calls (``complete``, ``chat_sync``) each run in a fresh loop."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            for stale in [other for other in self._clients if other.is_closed()]:
                del self._clients[stale]  # a loop that ended without aclose(): let its client go
            client = self._clients[loop] = openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self._api_key,
                max_retries=self.max_retries,
                timeout=openai.Timeout(self.timeout_s, connect=min(self.connect_timeout_s, self.timeout_s)),
            )
        return client

    async def aclose(self) -> None:
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        params: dict[str, Any] = {
            "model": request.model,
            "messages": request.message_dicts,
            "temperature": request.temperature,
            "top_p": request.top_p,
        }
        if request.max_tokens is not None:
            params["max_tokens"] = request.max_tokens
        if request.stop:
            params["stop"] = list(request.stop)
        if request.seed is not None:
            params["seed"] = request.seed
        if request.extra:
            params["extra_body"] = dict(request.extra)
        start = time.perf_counter()
        try:
            raw = await self._client().chat.completions.with_raw_response.create(**params)
            completion = raw.parse()
        except openai.APIError as error:
            raise await self._translate(error, request.model) from error
        latency = time.perf_counter() - start
        if not completion.choices:
            raise ModelRequestError(f"{self.base_url} returned a completion without choices for {request.model!r}")
        choice = completion.choices[0]
        message = choice.message
        text = message.content or ""
        reasoning = getattr(message, "reasoning", None) or getattr(message, "reasoning_content", None)
        if completion.usage is not None:
            usage = Usage(completion.usage.prompt_tokens or 0, completion.usage.completion_tokens or 0)
        else:
            usage = Usage.estimate(request, text)
        return ChatResponse(
            text=text,
            usage=usage,
            latency_s=latency,
            finish_reason=choice.finish_reason or "stop",
            model=completion.model or request.model,
            reasoning=reasoning,
            retries=raw.retries_taken,
        )

    async def list_models(self) -> list[str]:
        """The model names the endpoint serves (``GET /v1/models``), without retries."""
        try:
            page = await self._client().with_options(max_retries=0).models.list()
        except openai.APIError as error:
            raise await self._translate(error, self.name, diagnose=False) from error
        return [entry.id for entry in page.data]

    async def served_identity(self) -> dict[str, Any] | None:
        """This model's ``/v1/models`` entry as identity: ``id``, ``root`` (vLLM: the weights served under the
        name) and ``max_model_len``; ``None`` when the server does not list the name. Raises
        :class:`ModelUnavailable` when the endpoint cannot be reached."""
        try:
            page = await self._client().with_options(max_retries=0).models.list()
        except openai.APIError as error:
            raise await self._translate(error, self.name, diagnose=False) from error
        for entry in page.data:
            if entry.id == self.name:
                extra = entry.model_extra or {}
                return {"id": entry.id, "root": extra.get("root"), "max_model_len": extra.get("max_model_len")}
        return None

    async def check(self) -> None:
        """Fail fast, before a run: raise :class:`ModelUnavailable` or :class:`UnknownModel` unless the endpoint
        is up and serves this model."""
        served = await self.list_models()
        if self.name not in served:
            raise UnknownModel(self._unknown_model_message(self.name, served))

    def _unreachable_message(self, cause: str) -> str:
        if self.is_standin:
            start = f"`sparqlab serve-model --model {self.name} --port 8000`"
        else:
            start = (f"`vllm serve {self.name} --host 127.0.0.1 --port 8000`, or an offline stand-in with "
                     f"`sparqlab serve-model --model standin-echo --port 8000`")
        return (
            f"cannot reach the model endpoint {self.base_url} ({cause}). Start a server there, e.g. {start} "
            f"(SPARQLAB_MODEL_URL=http://127.0.0.1:8000/v1); or point SPARQLAB_MODEL_URL (base_url=...) at the "
            f"server's /v1 URL."
        )

    def _unknown_model_message(self, name: str, served: list[str]) -> str:
        offered = ", ".join(repr(model) for model in served) or "no models"
        return (
            f"the endpoint {self.base_url} does not serve the model {name!r}; it serves {offered}. "
            f"Set SPARQLAB_MODEL (or model=...) to one of these."
        )

    async def _translate(self, error: openai.APIError, name: str, diagnose: bool = True) -> ModelError:
        """The typed error for a failed call, after the client's retries are spent."""
        attempts = f"after {self.max_retries} retries"
        if isinstance(error, openai.APITimeoutError):
            return ModelUnavailable(
                f"the model endpoint {self.base_url} did not answer within {self.timeout_s:g} s ({attempts}); "
                f"raise timeout_s, lower max_tokens, or check the server's load"
            )
        if isinstance(error, openai.APIConnectionError):
            cause = str(error.__cause__ or error)
            return ModelUnavailable(self._unreachable_message(cause))
        if not isinstance(error, openai.APIStatusError):
            return ModelRequestError(f"{self.base_url} sent a response that is not a valid completion: {error}")
        status = error.status_code
        if status == 400 and CONTEXT_OVERFLOW.search(error.message or ""):
            return ContextOverflow(f"{self.base_url}: the request does not fit {name!r}'s context: {error.message}")
        if status in (408, 409, 429) or status >= 500:
            return ModelUnavailable(f"the model endpoint {self.base_url} kept failing with HTTP {status} "
                                    f"({attempts}): {error.message}")
        if diagnose and status in (400, 404):
            try:
                served = await self.list_models()
            except ModelError:
                served = None
            if served is not None and name not in served:
                return UnknownModel(self._unknown_model_message(name, served))
        hint = {401: " Check the API key (SPARQLAB_API_KEY or api_key=...).",
                403: " Check the API key (SPARQLAB_API_KEY or api_key=...) and its access to this model.",
                404: " Check that the base URL ends in /v1."}.get(status, "")
        return ModelRequestError(f"{self.base_url} refused the request for {name!r} (HTTP {status}): "
                                 f"{error.message}.{hint}")

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "base_url": self.base_url,
            "max_retries": self.max_retries,
            "timeout_s": self.timeout_s,
        }
