"""Runner concurrency benchmark (see sparqlab.experiments.runner_bench): wall time at concurrency 1 vs C against
standin-latency served over HTTP, speedup (target >= 0.8·C up to 32) and runner overhead per model call.

    .venv/bin/python benchmarks/concurrency.py [--questions 96 --calls 2 --delay-ms 200 --concurrency 8 16 32]

Equivalent to `sparqlab runs bench ...`.
"""

import sys

from sparqlab.cli import main

if __name__ == "__main__":
    sys.exit(main(["runs", "bench", *sys.argv[1:]]))
