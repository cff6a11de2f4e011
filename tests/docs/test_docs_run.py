"""The documentation runs: every fenced ``bash`` and ``python`` block of README.md and docs/*.md is executed, in
order within its file, as a new user would copy it — offline stand-ins and small limits as the docs write them, in a
scratch working folder with its own runs/, figures/ and cache (sharing the suite's built KG stores and indexes).

A block followed by ``<!--pytest-codeblocks:expected-output-->`` and a second block must print exactly that
second block (the numbers a doc quotes are the ones the code produces). A block whose first line is a
``# needs: ...`` comment says what it needs (a GPU endpoint, a cluster, a live
Wikidata) and is only parsed: each ``sparqlab`` command goes through the real argument parser (an unknown flag or
subcommand fails), ``python FILE`` / ``make TARGET`` must name an existing file / target, and Python compiles.
A block whose first line is ``# uses: the real model ...`` runs like any other where the real model's server is
installed, and is skipped saying why where it is not (failing in CI: :mod:`support.real_model`).
A section another test executes from the doc itself is parsed the same way here (``support.docs.RUN_ELSEWHERE``:
the README's first session runs from the installed wheel, in an empty folder, in tests/test_install.py; the
sweeps guide's notebooks-as-jobs commands in tests/notebooks/test_reproduce_jobs.py).
The fenced blocks are collected by pytest-codeblocks' Markdown reader; one test per ``## `` section keeps its blocks
in order (sections do not depend on each other, so xdist spreads them over the workers).
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pytest_codeblocks import extract_from_file

from sparqlab.core.paths import PROJECT_ROOT
from support.docs import RUN_ELSEWHERE, commands, first_line, needs
from support.real_model import require_real_model

DOCS = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]
SHELL = {"bash", "sh"}
RUNNABLE = SHELL | {"python"}
USES_REAL_MODEL = re.compile(r"#\s*uses:\s*the real model\b")
SHARED_CACHE = ("kg", "search", "artifacts", "leakage")
"""Cache folders of content-addressed, lock-protected builds the doc runs share with the rest of the suite."""
BLOCK_TIMEOUT_S = 240


def blocks(path: Path) -> list:
    return extract_from_file(path)


def parse_only(block) -> None:
    """Check a marked block without running it: every command is one the project accepts as written."""
    if block.syntax == "python":
        compile(block.code, f"<block at line {block.lineno}>", "exec")
        return
    from sparqlab.cli import build_parser

    for argv in commands(block.code):
        head = argv[0]
        if head == "sparqlab":
            try:
                build_parser().parse_args(argv[1:])
            except SystemExit as exit_:
                if exit_.code:
                    raise AssertionError(f"line {block.lineno}: `{shlex.join(argv)}` does not parse") from None
        elif head == "python":
            script = next(word for word in argv[1:] if not word.startswith("-"))
            assert (PROJECT_ROOT / script).is_file(), f"line {block.lineno}: no script {script}"
        elif head == "make":
            done = subprocess.run(["make", "-n", "-C", str(PROJECT_ROOT), *argv[1:]], capture_output=True)
            assert done.returncode == 0, f"line {block.lineno}: `{shlex.join(argv)}` names no make target"


def scratch(tmp_path: Path) -> tuple[Path, dict]:
    """A working folder that looks like the checkout (its folders linked) but keeps what commands write."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    for entry in PROJECT_ROOT.iterdir():
        if entry.name not in {"runs", "figures", ".cache", ".git"}:
            (tmp_path / entry.name).symlink_to(entry)
    cache = tmp_path / ".cache"
    cache.mkdir()
    from sparqlab.core.paths import cache_dir

    for name in SHARED_CACHE:
        (cache_dir() / name).mkdir(exist_ok=True)
        (cache / name).symlink_to(cache_dir() / name)
    env = {key: value for key, value in os.environ.items() if not key.startswith("SPARQLAB_")}
    env.update(SPARQLAB_RUNS=str(tmp_path / "runs"), SPARQLAB_CACHE=str(cache),
               SPARQLAB_FIGURES=str(tmp_path / "figures"), HF_HUB_OFFLINE="1",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return tmp_path, env


def execute(block, cwd: Path, env: dict) -> None:
    """Run one block in its own process group: a block that overruns is killed with what it started in the
    background (a model server)."""
    if block.syntax == "python":
        argv = [sys.executable, "-c", block.code]
    else:
        argv = ["bash", "-e", "-o", "pipefail", "-c", block.code]
    with subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as process:
        try:
            stdout, stderr = process.communicate(timeout=BLOCK_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            raise
    done = subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)
    if done.returncode != 0:
        raise AssertionError(f"block at line {block.lineno} failed (exit {done.returncode}):\n{block.code}\n"
                             f"--- stdout (tail)\n{done.stdout[-3000:]}\n--- stderr (tail)\n{done.stderr[-3000:]}")
    if block.expected_output is not None:
        assert done.stdout.strip() == block.expected_output.strip(), \
            f"block at line {block.lineno}: the output the doc quotes differs from what the command prints"


def sections(path: Path) -> list[str]:
    """The document's ``## `` headings that hold a runnable block (``""`` for blocks before the first one)."""
    return list(dict.fromkeys(section_of(path, block) for block in blocks(path) if block.syntax in RUNNABLE))


def section_of(path: Path, block) -> str:
    """The ``## `` heading a block is under: sections are independent, so each is its own ordered test."""
    above = path.read_text(encoding="utf-8").splitlines()[: block.lineno]
    return next((line[3:].strip() for line in reversed(above) if line.startswith("## ")), "")


def run_document(path: Path, tmp_path: Path, section: str | None = None) -> tuple[int, int]:
    """Run (or parse, where marked) every runnable block of one document (or of one of its sections) in order;
    returns the (run, parsed) counts."""
    cwd, env = scratch(tmp_path)
    ran = parsed = 0
    for block in blocks(path):
        if block.syntax not in RUNNABLE or (section is not None and section_of(path, block) != section):
            continue
        if needs(block) or (path, section_of(path, block)) in RUN_ELSEWHERE:
            parse_only(block)
            parsed += 1
        else:
            if USES_REAL_MODEL.match(first_line(block)):
                require_real_model()
            start = time.perf_counter()
            execute(block, cwd, env)
            print(f"{path.name}:{block.lineno} ran in {time.perf_counter() - start:.1f} s")
            ran += 1
    return ran, parsed


SECTIONS = [(path, section) for path in DOCS for section in sections(path)]


@pytest.mark.slow
@pytest.mark.parametrize(("path", "section"), SECTIONS,
                         ids=[f"{path.relative_to(PROJECT_ROOT)}:{section or 'top'}" for path, section in SECTIONS])
def test_document_runs(path, section, tmp_path, movies_kg):
    run_document(path, tmp_path, section)


@pytest.mark.parametrize("path", DOCS, ids=lambda path: str(path.relative_to(PROJECT_ROOT)))
def test_every_command_block_is_labelled(path):
    """A command in a block without a runnable language would escape the tests: every ``sparqlab`` line is in a
    ``bash`` block (or a ``python`` one)."""
    for block in blocks(path):
        if block.syntax not in RUNNABLE:
            lines = [line for line in block.code.splitlines() if re.match(r"\s*(sparqlab|python|make) ", line)]
            assert not lines, f"{path.name}:{block.lineno}: commands in a ```{block.syntax} block: {lines[:2]}"


def test_a_section_run_elsewhere_is_read_from_the_doc_by_that_test():
    """A section the docs runner only parses must be executed by the test it names, from the doc's own text: that
    test calls the reader of the section (``support.docs.first_session``), so the block cannot drift from what
    runs."""
    for (path, section), (test_file, reader) in RUN_ELSEWHERE.items():
        assert section in sections(path), f"{path.name} has no section '## {section}' with a runnable block"
        assert f"{reader}()" in (PROJECT_ROOT / test_file).read_text(encoding="utf-8"), (test_file, reader)


def test_a_broken_example_fails(tmp_path):
    """A scratch copy of a doc with one command broken: executed, it fails; marked ``# needs:``, it fails to parse;
    a quoted output that differs fails too."""
    fence = "```"
    cases = {
        "run": f"{fence}bash\nsparqlab kg prefixes movies --no-such-flag\n{fence}\n",
        "parse": f"{fence}bash\n# needs: a GPU endpoint\nsparqlab run direct -d metaqa-1hop --model-ulr http://gpu/v1\n{fence}\n",
        "output": f"{fence}bash\necho 21 cells\n{fence}\n\n<!--pytest-codeblocks:expected-output-->\n"
                  f"{fence}text\n18 cells\n{fence}\n",
    }
    for name, text in cases.items():
        doc = tmp_path / f"{name}.md"
        doc.write_text(f"# scratch\n\n{text}", encoding="utf-8")
        with pytest.raises(AssertionError, match="line 3"):
            run_document(doc, tmp_path / name)
    fixed = tmp_path / "fixed.md"
    fixed.write_text(cases["output"].replace("18 cells", "21 cells"), encoding="utf-8")
    assert run_document(fixed, tmp_path / "fixed-run") == (1, 0)
