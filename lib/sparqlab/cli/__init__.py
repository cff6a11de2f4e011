"""The ``sparqlab`` command. Each area registers its subcommands from its own module, listed in the
``sparqlab.commands`` group of :data:`sparqlab.core.plugins.BUILT_IN` (a third-party package adds commands through
an entry point of that group).

A module exposes ``register(subparsers)``, which adds parsers whose ``handler`` default is a function taking the
parsed arguments and returning an exit code. Handlers import heavy libraries lazily so ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import signal
import sys
import warnings

from sparqlab import __version__
from sparqlab.core.cache import CacheCorrupt
from sparqlab.core.integrity import DamagedOutput
from sparqlab.core.plugins import COMMAND_GROUP, declared
from sparqlab.kg.errors import KGError
from sparqlab.llm.errors import ModelError

DEBUG_ENV = "SPARQLAB_DEBUG"
"""Set to 1 to make every ``sparqlab`` command print tracebacks (same as ``--debug``)."""


class Parser(argparse.ArgumentParser):
    """``argparse`` that answers a misspelt flag with the closest flag of the (sub)command it was given to."""

    def parse_args(self, args=None, namespace=None):  # noqa: ANN001, ANN201 - argparse's own signature
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            chosen = self._chosen(parsed)
            flags = [flag for flag in chosen._option_string_actions if flag.startswith("--")]  # noqa: SLF001
            hints = []
            for item in extra:
                close = difflib.get_close_matches(item.partition("=")[0], flags, n=1) if item.startswith("-") else []
                hints.append(item + (f" (did you mean {close[0]}?)" if close else ""))
            chosen.error("unrecognized arguments: " + " ".join(hints))
        return parsed

    def _chosen(self, parsed: argparse.Namespace) -> argparse.ArgumentParser:
        """The deepest subcommand parser the arguments selected."""
        parser: argparse.ArgumentParser = self
        while True:
            actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]  # noqa: SLF001
            name = getattr(parsed, actions[0].dest, None) if actions else None
            if name not in (actions[0].choices if actions else {}):
                return parser
            parser = actions[0].choices[name]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="sparqlab", description="A research workbench for LLM text-to-SPARQL over "
                                     "knowledge graphs. `sparqlab COMMAND --help` documents each command.")
    parser.add_argument("--version", action="version", version=f"sparqlab {__version__}")
    parser.add_argument("--debug", action="store_true", default=os.environ.get(DEBUG_ENV, "") not in ("", "0"),
                        help=f"show the full traceback of an error (also: environment variable {DEBUG_ENV}=1)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for point in declared(COMMAND_GROUP):
        importlib.import_module(point.value).register(subparsers)
    return parser


def user_message(error: BaseException) -> str:
    """The error's message, with Python's wording replaced where it does not help a user: a UTF-8 decode error
    says the line and column instead of a byte offset, a recursion error says the input is nested too deeply."""
    if isinstance(error, UnicodeDecodeError) and isinstance(error.object, bytes | bytearray):
        data = bytes(error.object)
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        return (f"the input is not {error.encoding} text: byte 0x{data[error.start]:02x} at line {line}, column "
                f"{column} ({error.reason})")
    if isinstance(error, UnicodeEncodeError):
        return (f"text holds a character {error.encoding} cannot write (U+{ord(error.object[error.start]):04X} at "
                f"character {error.start + 1}: {error.reason})")
    if isinstance(error, RecursionError):
        return "the input is nested too deeply to process"
    return str(error)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where Ctrl-C's ``KeyboardInterrupt`` would be so that every path that handles an
    interruption (a run saving its progress, a server stopping its child) handles these too."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def stop_on_termination() -> None:
    """Make SIGTERM and SIGHUP end the command the way Ctrl-C does: the stack unwinds, so every server a command
    started (an oxigraph child, a model server, JupyterLab) is stopped in its ``finally`` instead of being left
    running without its parent."""
    def stop(signum: int, _frame) -> None:  # noqa: ANN001 - signal handler signature
        raise Terminated(signum)

    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, stop)


def _warning_format(command: str):
    """``warnings.formatwarning`` for the command line: a warning reads ``sparqlab COMMAND: warning: ...``,
    without Python's source line (``--debug`` keeps Python's own format)."""

    def format_warning(message, category, filename, lineno, line=None) -> str:
        return f"sparqlab {command}: warning: {message}\n"

    return format_warning


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # the `sparqlab` command itself, not a call from Python (tests, notebooks) that owns signals
        stop_on_termination()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    with warnings.catch_warnings():
        if not args.debug:
            warnings.formatwarning = _warning_format(args.command)
        return _dispatch(args)


def _dispatch(args: argparse.Namespace) -> int:
    """Run the command's handler; a failure becomes one line on stderr and an exit code."""
    try:
        return int(args.handler(args) or 0)
    except BrokenPipeError:
        # the reader went away (`sparqlab runs list | head`): stop quietly, as `yes | head` does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (KGError, ModelError, CacheCorrupt, DamagedOutput, FileNotFoundError, ValueError,
            RecursionError) as error:
        if args.debug:
            raise
        print(f"sparqlab {args.command}: {type(error).__name__}: {user_message(error)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as interruption:
        print("interrupted", file=sys.stderr)
        return 128 + getattr(interruption, "signum", signal.SIGINT)  # the shell's status for the signal
    except Exception as error:  # an unexpected failure: still one line; the traceback only on request
        if args.debug:
            raise
        if type(error).__module__.startswith("sparqlab."):  # the workbench's own errors are written for users
            print(f"sparqlab {args.command}: {type(error).__name__}: {error}", file=sys.stderr)
            return 1
        print(f"sparqlab {args.command}: {type(error).__name__}: {error}\n(run `sparqlab --debug "
              f"{args.command} ...` or set {DEBUG_ENV}=1 for the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
