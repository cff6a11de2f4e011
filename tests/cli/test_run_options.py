"""Every door to a run shows the run settings of one declaration: the flags of ``run``, ``serve``, ``sweep``,
``table``, ``train gate`` and ``ggc sweep`` have the setting's name, help and default (or say which default they
use instead), all generated from RunConfig (the notebooks' parameters: tests/notebooks/test_notebook_sources.py)."""

from __future__ import annotations

import argparse

import pytest

from sparqlab.cli import build_parser, main
from sparqlab.cli.config_options import dest_of, display
from sparqlab.runs import RunConfig

COMMANDS = [("run",), ("serve",), ("sweep",), ("table",), ("train", "gate"), ("ggc", "sweep")]
LEAVES = {leaf.path: leaf for leaf in RunConfig.leaves().values()}


def command_parser(words: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = build_parser()
    for word in words:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
        parser = action.choices[word]
    return parser


@pytest.mark.parametrize("words", COMMANDS, ids=" ".join)
def test_each_command_takes_the_run_settings_by_their_declared_name_help_and_default(words):
    parser = command_parser(words)
    own = parser.get_default("run_defaults")
    by_dest = {action.dest: action for action in parser._actions}  # noqa: SLF001
    flags = {flag: action for action in parser._actions for flag in action.option_strings}  # noqa: SLF001
    shown = 0
    for path, leaf in LEAVES.items():
        flag = "--" + leaf.name.replace("_", "-")
        action = by_dest.get(dest_of(path))
        if action is None:  # not taken; a flag of that name is another declaration's (train gate's --seed: the gate's)
            assert flag not in flags or flags[flag].dest.startswith("config__"), f"{flag} is declared by hand"
            continue
        shown += 1
        assert flag in action.option_strings and action.default is None
        assert action.help.startswith(display(leaf.help).replace("%", "%%"))
        if leaf.name in own and own[leaf.name] != leaf.default:
            assert action.help.endswith(f"(default here: {own[leaf.name]!r}; declared: {leaf.default!r})")
        else:
            assert action.help.endswith(f"(default: {leaf.default!r})")
    assert shown >= 15, "the command takes the run settings"


def test_a_command_with_its_own_defaults_uses_and_shows_them(capsys):
    args = command_parser(("ggc", "sweep")).parse_args(["--gate-path", "g"])
    from sparqlab.cli.run_options import ggc_run_config

    config = ggc_run_config(args)
    assert (config.model, config.concurrency, config.cache, config.split) == ("standin-knn", 1, "off", "test")
    with pytest.raises(SystemExit):
        main(["ggc", "sweep", "--help"])
    assert "(default here: 'off'; declared: 'read_write')" in " ".join(capsys.readouterr().out.split())


def test_a_misspelt_flag_or_setting_gets_a_did_you_mean(capsys):
    with pytest.raises(SystemExit):
        main(["run", "direct", "-d", "metaqa-1hop", "--model-ulr", "http://x/v1"])
    assert "--model-ulr (did you mean --model-url?)" in capsys.readouterr().err
    assert main(["run", "saga", "-d", "metaqa-1hop", "-m", "standin-agent", "-o", "type_filter=false"]) == 1
    assert "(did you mean 'features.type_filter'?)" in capsys.readouterr().err
    assert main(["run", "genop", "-d", "metaqa-1hop", "-o", "k=3"]) == 1
    assert "(did you mean 'evaluation.k'?)" in capsys.readouterr().err


def test_serve_takes_the_endpoint_settings_by_their_declared_name_help_and_default():
    """``sparqlab serve``'s endpoint flags are generated from ServeSettings like the run flags from RunConfig,
    and the flags given make the settings the server runs with."""
    from sparqlab.cli.config_options import config_from_arguments
    from sparqlab.text2sparql.endpoint import ServeSettings

    parser = command_parser(("serve",))
    by_dest = {action.dest: action for action in parser._actions}  # noqa: SLF001
    for leaf in ServeSettings.leaves().values():
        action = by_dest[dest_of(leaf.path)]
        assert "--" + leaf.name.replace("_", "-") in action.option_strings and action.default is None
        assert action.help.startswith(display(leaf.help).replace("%", "%%")) and leaf.help
        assert action.help.endswith(f"(default: {leaf.default!r})")
    args = parser.parse_args(["direct", "--kg", "ck25", "--queue-size", "3", "--read-timeout-s", "2.5", "--docs",
                              "--token", "t0k", "--port", "0"])
    assert config_from_arguments(ServeSettings, args) == ServeSettings(queue_size=3, read_timeout_s=2.5, docs=True,
                                                                       token="t0k", port=0)
    assert config_from_arguments(ServeSettings, parser.parse_args(["direct"])) == ServeSettings()
    with pytest.raises(ValueError, match="queue_size must be >= 0"):
        config_from_arguments(ServeSettings, parser.parse_args(["direct", "--queue-size", "-1"]))
