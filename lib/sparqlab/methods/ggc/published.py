"""Numbers the GGC paper publishes, with their source, for the tables to show beside the workbench's own runs.

They are the paper's, never re-run: NSM_h and QGG are answer-retrieval baselines reported in Table 2 only as
reference rows (§4.1: "their results are not strictly comparable to ours at the query level"). The paper copy
(``../shared/papers/ggc-selective-query-correction.md``) holds the tables' captions but not their cells, so a value
is given only where the running text states it, with the section; a cell the copy does not hold is ``NaN`` and its
``source`` says so (docs/fidelity.md lists them). Percentages as the paper prints them.
"""

from __future__ import annotations

import pandas as pd

MISSING = "Table 2 cell: not in the paper copy (caption only)"

TABLE2_ROWS: dict[str, dict[str, float | str]] = {
    "NSM_h (published)": {"source": MISSING},
    "QGG (published)": {"source": MISSING},
    "generator only (published)": {"accuracy": 90.23, "item_precision": 37.96, "item_recall": 85.76,
                                   "source": "§4.3 'Generator-only Performance' (Table 2)"},
    "correct all (published)": {"accuracy": 92.34, "source": "§4.3 'Effect of Selective Correction' (Table 2)"},
    "gated (published)": {"accuracy": 98.33, "item_f1": 99.16, "source": "§4.2 (Table 2)"},
}
"""Table 2 (MCQA main results): query-level accuracy and item-level P/R/F1 in %."""

TABLE12_ROWS: dict[str, dict[str, float | str]] = {
    "W1.0 (published)": {"correction required (triggered)": 89.58, "originally wrong": 82.55,
                         "source": "appendix D.1 (Table 12)"},
    "W1.0+C0.2 (published)": {"source": "Table 12 cell: not in the paper copy (caption only)"},
    "W1.0+C0.5 (published)": {"source": "Table 12 cell: not in the paper copy (caption only)"},
    "W1.0+C0.8 (published)": {"correction required (triggered)": 95.30, "originally wrong": 87.98,
                              "source": "appendix D.1 (Table 12); 'originally correct' only as 'nearly perfect'"},
}
"""Table 12 (query-level accuracy in % on three subsets, per corrector composition)."""

TABLE13_ROWS: dict[str, dict[str, float | str]] = {
    "semantic error (published)": {"count": 42, "share": 75.00, "source": "appendix D.2 (Table 13a)"},
    "syntax error (published)": {"count": 14, "share": 25.00, "source": "appendix D.2 (Table 13a)"},
}
"""Table 13a (SciQA generator errors, over the 56 generator failures; the 43 gold-error questions left out)."""

TABLES = {"table2": TABLE2_ROWS, "table12": TABLE12_ROWS, "table13a": TABLE13_ROWS}
COLUMNS = {"table2": ("accuracy", "item_precision", "item_recall", "item_f1"),
           "table12": ("correction required (triggered)", "originally wrong", "originally correct"),
           "table13a": ("count", "share")}
"""Each table's value columns, as the paper lays them out (the columns of the workbench's layouts)."""


def published_table(name: str) -> pd.DataFrame:
    """One of :data:`TABLES` as a frame (rows as the paper lists them, ``NaN`` where the copy has no value, and a
    ``source`` column)."""
    if name not in TABLES:
        raise ValueError(f"no published GGC table {name!r}; known: {', '.join(TABLES)}")
    table = pd.DataFrame.from_dict(TABLES[name], orient="index")
    return table.reindex(columns=[*COLUMNS[name], "source"]).astype(dict.fromkeys(COLUMNS[name], float))


def with_published(table: pd.DataFrame, name: str, scale: float = 100.0) -> pd.DataFrame:
    """``table`` (the workbench's rows, shares in [0, 1]) with the published rows of ``name`` appended below it in
    the same columns, the workbench's values scaled to the paper's percentages by ``scale``."""
    published = published_table(name)
    columns = [c for c in table.columns if c in published.columns]
    ours = table[columns].astype(float) * scale
    return pd.concat([ours.assign(source="this run"), published[columns + ["source"]]])

