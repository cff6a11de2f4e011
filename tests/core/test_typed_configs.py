"""Typed configs all the way down: dotted options set a nested config's field, a misspelt name is an error at config
time, every field is documented, and command-line flags are generated from the classes."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

import pytest

from sparqlab.cli.config_options import add_config_arguments, config_from_arguments
from sparqlab.core.typed import is_config, is_optional
from sparqlab.platform import MethodConfig, get_method, method_names


@dataclass(frozen=True)
class Head(MethodConfig):
    """A nested component.

    - ``backend``: which backend.
    - ``c``: regularisation; ``seed``: the seed.
    """

    backend: str = "tfidf"
    c: float = 1.0
    seed: int = 42


@dataclass(frozen=True)
class Outer(MethodConfig):
    """An outer config.

    - ``threshold``: τ.
    - ``head``: the component (its default differs from the class's own defaults).
    - ``ids``: a list.
    """

    threshold: float = 0.5
    head: Head = field(default_factory=lambda: Head(seed=7))
    ids: tuple[str, ...] = ()


def test_a_dotted_option_sets_one_field_of_a_nested_config_keeping_the_field_default():
    config = Outer.from_options({"head.c": "2.5", "threshold": "0.3", "ids": "a,b"})
    assert config.head == Head(backend="tfidf", c=2.5, seed=7)
    assert config.threshold == 0.3 and config.ids == ("a", "b")
    assert Outer.from_options({"head": '{"backend": "sbert"}', "head.seed": "1"}).head == Head("sbert", 1.0, 1)


@pytest.mark.parametrize("options, message", [
    ({"head.sed": "1"}, "unknown option 'sed' .*did you mean 'seed'"),
    ({"treshold": "1"}, "did you mean 'threshold'"),
    ({"threshold.x": "1"}, "not a nested config"),
    ({"head.c": "big"}, "Head.c must be float"),
])
def test_misspelt_or_mistyped_options_fail_at_config_time(options, message):
    with pytest.raises(ValueError, match=message):
        Outer.from_options(options)


def test_generated_flags_parse_by_type_and_leave_unset_fields_at_their_defaults():
    parser = argparse.ArgumentParser()
    add_config_arguments(parser, Outer, skip=("ids",))
    args = parser.parse_args(["--head.c", "3", "--threshold", "0.9"])
    assert config_from_arguments(Outer, args, ids=("x",)) == Outer(0.9, Head(c=3.0, seed=7), ("x",))
    assert config_from_arguments(Outer, parser.parse_args([])) == Outer()
    with pytest.raises(SystemExit):
        parser.parse_args(["--ids", "a"])  # skipped: the command sets it itself
    assert "regularisation (default: 1.0)" in parser.format_help()


def _fields(config_class, prefix=""):
    for name, kind in config_class.field_types().items():
        inner = is_optional(kind)[1]
        yield config_class, prefix + name, name
        if is_config(inner):
            yield from _fields(inner, f"{prefix}{name}.")


@pytest.mark.parametrize("method", method_names())
def test_every_field_of_every_method_config_is_documented(method):
    undocumented = [dotted for owner, dotted, name in _fields(get_method(method).config_class)
                    if not owner.field_help().get(name)]
    assert not undocumented, f"{method}: add a docstring line for {undocumented}"
