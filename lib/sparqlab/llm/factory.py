"""Turning a model name or a run's model config into a model: stand-ins for ``standin-*`` names, the
OpenAI-compatible backend for every other name (imported only then: it loads the ``openai`` SDK, which a
stand-in never needs)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparqlab.core.environment import model_defaults
from sparqlab.core.labels import note_model
from sparqlab.llm.base import ChatModel
from sparqlab.llm.cache import CachedModel
from sparqlab.llm.local_transformers import LOCAL_PREFIX, local_model
from sparqlab.llm.replicas import ReplicaModel, replica_urls
from sparqlab.llm.standins import STANDIN_PREFIX, create_standin


def get_model(name_or_spec: str | Mapping[str, Any] | ChatModel | None = None, **kwargs: Any) -> ChatModel:
    """A model without cache.

    ``name_or_spec`` is a name (``standin-echo``, ``openai/gpt-oss-120b``), a dict ``{"model": name, **kwargs}``,
    a ready model (returned as is), or ``None`` for ``SPARQLAB_MODEL``. ``kwargs`` go to the stand-in's factory
    (e.g. ``delay_ms``) or to :class:`OpenAIModel` (``base_url``, ``api_key``, ``max_retries``, ``timeout_s``,
    ``http_transport``). A ``base_url`` listing several URLs (``A,B,C``) is one model on several replicas
    (:class:`~sparqlab.llm.replicas.ReplicaModel`; each replica's client does not retry by default: the other
    replicas do).
    A stand-in name with a ``base_url`` means that stand-in served over HTTP (``sparqlab serve-model``): the
    OpenAI-compatible backend, still marked ``is_standin``.
    """
    if isinstance(name_or_spec, ChatModel):
        if kwargs:
            raise TypeError(f"options {sorted(kwargs)} given with a ready model {name_or_spec.name!r}")
        return name_or_spec
    if isinstance(name_or_spec, Mapping):
        spec = dict(name_or_spec)
        name = spec.pop("model", None)
        kwargs = {**spec, **kwargs}
    else:
        name = name_or_spec
    name, url = model_defaults(name, kwargs.get("base_url"), served_over_http=served_over_http)
    if url:
        kwargs["base_url"] = url
    if not name:
        raise ValueError("no model given: pass a name (a stand-in such as 'standin-echo', or a served model such "
                         "as 'openai/gpt-oss-120b') or set SPARQLAB_MODEL")
    if name.startswith(STANDIN_PREFIX) and kwargs.get("base_url") is None:
        kwargs.pop("base_url", None)  # e.g. a notebook's ``model_url = None``: the in-process stand-in
        return create_standin(name, **kwargs)
    if name.startswith(LOCAL_PREFIX):  # a transformers folder run in process (options: adapter, served_name)
        return local_model(name, **kwargs)
    from sparqlab.llm.openai_backend import OpenAIModel, model_endpoint

    urls = replica_urls(kwargs.get("base_url"))
    if len(urls) > 1:  # several servers of one model: a replica set; a failing one's calls go to the others
        kwargs.pop("base_url", None)
        kwargs.setdefault("max_retries", 0)
        endpoints = [model_endpoint(name, url) for url in urls]
        return ReplicaModel([OpenAIModel(name, base_url=url, **kwargs) for url in endpoints], endpoints)
    return OpenAIModel(name, **kwargs)


def served_over_http(name: str) -> bool:
    """Whether :func:`get_model` reaches model ``name`` over HTTP when no ``base_url`` is given (then it needs
    an endpoint): not a stand-in, not a local transformers folder."""
    return not name.startswith((STANDIN_PREFIX, LOCAL_PREFIX))


def make_model(config: str | Mapping[str, Any] | ChatModel | None = None) -> CachedModel:
    """The model a run uses: :func:`get_model` behind the response cache.

    ``config`` is a name, a ready model (default cache) or a dict with ``model`` plus optional ``cache_mode``
    (``read_write`` default, ``off``, ``replay``), ``cache_path`` (default ``cache_dir()/responses.sqlite``; a
    run may point it into its results folder so the cache ships with the results) and any :func:`get_model`
    options.
    """
    if isinstance(config, ChatModel):
        return _noted(CachedModel(config))
    if config is None or isinstance(config, str):
        config = {"model": config}
    config = dict(config)
    mode = config.pop("cache_mode", "read_write")
    path = config.pop("cache_path", None)
    return _noted(CachedModel(get_model(config), path=path, mode=mode))


def _noted(model: CachedModel) -> CachedModel:
    """``model``, noted as made by this process (what a notebook's banner says it was made from)."""
    note_model(model.name, model.is_standin)
    return model

