"""What the documentation tests and the install test share: the shell commands of a fenced block, the README's
install line, which tests/test_install.py runs with the pip of a fresh venv, and the README's first session, which
it executes from that install in an empty folder (so the docs runner only parses them instead of running the same
commands a second time)."""

from __future__ import annotations

import re
import shlex

from pytest_codeblocks import extract_from_file

from sparqlab.core.paths import PROJECT_ROOT

FIRST_SESSION = (PROJECT_ROOT / "README.md", "A first session")
"""The README section whose block is the researcher's first session."""

NOTEBOOK_JOBS = (PROJECT_ROOT / "docs" / "sweeps.md", "Notebooks as jobs (`sparqlab reproduce --executor`)")
"""The sweeps guide's section that reproduces the quickstart as a job with its own model server."""

RUN_ELSEWHERE = {FIRST_SESSION: ("tests/test_install.py", "first_session"),
                 NOTEBOOK_JOBS: ("tests/notebooks/test_reproduce_jobs.py", "notebook_jobs")}
"""Doc sections executed by another test, with the reader of this module it takes the section's commands from:
the docs runner parses them only (running them there too would execute the same notebooks twice)."""


NEEDS = re.compile(r"#\s*needs:\s*(?P<what>.+)")
"""A block's first-line marker saying what it needs that the tests cannot give it (a GPU endpoint, a cluster)."""


def first_line(block) -> str:
    return next((line.strip() for line in block.code.splitlines() if line.strip()), "")


def needs(block) -> str | None:
    """What a block needs that the tests cannot give it (its visible first-line marker), or ``None``."""
    match = NEEDS.match(first_line(block))
    return match["what"] if match else None


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


INSTALL = (PROJECT_ROOT / "README.md", "Two commands")
"""The README section whose block holds the line that installs sparqlab into a researcher's own environment."""


def install_command() -> list[str]:
    """The README's ``pip install "sparqlab[...] @ git+file://..."`` line, as written there (``$HOME`` unexpanded)."""
    return next(argv for argv in section_commands(*INSTALL) if argv[:2] == ["pip", "install"]
                and any("git+file://" in word for word in argv))


def section_commands(path, section: str, runnable_only: bool = False) -> list[list[str]]:
    """The commands of every bash block under the ``## section`` heading of ``path`` (with ``runnable_only``, not
    of the blocks marked ``# needs: ...``, which the docs runner only parses)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for block in extract_from_file(path):
        heading = next((line[3:].strip() for line in reversed(lines[: block.lineno]) if line.startswith("## ")), "")
        if heading == section and block.syntax == "bash" and not (runnable_only and needs(block)):
            found += commands(block.code)
    if not found:
        raise AssertionError(f"{path.name} has no bash block under '## {section}'")
    return found


def notebook_jobs() -> list[list[str]]:
    """The ``sparqlab`` commands of the sweeps guide's runnable "Notebooks as jobs" block (the cluster block is
    marked ``# needs:``)."""
    return [argv for argv in section_commands(*NOTEBOOK_JOBS, runnable_only=True) if argv[0] == "sparqlab"]


def first_session() -> list[list[str]]:
    """The ``sparqlab`` commands of the README's first session, as written there (the venv activation aside)."""
    return [argv for argv in section_commands(*FIRST_SESSION) if argv[0] == "sparqlab"]
