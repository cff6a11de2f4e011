"""GGCConfig holds the gate's settings as one nested typed config (``-o gate.backend=tfidf``), ``kg_feedback`` is
set in one place, and a loaded gate (``gate_path``) follows the one rule stated in GGCConfig's docstring."""

import json

import pytest
from ggc_helpers import base_config

from sparqlab.methods.ggc import GGC, GateSettings
from sparqlab.methods.ggc.gate import Gate
from sparqlab.methods.ggc.method import GGCConfig
from sparqlab.runs import run


def test_gate_settings_are_one_nested_typed_field():
    config = GGCConfig.from_options({"gate.backend": "tfidf", "gate.c": "2.5", "gate.mask_entities": "yes"})
    assert config.gate == GateSettings("tfidf", c=2.5, mask_entities=True)
    assert config.to_dict()["gate"]["backend"] == "tfidf" and "kg_feedback" not in config.to_dict()["gate"]
    assert GGCConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ValueError, match="did you mean 'backend'"):
        GGCConfig.from_options({"gate.bakend": "tfidf"})
    with pytest.raises(ValueError, match="'gate_c'"):
        GGCConfig.from_options({"gate_c": "2"})  # the old flat field is gone, and says so
    with pytest.raises(ValueError, match="must be one of"):
        GGCConfig.from_options({"gate.backend": "roberta"})
    with pytest.raises(TypeError):
        GateSettings("tfidf", True)  # noqa: FBT003 - settings after the backend are keyword-only


def test_a_loaded_gate_keeps_its_saved_settings_and_refuses_other_requests(trained):
    gate = Gate.load(trained.folder)
    method = GGC(mode="gated", gate_path=str(trained.folder))
    method.use_gate(gate, trained.digest)
    assert method.config.gate == gate.settings and method.config.gate.backend == "tfidf"  # default "encoder" took it
    same = GGC(mode="gated", gate_path=str(trained.folder), gate={"backend": "tfidf", "c": gate.settings.c})
    same.use_gate(gate, trained.digest)
    assert same.config == method.config
    with pytest.raises(ValueError, match=r"gate\.backend='sbert'") as error:
        GGC(mode="gated", gate_path=str(trained.folder), gate={"backend": "sbert", "c": 3.0}).use_gate(
            gate, trained.digest)
    assert "gate.c=3.0" in str(error.value)  # every clashing field is named
    with pytest.raises(ValueError, match="kg_feedback=True"):
        GGC(mode="gated", gate_path=str(trained.folder), kg_feedback=True).use_gate(gate, trained.digest)


def test_requested_but_unused_gate_fields_do_not_change_the_run_id(trained, movies, tmp_path, monkeypatch):
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path))
    config = base_config(dataset="mcqa-movies", split="test", limit=2)
    plain = run(GGC(mode="gated", gate_path=str(trained.folder)), config=config, kg=movies)
    spelled = run(GGC(mode="gated", gate_path=str(trained.folder), gate={"backend": "tfidf"}), config=config,
                  kg=movies)
    assert spelled.run_id == plain.run_id and spelled.answered == 0
    saved = json.loads((plain.run_dir / "config.json").read_text())["method"]
    assert saved["config"]["gate"] == Gate.load(trained.folder).settings.to_dict()
    assert saved["artifacts"]["gate"] == trained.digest and set(saved["artifacts"]) == {"gate", "conventions"}
    with pytest.raises(ValueError, match=r"gate\.backend='sbert'"):
        run(GGC(mode="gated", gate_path=str(trained.folder), gate={"backend": "sbert"}), config=config, kg=movies)
