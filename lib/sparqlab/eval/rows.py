"""SPINACH's row-level F1: result rows matched one-to-one, each pair scored by how much of the gold row it covers.

This is a reimplementation of the metric SPINACH (Liu et al. 2024) reports, checked against every row of its
released QALD-7 and QALD-10 outputs (``tests/eval/test_eval_row_f1.py``). It differs from the set F1 of
:mod:`sparqlab.eval.metrics` in what it compares (whole rows, raw RDF terms) — see ``docs/metrics.md``.

Definition, for predicted rows P and gold rows G (SPARQL-JSON bindings):

* ``r(p, g)`` = share of ``g``'s cells (columns ending in ``Label``/``Description`` left out) whose exact RDF
  term (type, value, datatype, language) occurs among ``p``'s cells, counted as multisets. ``p``'s own column
  names and label columns do not matter: any of its cells may cover a gold cell.
* Rows are paired one-to-one by a maximum-weight matching on ``r`` (ties go to the matching with more partially
  covered pairs, which makes the score independent of the solver's tie-breaking).
* With ``S`` the sum of ``r`` over matched pairs and ``k`` the number of matched pairs with ``r > 0``:
  true positives are ``S``; a pair with ``0 < r < 1`` adds ``1 - r`` errors; every gold or predicted row left
  without a covering partner adds one error. Hence ``F1 = 2S / (2S + errors) = 2S / (S + |P| + |G| - k)``.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from sparqlab.eval.metrics import check_rule, judge
from sparqlab.kg.results import QueryResult, Term

UNSCORED_GOLD_SUFFIXES = ("Label", "Description")
"""Gold columns with these name endings are display companions (``?xLabel``) and not scored by :func:`row_f1`."""

Rows = Iterable[Mapping[str, Any]] | bool | QueryResult | None

_Cell = tuple[tuple[str, str], ...]


def row_f1(pred_rows: Rows, gold_rows: Rows, rule: str = "exclude") -> float | None:
    """Row-level F1 of SPINACH between predicted and gold result rows.

    Rows are SPARQL-JSON binding dicts (``{"x": {"type": "uri", "value": ...}}``); :class:`Term` cells and whole
    :class:`QueryResult` objects are accepted too. ASK answers are booleans: if either side is a boolean the score
    is 1.0 when both are the same boolean, else 0.0. ``pred_rows=None`` (no query, or it failed) scores 0.0.
    Empty gold rows are a gold error, judged by ``rule`` as every question is
    (:data:`sparqlab.eval.metrics.SCORING_RULES`): ``None`` (not judged) by default; ``rule="spinach"`` is
    SPINACH's own convention, under which its released scores reproduce: empty predicted rows match (1.0;
    SPINACH itself divides by zero there), anything else scores 0.0.
    """
    check_rule(rule)
    pred, gold = _as_rows(pred_rows), _as_rows(gold_rows)
    if gold is None:
        raise ValueError("row_f1 needs gold rows (got None)")
    if not isinstance(gold, bool) and not gold:
        score = judge(None if pred is None else _flat(pred), set(), rule=rule)
        return None if score is None else score.f1
    if pred is None:
        return 0.0
    if isinstance(pred, bool) or isinstance(gold, bool):
        return float(pred == gold)
    if not pred:
        return 0.0
    pred_cells = [Counter(_cell(v) for v in row.values()) for row in pred]
    gold_cells = [
        Counter(_cell(v) for k, v in row.items() if not k.endswith(UNSCORED_GOLD_SUFFIXES)) for row in gold
    ]
    ratios = _coverage(pred_cells, gold_cells)
    total, partial = _best_matching(ratios, gold_cells)
    return 2 * total / (total + len(pred) + len(gold) - partial)


def _flat(rows: list[Mapping[str, Any]] | bool) -> set[str]:
    """The cells of result rows as strings (empty rows: the empty set), for the gold-error rule."""
    if isinstance(rows, bool):
        return {str(rows).lower()}
    return {str(_cell(v)) for row in rows for v in row.values()}


def _as_rows(rows: Rows) -> list[Mapping[str, Any]] | bool | None:
    if isinstance(rows, QueryResult):
        if rows.kind == "ask":
            return bool(rows.boolean)
        return list(rows.rows)
    if rows is None or isinstance(rows, bool):
        return rows
    return list(rows)


def _cell(value: Any) -> _Cell:
    """An RDF term as a hashable key of all its SPARQL-JSON fields (``typed-literal`` read as ``literal``)."""
    if isinstance(value, Term):
        value = value.to_json()
    elif not isinstance(value, Mapping):
        raise TypeError(f"a row cell must be a SPARQL-JSON binding value or a Term, got {value!r}")
    fields = {str(k): str(v) for k, v in value.items()}
    if fields.get("type") == "typed-literal":
        fields["type"] = "literal"
    return tuple(sorted(fields.items()))


def _coverage(pred_cells: list[Counter], gold_cells: list[Counter]) -> dict[tuple[int, int], float]:
    """Non-zero ``r(p, g)`` for every (predicted, gold) row pair, found through an index of predicted cells."""
    rows_with_cell: dict[_Cell, set[int]] = defaultdict(set)
    for i, cells in enumerate(pred_cells):
        for cell in cells:
            rows_with_cell[cell].add(i)
    ratios = {}
    for j, gold in enumerate(gold_cells):
        size = sum(gold.values())
        if not size:
            continue
        candidates = set().union(*(rows_with_cell.get(cell, ()) for cell in gold))
        for i in candidates:
            overlap = sum(min(n, pred_cells[i][cell]) for cell, n in gold.items())
            ratios[i, j] = overlap / size
    return ratios


def _best_matching(ratios: dict[tuple[int, int], float], gold_cells: list[Counter]) -> tuple[float, int]:
    """Sum of ``r`` and number of positive pairs in a maximum-weight one-to-one matching.

    Only pairs with ``r > 0`` can contribute, so each connected component of that bipartite graph is solved on
    its own (most are a single pair). A small bonus per matched pair, below the smallest possible difference
    between two sums of ratios, breaks ties towards more partially covered pairs.
    """
    if not ratios:
        return 0.0, 0
    sizes = {sum(g.values()) for g in gold_cells if g}
    bonus = 1 / (2 * (len(ratios) + 1) * math.lcm(*sizes))
    total, matched = 0.0, 0
    for pred_ids, gold_ids in _components(ratios):
        if len(pred_ids) == 1 or len(gold_ids) == 1:
            best = max(ratios[i, j] for i in pred_ids for j in gold_ids)
            total, matched = total + best, matched + 1
            continue
        from scipy.optimize import linear_sum_assignment

        weights = [[ratios.get((i, j), 0.0) for j in gold_ids] for i in pred_ids]
        bonused = [[w + bonus if w else 0.0 for w in row] for row in weights]
        row_ind, col_ind = linear_sum_assignment(bonused, maximize=True)
        chosen = [weights[r][c] for r, c in zip(row_ind, col_ind, strict=True)]
        total += sum(chosen)
        matched += sum(1 for w in chosen if w > 0)
    return total, matched


def _components(ratios: dict[tuple[int, int], float]) -> list[tuple[list[int], list[int]]]:
    """Connected components of the bipartite graph whose edges are the pairs in ``ratios``."""
    parent: dict[tuple[str, int], tuple[str, int]] = {}

    def find(node: tuple[str, int]) -> tuple[str, int]:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for i, j in ratios:
        parent[find(("p", i))] = find(("g", j))
    groups: dict[tuple[str, int], tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
    for node in list(parent):
        side, index = node
        groups[find(node)][0 if side == "p" else 1].append(index)
    return [(sorted(p), sorted(g)) for p, g in groups.values()]
