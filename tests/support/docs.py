"""What the documentation tests and the install test share: the shell commands of a fenced block, and the
README's first session, which tests/test_install.py executes from the installed wheel in an empty folder (so the
docs runner only parses it instead of running the same commands a second time)."""

from __future__ import annotations

import re
import shlex

from pytest_codeblocks import extract_from_file

from sparqlab.core.paths import PROJECT_ROOT

FIRST_SESSION = (PROJECT_ROOT / "README.md", "A first session")
"""The README section whose block is the researcher's first session."""

RUN_ELSEWHERE = {FIRST_SESSION: ("tests/test_install.py", "first_session")}
"""Doc sections executed by another test, with the reader of this module it takes the section's commands from:
the docs runner parses them only."""


def commands(code: str) -> list[list[str]]:
    """The shell commands of a block as argument lists: continuations joined, comments dropped, ``&&``/``;``/``|``
    split, leading ``VAR=value`` assignments removed."""
    joined = re.sub(r"\\\n", " ", code)
    out = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        current: list[str] = []
        for word in [*words, ";"]:
            if word in {"&&", ";", "|", "||"}:
                while current and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", current[0]):
                    current.pop(0)
                if current:
                    out.append(current)
                current = []
            else:
                current.append(word)
    return out


def first_session() -> list[list[str]]:
    """The ``sparqlab`` commands of the README's first session, as written there (the venv activation aside)."""
    path, section = FIRST_SESSION
    lines = path.read_text(encoding="utf-8").splitlines()
    for block in extract_from_file(path):
        heading = next((line[3:].strip() for line in reversed(lines[: block.lineno]) if line.startswith("## ")), "")
        if heading == section and block.syntax == "bash":
            return [argv for argv in commands(block.code) if argv[0] == "sparqlab"]
    raise AssertionError(f"{path.name} has no bash block under '## {section}'")
