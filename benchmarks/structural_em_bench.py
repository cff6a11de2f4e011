"""Structural EM's cost on symmetric queries, the canonisation solver (bliss via igraph) against the colour
refinement with tie-breaking of commit 70a0ed9, side by side in one run.

The predicted query is ``?aN <p> ?bN`` for N < n and the gold query the same patterns in reverse order with other
variable names: every pattern is interchangeable with every other, the worst case for tie-breaking search. The old
implementation is loaded from git (``git show 70a0ed9:lib/sparqlab/eval/structural.py``), so both run on the same
parser and printer; it only runs up to ``--old-max`` patterns (its time grows with n: ~70 s at 200).

The bounded worst case: a star (one variable in ``k`` patterns of one predicate, all interchangeable, one
connected part) just under ``structural.MAX_VERTICES`` against its reordering, and one pattern more (over the
limit: scored "not matched", with a warning).

Usage: python benchmarks/structural_em_bench.py [--sizes 10 20 50 200 1000] [--old-max 50] [--json OUT]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path

from sparqlab.eval import structural

OLD_COMMIT = "70a0ed9"
P = "<http://example.org/p>"


def symmetric_pair(n: int) -> tuple[str, str]:
    """``n`` interchangeable patterns, and the same patterns reordered and renamed."""
    predicted = "SELECT * WHERE { " + " ".join(f"?a{i} {P} ?b{i} ." for i in range(n)) + " }"
    gold = "SELECT * WHERE { " + " ".join(f"?y{i} {P} ?z{i} ." for i in reversed(range(n))) + " }"
    return predicted, gold


def star_pair(k: int) -> tuple[str, str]:
    """One variable in ``k`` interchangeable patterns, and the same reordered and renamed."""
    predicted = "SELECT * WHERE { " + " ".join(f"?x {P} ?b{i} ." for i in range(k)) + " }"
    gold = "SELECT * WHERE { " + " ".join(f"?s {P} ?o{i} ." for i in reversed(range(k))) + " }"
    return predicted, gold


def old_structural():
    """The structural module as it was at ``OLD_COMMIT`` (same imports, so the same parser and printer)."""
    root = Path(__file__).resolve().parents[1]
    source = subprocess.run(["git", "show", f"{OLD_COMMIT}:lib/sparqlab/eval/structural.py"], cwd=root,
                            check=True, capture_output=True, text=True).stdout
    spec = importlib.util.spec_from_loader("structural_old", loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, f"{OLD_COMMIT}:structural.py", "exec"), module.__dict__)  # noqa: S102 - our own git history
    return module


def timed(function, *args) -> tuple[float, object]:
    start = time.perf_counter()
    result = function(*args)
    return time.perf_counter() - start, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 50, 200, 1000])
    parser.add_argument("--old-max", type=int, default=50, help="largest n to run the old implementation on")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    old = old_structural()
    structural.structural_em(*symmetric_pair(2))  # imports igraph: not part of any row
    rows = []
    print(f"{'n':>6} {'new s':>9} {'old s':>9} {'old/new':>8}  matched(new, old)")
    for n in args.sizes:
        predicted, gold = symmetric_pair(n)
        new_s, new_em = timed(structural.structural_em, predicted, gold)
        row = {"n": n, "new_s": new_s, "new_em": new_em}
        if n <= args.old_max:
            row["old_s"], row["old_em"] = timed(old.structural_em, predicted, gold)
        rows.append(row)
        old_text = f"{row['old_s']:9.3f} {row['old_s'] / new_s:8.0f}" if "old_s" in row else f"{'-':>9} {'-':>8}"
        print(f"{n:6} {new_s:9.4f} {old_text}  ({new_em}, {row.get('old_em', '-')})")
    limit = structural.MAX_VERTICES
    largest = (limit - 1) // 4  # k patterns: 1 + k variables, k pieces, 2k occurrences
    gold = star_pair(largest)[1]
    stars = []
    for k in (largest, largest + 1):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            seconds, matched = timed(structural.structural_em, star_pair(k)[0], gold)
        stars.append({"patterns": k, "vertices": 1 + 4 * k, "new_s": seconds, "new_em": matched,
                      "warned": len(caught)})
        print(f"star of {k} patterns ({1 + 4 * k} vertices, limit {limit}) against {largest}: {seconds:.3f} s, "
              f"matched {matched}, {len(caught)} warning(s)")
    if args.json:
        args.json.write_text(json.dumps({"symmetric": rows, "star": stars}, indent=2))
    return 0 if all(row["new_em"] == 1 for row in rows) and stars[0]["new_em"] == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
