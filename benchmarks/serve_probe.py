"""Reliability probe of `sparqlab serve`: a burst of 1,000 concurrent requests, 100 against a 3 s model with a
question timeout, 10 idle sockets for 30 s, and 1,100 idle sockets plus slow clients under a 1,024 open-file
limit while normal requests are sent (scenarios in sparqlab.experiments.serve_probe).

    .venv/bin/python benchmarks/serve_probe.py [--scenarios burst,slow-model,idle,flood] [--json OUT]
        [--server-lib ../main/lib]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sparqlab.experiments.serve_probe import SCENARIOS, run_probe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", default=",".join(SCENARIOS.loaded()),
                        help="comma-separated (default: all, %(default)s)")
    parser.add_argument("--json", default=None, help="also write the results to this file")
    parser.add_argument("--server-lib", default=None, metavar="DIR",
                        help="run the probed servers from another checkout's lib/ folder (PYTHONPATH), e.g. a "
                             "worktree of main for a baseline")
    args = parser.parse_args()

    def report(name: str, result: dict) -> None:
        print(f"{name:<11} " + "  ".join(f"{key} {value}" for key, value in result.items()), flush=True)

    results = run_probe(args.scenarios.split(","), report,
                        {"PYTHONPATH": args.server_lib} if args.server_lib else None)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
