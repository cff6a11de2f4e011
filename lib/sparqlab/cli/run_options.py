"""The command-line pieces every run-making command shares: the run configuration's flags, generated from
:class:`~sparqlab.runs.config.RunConfig`'s declaration (one flag per setting, named like the setting, with its
help and default), the method options (``-o NAME=VALUE``) and ``NAME=VALUE`` pairs.

``sparqlab run``, ``serve``, ``sweep``, ``table``, ``train gate`` and ``ggc sweep`` call :func:`add_run_options`;
a command that needs other defaults (GGC timing: ``concurrency=1``, ``cache=off``) passes them and its help shows
them beside the declared ones.
"""

from __future__ import annotations

import argparse
from typing import Any

from sparqlab.cli.config_options import add_config_arguments, given_arguments

SHORT_FLAGS = {"model": "-m", "dataset": "-d", "experiment": "-e", "concurrency": "-c"}
"""One-letter spellings of the most used run flags."""


def add_run_options(parser: argparse.ArgumentParser, *, skip: tuple[str, ...] = (),
                    defaults: dict[str, Any] | None = None) -> None:
    """The flags of every :class:`RunConfig` setting but ``skip`` (names, paths or whole groups), grouped as
    the declaration is; ``defaults``: this command's own defaults by setting name."""
    from sparqlab.runs.config import RunConfig

    defaults = dict(defaults or {})
    add_config_arguments(parser, RunConfig, skip=skip, defaults=defaults, grouped=True,
                         aliases={name: flag for name, flag in SHORT_FLAGS.items() if name not in skip})
    parser.set_defaults(run_defaults=defaults)


def given_run_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The run settings whose flags were given, by setting name."""
    from sparqlab.runs.config import RunConfig

    return {RunConfig.leaves()[path].name: value for path, value in given_arguments(RunConfig, args).items()}


def run_config(args: argparse.Namespace, base: Any = None, **fixed: Any) -> Any:
    """The :class:`RunConfig` of a command: the flags given, over ``base`` (a saved config) or else the
    command's defaults, under the ``fixed`` values the command sets itself."""
    from sparqlab.runs.config import RunConfig

    start = base.to_dict() if base is not None else getattr(args, "run_defaults", {})
    return RunConfig(**{**start, **given_run_settings(args), **fixed})


def add_method_options(parser: argparse.ArgumentParser, what: str = "a method config field") -> None:
    """``-o NAME=VALUE`` (repeatable): fields of the method's config, checked against its dataclass."""
    parser.add_argument("--option", "-o", action="append", default=[], metavar="NAME=VALUE",
                        help=f"{what}, e.g. -o reparse_attempts=2 or -o gate.backend=tfidf for a nested field "
                             "(checked against the method's config: `sparqlab methods list` shows the fields; "
                             "tuples as a,b,c)")


def method_from_options(name: str, options: list[str]) -> Any:
    """The method ``name`` configured by ``-o`` options."""
    from sparqlab.methods import get_method

    method_class = get_method(name)
    return method_class(method_class.config_class.from_options(parse_pairs(options, "method options")))


def parse_pairs(items: list[str], what: str) -> dict[str, str]:
    """``NAME=VALUE`` strings as a dict; a malformed or repeated name is an error."""
    pairs: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"{what} are NAME=VALUE, got {item!r}")
        if name.strip() in pairs:
            raise ValueError(f"{what}: {name.strip()!r} given twice")
        pairs[name.strip()] = value
    return pairs


def add_ggc_run_options(parser: argparse.ArgumentParser, split: str, limit: int | None,
                        skip: tuple[str, ...] = ()) -> None:
    """The run flags of a GGC experiment command (``ggc sweep``, ``train gate``), with the GGC experiments'
    defaults (:data:`sparqlab.experiments.ggc.GGC_RUN_DEFAULTS`) and this command's split and limit; the GGC
    stand-ins' memory slice; and ``-o`` GGC config fields of its runs. The corrector is the role
    ``--model-roles corrector=NAME[@URL]`` (default: the run's model). ``skip``: run settings the command does
    not take (``train gate``'s ``--seed`` is the gate's)."""
    from sparqlab.experiments.ggc import GGC_RUN_DEFAULTS

    add_run_options(parser, skip=("shard_index", "num_shards", "repeats", *skip),
                    defaults={**GGC_RUN_DEFAULTS, "split": split, "limit": limit})
    parser.add_argument("--memory-start", type=int, help="GGC stand-ins: first remembered training question")
    parser.add_argument("--memory-stop", type=int, help="GGC stand-ins: end of the remembered slice")
    add_method_options(parser, "a GGC config field of the runs (`sparqlab methods list`), e.g. -o variant=wikidata")


def ggc_run_config(args: argparse.Namespace) -> Any:
    """The :class:`RunConfig` of :func:`add_ggc_run_options`, with the stand-ins' memory slice applied."""
    from sparqlab.experiments.ggc import with_memory_slice

    return with_memory_slice(run_config(args), args.memory_start, args.memory_stop)


def ggc_options(args: argparse.Namespace, fixed: tuple[str, ...] = ()) -> dict[str, Any]:
    """The ``-o`` GGC config fields of :func:`add_ggc_run_options`, typed; ``fixed``: fields the command sets."""
    from sparqlab.methods.ggc.method import GGCConfig

    options = GGCConfig.parse_options(parse_pairs(args.option, "GGC options"))
    taken = sorted(set(options) & set(fixed))
    if taken:
        raise ValueError(f"this command sets {', '.join(taken)} itself; leave out -o {taken[0]}=...")
    return options
