"""SAGA's mechanisms are one nested typed config (``SagaConfig.features``): read as typed attributes, a misspelt
flag is an error when the config is built, the ablations switch exactly one feature, and a session is SAGA's
exactly when it carries the features."""

import pytest

from sparqlab.data.question import Question
from sparqlab.experiments.agents import ABLATIONS
from sparqlab.methods import make_method
from sparqlab.methods.agents.controller import AgentConfig, AgentSession
from sparqlab.methods.agents.features import SagaFeatures
from sparqlab.methods.agents.saga import SagaConfig
from sparqlab.methods.agents.tools import saga_features


def test_features_are_a_nested_typed_config():
    config = SagaConfig.from_options({"features.type_filter": "false", "features.variable_types": "trace",
                                      "schema_coverage": "0.5"})
    assert config.features == SagaFeatures(type_filter=False, variable_types="trace")
    assert config.schema_coverage == 0.5 and SagaConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ValueError, match="did you mean 'type_filter'"):
        SagaConfig.from_options({"features.type_filtr": "false"})  # a misspelt flag is not a silent "off"
    with pytest.raises(ValueError, match="'type_filter'"):
        SagaConfig.from_options({"type_filter": "false"})  # the flat spelling is gone
    with pytest.raises(ValueError, match="variable_types"):
        SagaFeatures(variable_types="both")


def test_each_ablation_removes_exactly_one_feature():
    full = make_method("saga").config.features
    for label, options in ABLATIONS.items():
        features = make_method("saga", **options).config.features
        changed = [n for n in SagaFeatures.field_names() if getattr(features, n) != getattr(full, n)]
        assert len(changed) == (0 if label == "Full SAGA" else 1), label


def test_a_session_is_saga_s_exactly_when_it_has_the_features():
    question = Question(id="q", text="who?")
    spinach = AgentSession(AgentConfig(), question)
    assert not spinach.schema_aware
    with pytest.raises(RuntimeError, match="without SAGA's features"):
        saga_features(spinach)
    saga = AgentSession(SagaConfig(), question, features=SagaFeatures(type_state=False))
    assert saga.schema_aware and saga_features(saga).type_state is False
