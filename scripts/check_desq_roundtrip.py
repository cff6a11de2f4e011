"""Full-data check: every gold query of every bundled benchmark survives DeSQ's fragment extraction and assembly
(structural EM = 1 between the assembled query and the gold query). tests/methods/desq runs one query per query shape;
this script runs all of them (about 67k, a few minutes). For WebQSP it checks every annotated parse of every
question, the 11 test questions without answers included (1,815 test and 3,453 train queries). Failures are counted
per class: ``parse`` (the gold query does not parse), ``assembly`` (the fragments do not assemble), ``mismatch``
(assembled, structural EM 0). Exit code 1 if any fails.

Run: ``python scripts/check_desq_roundtrip.py [DATASET ...]`` (default: every registered dataset).
"""

from __future__ import annotations

import sys
import time
from collections import Counter, defaultdict

from sparqlab.data.freebase import load_webqsp
from sparqlab.data.registry import DATASETS
from sparqlab.eval.structural import structural_em
from sparqlab.methods.desq.fragments import AssemblyError, assemble, decompose, scheme_for
from sparqlab.sparql.tree import SparqlParseError

EXAMPLES = 3
"""Question ids printed per dataset and failure class."""


def round_trip(sparql: str, scheme) -> str:
    """``ok`` or the failure class of one gold query."""
    try:
        decomposition = decompose(sparql, scheme)
    except SparqlParseError:
        return "parse"
    try:
        assembled = assemble(decomposition.fragments, decomposition.slots, scheme)
    except AssemblyError:
        return "assembly"
    return "ok" if structural_em(assembled, sparql) else "mismatch"


def gold_queries(name: str, split: str) -> list[tuple[str, str]]:
    """``(id, query)`` of every gold query of a split: each parse of a WebQSP question (all test questions, also
    those without answers), else each question's gold query."""
    if name == "webqsp":
        return [(parse["id"], parse["sparql"]) for question in load_webqsp(split, answered_only=False)
                for parse in question.metadata["parses"]]
    return [(question.id, question.gold_sparql) for question in DATASETS[name].load(split)]


def main(names: list[str]) -> int:
    start = time.perf_counter()
    unknown = sorted(set(names) - set(DATASETS))
    if unknown:
        print(f"unknown dataset(s) {', '.join(unknown)}; known: {', '.join(DATASETS)}", file=sys.stderr)
        return 2
    checked: Counter = Counter()
    failed: dict[str, Counter] = defaultdict(Counter)
    examples: dict[tuple[str, str], list[str]] = defaultdict(list)
    for name in names or list(DATASETS):
        dataset = DATASETS[name]
        scheme = scheme_for(dataset.kg)
        for split in dataset.splits:
            for ident, sparql in gold_queries(name, split):
                checked[name] += 1
                outcome = round_trip(sparql, scheme)
                if outcome != "ok":
                    failed[name][outcome] += 1
                    examples[name, outcome].append(f"{split}/{ident}")
    for name in checked:
        classes = ", ".join(f"{kind} {n:,} (e.g. {', '.join(examples[name, kind][:EXAMPLES])})"
                            for kind, n in failed[name].most_common())
        ok = checked[name] - sum(failed[name].values())
        print(f"{name:16} {ok:6,} / {checked[name]:6,} round-trip" + (f"; failed: {classes}" if classes else ""))
    total, bad = sum(checked.values()), sum(sum(c.values()) for c in failed.values())
    print(f"{'all':16} {total - bad:6,} / {total:6,}  ({time.perf_counter() - start:.0f} s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
