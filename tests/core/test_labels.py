"""What an output says it was made from: the stand-in banner, the real model's name, or both for a mix; and the
models a notebook kernel notes for its executed copy."""

from sparqlab.core.environment import models_recorded
from sparqlab.core.labels import STANDIN_BANNER, merged, note_model, noted_models, provenance_line


def test_stand_ins_get_the_banner_real_models_their_name_and_a_mix_says_which_is_which():
    assert provenance_line({"standin-agent": True}) == f"{STANDIN_BANNER} (standin-agent)"
    assert provenance_line({"smollm2-135m": False}) == "model: smollm2-135m"
    mixed = provenance_line(merged([("smollm2-135m", False), ("standin-corrector", True), (None, None)]))
    assert mixed == (f"model: smollm2-135m; mixed with standin-corrector [standin]: {STANDIN_BANNER} "
                     "for what they made")
    assert provenance_line({}) is None  # no model (e.g. a figure of the data alone): nothing to say


def test_a_name_is_a_stand_in_if_any_run_of_it_was_one():
    assert merged([("m", False), ("m", True), ("m", None)]) == {"m": True}


def test_models_noted_in_a_kernel_reach_the_record_and_only_while_it_is_set(tmp_path):
    record = tmp_path / "state" / "models.jsonl"
    note_model("before", False)
    with models_recorded(record):
        note_model("standin-echo", True)
        note_model("smollm2-135m", False)
        assert noted_models() == {"standin-echo": True, "smollm2-135m": False}
    note_model("after", False)
    assert noted_models(record) == {"standin-echo": True, "smollm2-135m": False}
    assert noted_models() == {}  # unset again: nothing recorded, nothing read
    with models_recorded(record):  # a new execution starts from an empty record
        assert noted_models() == {}
