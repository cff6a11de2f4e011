"""Check that the validity tests can fail: apply each known mutation to a private copy of the code or data, run the
tests that guard against it, and report whether they fail (caught) as they must.

The working tree is never touched: every mutation runs in a temporary project root holding a copy of ``lib/``
(found first on ``PYTHONPATH``) and of the mutated data folder, with the rest of ``data/`` and the movie-KG store
linked read-only and an empty cache for everything else. The unmutated copy is run first, so a test that fails
without any mutation is reported as such and not counted as a catch.

    .venv/bin/python scripts/check_mutations.py [--only NAME ...] [--list]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutation:
    """Replace ``old`` (which must occur exactly once) by ``new`` in ``path``; ``tests`` must then fail."""

    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


KEYWORD = "lib/sparqlab/methods/keyword_rules.py"
KEYWORD_TESTS = ("tests/methods/test_keyword_rules.py",)
NORMALISE = "lib/sparqlab/eval/normalise.py"
NORMALISE_TESTS = ("tests/eval/test_eval_normalise.py",)
GOLD_TESTS = ("tests/data/test_data_gold_independent.py",)

MUTATIONS = [
    Mutation("keyword: old class-line pattern (notes with ':' or '(' never match)", KEYWORD,
             'r"^\\s*-\\s*class (\\w+):(.*)$"', 'r"^\\s*-\\s*class (\\w+):\\s*([\\w ,]*)$"', KEYWORD_TESTS),
    Mutation("keyword: direction logic removed (always both directions)", KEYWORD,
             "    if not named:\n        return None\n", "    if True:\n        return None\n", KEYWORD_TESTS),
    Mutation("keyword: subject/object patterns swapped", KEYWORD,
             '"subject": "?uri ?rel ?topic .",', '"subject": "?topic ?rel ?uri .",', KEYWORD_TESTS),
    Mutation("keyword: class named right before the entity not treated as the entity's", KEYWORD,
             "if position == len(words_before_topic) - 1:", "if False:", KEYWORD_TESTS),
    Mutation("keyword: other classes' names kept in a class's words", KEYWORD,
             "and not any(matches(o, w) for o in others)", "", KEYWORD_TESTS),
]


def _tree(mutation: Mutation | None) -> tempfile.TemporaryDirectory:
    """A temporary project root: ``lib/`` copied, ``data/`` linked (the mutated file's folder copied)."""
    folder = tempfile.TemporaryDirectory(prefix="sparqlab-mutation-")
    root = Path(folder.name)
    shutil.copytree(ROOT / "lib", root / "lib", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "data").mkdir()
    copied = Path(mutation.path).parts[1] if mutation and mutation.path.startswith("data/") else None
    for entry in (ROOT / "data").iterdir():
        if entry.name == copied:
            shutil.copytree(entry, root / "data" / entry.name)
        else:
            (root / "data" / entry.name).symlink_to(entry)
    (root / ".cache").mkdir()
    for built in ("kg", "search"):
        if (ROOT / ".cache" / built).exists():
            (root / ".cache" / built).symlink_to(ROOT / ".cache" / built)
    if mutation:
        target = root / mutation.path
        text = target.read_text(encoding="utf-8")
        if text.count(mutation.old) != 1:
            folder.cleanup()
            raise ValueError(f"{mutation.name}: the text to replace occurs {text.count(mutation.old)} times in "
                             f"{mutation.path} (expected once); update the mutation")
        target.write_text(text.replace(mutation.old, mutation.new), encoding="utf-8")
    return folder


def run_tests(mutation: Mutation | None, tests: tuple[str, ...]) -> subprocess.CompletedProcess:
    """pytest on ``tests`` against the (mutated) copy."""
    with _tree(mutation) as root:
        env = {**os.environ, "PYTHONPATH": str(Path(root) / "lib"), "SPARQLAB_CACHE": str(Path(root) / ".cache"),
               "SPARQLAB_RUNS": str(Path(root) / "runs"), "SPARQLAB_FIGURES": str(Path(root) / "figures"),
               "HF_HUB_OFFLINE": "1"}
        env.pop("SPARQLAB_DATA", None)
        command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests]
        return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", default=None, help="run the mutations whose name contains a word")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTATIONS if not args.only or any(word in m.name for word in args.only)]
    if args.list:
        for mutation in chosen:
            print(f"{mutation.name}  [{mutation.path}; {' '.join(mutation.tests)}]")
        return 0
    baseline = run_tests(None, tuple(dict.fromkeys(t for m in chosen for t in m.tests)))
    if baseline.returncode != 0:
        print("the unmutated copy fails its tests; fix that first:\n" + baseline.stdout[-3000:])
        return 1
    missed = []
    for mutation in tqdm(chosen, desc="mutations", unit="mutation"):
        outcome = run_tests(mutation, mutation.tests)
        caught = outcome.returncode == 1
        summary = (outcome.stdout.strip().splitlines() or ["(no output)"])[-1]
        tqdm.write(f"{'caught' if caught else 'MISSED'}  {mutation.name}  ({summary})")
        if not caught:
            missed.append(mutation.name)
            if outcome.returncode != 0:
                tqdm.write(outcome.stdout[-2000:] + outcome.stderr[-2000:])
    print(f"{len(chosen) - len(missed)}/{len(chosen)} mutations caught")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
