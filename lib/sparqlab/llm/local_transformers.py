"""A chat model run in this process with transformers, optionally with a LoRA adapter (peft): the backend behind
``local:`` model names (:func:`sparqlab.llm.factory.get_model`), so ``sparqlab train serve`` and
:func:`sparqlab.serving.model_server.serve_in_background` can serve a fine-tuned adapter on CPU for tests and small checks.
For real models, serve the adapter with vLLM (``--enable-lora --lora-modules NAME=DIR``; docs/methods.md, "Fine-tuning").

The prompt is the tokenizer's chat template with the generation prompt, exactly as training formatted it
(:mod:`sparqlab.train.records`); decoding is greedy at temperature 0 and sampled otherwise, up to ``max_tokens``
(default :data:`DEFAULT_MAX_TOKENS`), cut at the first ``stop`` string. Usage counts are the tokenizer's.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
import time
from pathlib import Path
from typing import Any

from sparqlab.core.extras import require
from sparqlab.llm.base import ChatModel, ChatRequest, ChatResponse, Usage
from sparqlab.llm.errors import ContextOverflow, ModelError

LOCAL_PREFIX = "local:"
"""A model name ``local:<folder>`` is a transformers model folder loaded in process."""

DEFAULT_MAX_TOKENS = 256

STANDIN_CONFIG_KEY = "sparqlab_standin"
"""Set in the ``config.json`` of the tiny random models (:mod:`sparqlab.train.tiny`): a model built on such a base,
adapter or not, is a stand-in wherever it is served."""


class LocalTransformersModel(ChatModel):
    """A local causal LM (``base``: a model folder) with an optional LoRA ``adapter`` folder, served as ``name``
    (default: the adapter's folder name, else the base folder's name). ``device``: ``cpu`` (default) or ``cuda``.
    Generation runs on a worker thread, one request at a time."""

    def __init__(self, base: str | Path, adapter: str | Path | None = None, name: str | None = None,
                 device: str = "cpu"):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from transformers import AutoModelForCausalLM, AutoTokenizer

        base, adapter = Path(base), Path(adapter) if adapter else None
        for label, folder in (("base model", base), ("adapter", adapter)):
            if folder is not None and not folder.is_dir():
                raise FileNotFoundError(f"{label} folder {folder} does not exist")
        self.name = name or (adapter.name if adapter else base.name)
        self.root = str(adapter or base)  # what /v1/models reports as the served weights (vLLM's field)
        self.base, self.adapter = str(base), str(adapter) if adapter else None
        self.tokenizer = AutoTokenizer.from_pretrained(str(adapter or base))
        if self.tokenizer.chat_template is None:
            raise ValueError(f"{adapter or base} has no chat template to format requests with")
        import torch

        # a half-precision folder (a converted GGUF model) computes in float32 on CPU, as it was trained
        model = AutoModelForCausalLM.from_pretrained(str(base),
                                                     **({"dtype": torch.float32} if device == "cpu" else {}))
        self.is_standin = bool(getattr(model.config, STANDIN_CONFIG_KEY, False))
        if adapter is not None:
            require("train", what="serving a LoRA adapter")
            from peft import PeftModel

            model = PeftModel.from_pretrained(model, str(adapter))
        self.model = model.to(device).eval()
        weights = adapter / "adapter_model.safetensors" if adapter else None
        self._adapter_digest = (hashlib.sha256(weights.read_bytes()).hexdigest()
                                if weights is not None and weights.is_file() else None)
        self.device = device
        self._lock = threading.Lock()

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        return await asyncio.to_thread(self._generate, request)

    def _generate(self, request: ChatRequest) -> ChatResponse:
        import torch

        started = time.monotonic()
        messages = [{"role": role, "content": content} for role, content in request.messages]
        try:
            prompt = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        except Exception as error:  # a template that refuses the roles given (e.g. no system turn)
            raise ModelError(f"the chat template of {self.name} cannot format these messages: {error}") from error
        ids = self.tokenizer(prompt, add_special_tokens=False, return_tensors="pt")["input_ids"].to(self.device)
        limit = getattr(self.model.config, "max_position_embeddings", None)
        budget = request.max_tokens or DEFAULT_MAX_TOKENS
        if limit is not None and ids.shape[1] + (request.max_tokens or 1) > limit:  # vLLM's check and message
            raise ContextOverflow(f"This model's maximum context length is {limit} tokens. However, you requested "
                                  f"{ids.shape[1] + (request.max_tokens or 0)} tokens ({ids.shape[1]} in the "
                                  f"messages, {request.max_tokens or 0} in the completion).")
        if limit is not None and request.max_tokens is None:
            budget = min(budget, limit - ids.shape[1])
        options: dict[str, Any] = {"max_new_tokens": budget,
                                   "pad_token_id": self.tokenizer.pad_token_id or self.tokenizer.eos_token_id,
                                   "eos_token_id": self.tokenizer.eos_token_id}
        if request.temperature > 0:
            options.update(do_sample=True, temperature=request.temperature, top_p=request.top_p)
        else:
            options.update(do_sample=False)
        with self._lock, torch.no_grad():
            if request.seed is not None:
                torch.manual_seed(request.seed)
            output = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), **options)
        new = output[0, ids.shape[1]:].tolist()
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        finish = "stop" if new and new[-1] == self.tokenizer.eos_token_id else "length"
        for stop in request.stop:
            if stop and stop in text:
                text, finish = text[:text.index(stop)], "stop"
        return ChatResponse(text, Usage(ids.shape[1], len(new)), time.monotonic() - started, finish, self.name)

    async def served_identity(self) -> dict[str, Any] | None:
        """The weights behind the name, so the response cache tells a retrained adapter from the last one: the
        base folder and the sha256 of the adapter's weights file."""
        return {"root": self.root, "base": self.base, "adapter_sha256": self._adapter_digest}

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "base": self.base, "adapter": self.adapter}


def local_model(name: str, **kwargs: Any) -> LocalTransformersModel:
    """The model of a ``local:<base folder>`` name; ``kwargs``: ``adapter``, ``served_name`` (the name it
    answers to), ``device``."""
    unknown = sorted(set(kwargs) - {"adapter", "served_name", "device"})
    if unknown:
        raise TypeError(f"options {unknown} do not apply to a local model; use adapter, served_name, device")
    return LocalTransformersModel(name.removeprefix(LOCAL_PREFIX), kwargs.get("adapter"), kwargs.get("served_name"),
                                  kwargs.get("device", "cpu"))
