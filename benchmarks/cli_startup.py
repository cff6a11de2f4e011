"""Start-up time of the ``sparqlab`` command: wall time of a few cheap commands beside the bare interpreter.

Every command pays its imports before its handler runs, and the test suite starts hundreds of ``sparqlab``
subprocesses, so the gap between a command and ``python -c pass`` is the cost of the workbench's start-up.
Each command runs ``--runs`` times (the run command in a fresh temporary ``SPARQLAB_RUNS``); the median is printed.

Usage: python benchmarks/cli_startup.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "sparqlab --help": ["-m", "sparqlab", "--help"],
    "sparqlab kg prefixes movies": ["-m", "sparqlab", "kg", "prefixes", "movies"],
    "sparqlab run direct (2 questions)": ["-m", "sparqlab", "run", "direct", "-d", "metaqa-1hop", "--limit", "2",
                                          "-m", "standin-keyword-rules", "-e", "t"],
}
"""Label -> interpreter arguments; the first is the baseline."""


def wall_time(arguments: list[str]) -> float:
    """Seconds one command takes, from process start to exit (a failure is an error, not a fast time)."""
    with tempfile.TemporaryDirectory() as runs:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, *arguments], capture_output=True, text=True,
                              env={**os.environ, "SPARQLAB_RUNS": runs})
        seconds = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(arguments)} failed ({done.returncode}):\n{done.stderr}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per command (median reported)")
    args = parser.parse_args()
    baseline = None
    print(f"{'command':36} {'median s':>9} {'over python':>12}")
    for label, arguments in COMMANDS.items():
        median = statistics.median(wall_time(arguments) for _ in range(args.runs))
        baseline = median if baseline is None else baseline
        print(f"{label:36} {median:9.3f} {median - baseline:12.3f}")


if __name__ == "__main__":
    main()
