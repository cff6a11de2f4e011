"""The one YAML loader (issue 40): alias expansion is bounded before anything is built, everywhere YAML is read
(a KG's ``.kg.yaml``, a grid file under ``sweep --dry-run``); ordinary anchors still load as ``safe_load`` does."""

from __future__ import annotations

import time

import pytest
import yaml

from sparqlab.cli import main
from sparqlab.core.yaml_loader import YamlTooLarge, load_yaml
from sparqlab.graphs.derive import read_refinement

LEVELS = "\n".join(["  - &a [x, x, x, x, x, x, x, x, x, x]"] + [
    f"  - &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]" for i in range(9)])
"""Ten levels of ten aliases each (a "billion laughs"): under 500 bytes that stand for 10^10 values."""
BOMB = "notes:\n" + LEVELS + "\n"
GRID_BOMB = "methods: {direct: {method: direct}}\ndatasets: {metaqa-1hop: {}}\ndescription:\n" + LEVELS + "\n"


def test_an_alias_bomb_is_refused_fast_and_ordinary_anchors_load():
    assert len(GRID_BOMB) < 700
    start = time.monotonic()
    with pytest.raises(YamlTooLarge, match="more than 1,000,000 values"):
        load_yaml(BOMB)
    assert time.monotonic() - start < 1.0
    ordinary = "base: &base {temperature: 0, seed: 1}\nrun: {<<: *base, seed: 2}\nlist: [*base, *base]\n"
    assert load_yaml(ordinary) == yaml.safe_load(ordinary)
    assert load_yaml("") is None
    with pytest.raises(YamlTooLarge, match="contains it"):
        load_yaml("a: &a [1, *a]")
    with pytest.raises(yaml.YAMLError):  # Python tags stay refused
        load_yaml("!!python/object/apply:os.system [echo hi]")


def test_a_bomb_as_a_kg_refinement_is_a_clear_error_naming_the_file(tmp_path):
    path = tmp_path / "data.kg.yaml"
    path.write_text(BOMB, encoding="utf-8")
    with pytest.raises(ValueError, match=f"{path}.*more than 1,000,000 values"):
        read_refinement(path)


def test_a_bomb_grid_stops_sweep_dry_run_at_once(tmp_path, capsys):
    path = tmp_path / "grid.yaml"
    path.write_text(GRID_BOMB, encoding="utf-8")
    start = time.monotonic()
    assert main(["sweep", str(path), "--dry-run"]) == 1
    assert time.monotonic() - start < 2.0
    assert str(path) in capsys.readouterr().err
