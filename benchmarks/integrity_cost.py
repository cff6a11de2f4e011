"""What checking a build output against its integrity record costs at open (:mod:`sparqlab.core.integrity`).

For the movie KG's store (built if missing), a label index and a KB memory of the same KG's labels (hashing
embedder, so no model is needed), each in a fresh child process: the time to open the output without the check
(``open``), the first check of the process (sizes plus SHA-256 of every recorded file: ``first check``) and a
repeated check in the same process (sizes only; the digests are remembered per file version: ``again``).

Usage: python benchmarks/integrity_cost.py [--repeats 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
from pathlib import Path
what, folder = sys.argv[1], Path(sys.argv[2])

def timed(call):
    start = time.perf_counter()
    call()
    return time.perf_counter() - start

if what == "store":
    import pyoxigraph
    from sparqlab.engines.oxigraph_store import store_problem
    opened = timed(lambda: pyoxigraph.Store.read_only(str(folder / "store")))
    first, again = timed(lambda: store_problem(folder)), timed(lambda: store_problem(folder))
elif what == "search":
    import sqlite3
    from sparqlab.core.integrity import sidecar_problem
    opened = timed(lambda: sqlite3.connect(f"file:{folder}?mode=ro", uri=True).execute("SELECT 1").fetchone())
    first, again = timed(lambda: sidecar_problem(folder)), timed(lambda: sidecar_problem(folder))
else:
    import numpy as np
    from sparqlab.core.integrity import files_problem
    record = json.loads((folder / "memory.json").read_text())["integrity"]
    opened = timed(lambda: (np.load(folder / "vectors.npy"), (folder / "entries.jsonl").read_text()))
    first, again = timed(lambda: files_problem(folder, record)), timed(lambda: files_problem(folder, record))
size = sum(p.stat().st_size for p in (folder.rglob("*") if folder.is_dir() else [folder]) if p.is_file())
print(json.dumps({"open_s": opened, "first_check_s": first, "again_s": again, "bytes": size}))
"""


def outputs(scratch: Path) -> dict[str, Path]:
    """The three outputs measured: the movie store's build folder, a label index, a KB memory folder."""
    from sparqlab.graphs.movies import build_dir, ensure_store
    from sparqlab.kg import open_kg
    from sparqlab.kg.search import LabelIndex
    from sparqlab.methods.desq.kb_memory import KBMemory, kg_entries

    ensure_store()
    index = scratch / "movies-labels.sqlite"
    with open_kg("movies", cache=False) as kg:
        LabelIndex(kg, index)
        entries = kg_entries(kg)
    KBMemory.build(entries, "hashing", progress=False, prebuilt=False).save(scratch / "memory")
    return {"store": build_dir(), "search": index, "memory": scratch / "memory"}


def measure(what: str, folder: Path, repeats: int) -> dict[str, float]:
    runs = [json.loads(subprocess.run([sys.executable, "-c", CHILD, what, str(folder)], capture_output=True,
                                      text=True, check=True).stdout) for _ in range(repeats)]
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="child processes per output (median; default 3)")
    parser.add_argument("--json", default=None, help="also write the results to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="integrity-cost-") as scratch:
        results = {what: measure(what, path, args.repeats) for what, path in outputs(Path(scratch)).items()}
    print(f"{'output':<8} {'MiB':>6} {'open ms':>8} {'first check ms':>15} {'again ms':>9} {'check/open':>11}")
    for what, r in results.items():
        print(f"{what:<8} {r['bytes'] / 2**20:6.1f} {1000 * r['open_s']:8.1f} {1000 * r['first_check_s']:15.1f} "
              f"{1000 * r['again_s']:9.2f} {r['first_check_s'] / max(r['open_s'], 1e-9):11.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
