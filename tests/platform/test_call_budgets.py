"""Per-call-kind budgets and reasoning settings and the sampling precedence (item 8)."""

from __future__ import annotations

import asyncio

import pytest

from sparqlab.data.question import Question
from sparqlab.llm import ChatRequest, StandinModel
from sparqlab.methods import get_method, method_names
from sparqlab.platform.context import QuestionContext, RoleModel

MODEL_METHODS = [name for name in method_names() if get_method(name).roles]
"""Every registered method that calls a model (tests/core/test_plugins.py checks every method package registers)."""


@pytest.mark.parametrize("name", MODEL_METHODS)
def test_every_call_kind_has_a_budget_and_a_reasoning_field(name):
    config_class = get_method(name).config_class
    assert config_class.call_kinds, f"{name} declares no call kinds"
    fields = set(config_class.field_names())
    for kind in config_class.call_kinds:
        assert {f"{kind}_max_tokens", f"{kind}_reasoning_effort"} <= fields, (name, kind)
    kind = config_class.call_kinds[-1]
    params = config_class.from_options({f"{kind}_max_tokens": "77", f"{kind}_reasoning_effort": "high"}
                                       ).call_params(kind)
    assert (params["max_tokens"], params["reasoning_effort"]) == (77, "high")


class Recorder(StandinModel):
    name = "standin-recorder-test"

    def __init__(self):
        super().__init__()
        self.requests: list[ChatRequest] = []

    def respond(self, request: ChatRequest) -> str:
        self.requests.append(request)
        return "ok"


def _chat(role_params, defaults, **fixed):
    model = Recorder()
    ctx = QuestionContext(Question("q", "?"), kg=None, models={"generator": RoleModel("generator", model, role_params)})
    asyncio.run(ctx.chat([{"role": "user", "content": "hi"}], kind="generate", defaults=defaults, **fixed))
    return model.requests[0]


def test_explicit_role_settings_win_over_method_defaults_and_fixed_params_win_over_both():
    request = _chat({"temperature": 0.0, "seed": 1}, {"temperature": 1.0, "top_p": 0.9, "max_tokens": 50})
    assert (request.temperature, request.top_p, request.max_tokens, request.seed) == (0.0, 0.9, 50, 1)
    request = _chat({"seed": 1}, {"temperature": 1.0}, seed=7)
    assert (request.temperature, request.seed) == (1.0, 7)
    request = _chat({"reasoning_effort": "low"}, {"reasoning_effort": "high", "max_tokens": None})
    assert dict(request.extra) == {"reasoning_effort": "low"} and request.max_tokens is None


def test_reasoning_effort_is_a_request_field_and_part_of_the_cache_key():
    low = ChatRequest.build("m", "hi", reasoning_effort="low")
    assert dict(low.extra) == {"reasoning_effort": "low"}
    assert low != ChatRequest.build("m", "hi", reasoning_effort="high") != ChatRequest.build("m", "hi")

