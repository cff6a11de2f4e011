"""Why predictions ended without a query: the Table 3 ``no_query`` row split by cause."""

import pandas as pd

from sparqlab.eval import no_query_causes


def test_no_query_causes_split_the_no_query_row_by_error_category():
    frame = pd.DataFrame({"error_type": ["no_query", "no_query", "no_query", "correct"],
                          "error_category": ["truncated_reply", "context_overflow", "truncated_reply", None]})
    table = no_query_causes({"run": frame, "other": frame.iloc[3:]})
    assert table.to_dict() == {"run": {"context_overflow": 1, "truncated_reply": 2},
                               "other": {"context_overflow": 0, "truncated_reply": 0}}
