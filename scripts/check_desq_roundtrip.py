"""Full-data check: every gold query of every bundled benchmark survives DeSQ's fragment extraction and assembly
(structural EM = 1 between the assembled query and the gold query). tests/desq runs one query per query shape;
this script runs all of them (about 57k, a minute or two). Exit code 1 if any fails.

Run: ``python scripts/check_desq_roundtrip.py``.
"""

from __future__ import annotations

import sys
import time
from collections import Counter

from sparqlab.data.registry import DATASETS
from sparqlab.eval.structural import structural_em
from sparqlab.methods.desq.fragments import AssemblyError, assemble, decompose, scheme_for


def main() -> int:
    start = time.perf_counter()
    checked, failed = Counter(), Counter()
    for name, dataset in DATASETS.items():
        scheme = scheme_for(dataset.kg)
        for split in dataset.splits:
            for question in dataset.load(split):
                checked[name] += 1
                decomposition = decompose(question.gold_sparql, scheme)
                try:
                    ok = structural_em(assemble(decomposition.fragments, decomposition.slots, scheme),
                                       question.gold_sparql)
                except AssemblyError:
                    ok = 0
                if not ok:
                    failed[name] += 1
                    print(f"FAILED {name}/{split} {question.id}", file=sys.stderr)
    for name in checked:
        print(f"{name:12} {checked[name] - failed[name]:6,} / {checked[name]:6,} round-trip")
    total = sum(checked.values())
    print(f"all          {total - sum(failed.values()):6,} / {total:6,}  ({time.perf_counter() - start:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
