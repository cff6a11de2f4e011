"""Answer metrics: normalisation, SAGA's set F1 / EM / empty rate, and SPINACH's row-level F1.

``set_f1`` compares normalised answer *sets* (the paper metric every method is scored with);
``row_f1`` compares result *rows* term by term, as SPINACH reports it. ``docs/metrics.md`` explains the difference.
"""

from sparqlab.eval.errors import categorise, categorise_record, error_table, no_query_causes
from sparqlab.eval.metrics import (
    COST_FIELDS,
    SCORING_RULES,
    SetScore,
    answer_means,
    check_answers,
    judged_frame,
    judged_scores,
    score_prediction,
    set_f1,
    set_scores,
    summarise,
)
from sparqlab.eval.normalise import (
    answer_columns,
    answer_set,
    answers_from_result,
    fetch_labels,
    normalise_answer,
    normalise_term,
)
from sparqlab.eval.rows import row_f1

__all__ = [
    "COST_FIELDS",
    "SCORING_RULES",
    "SetScore",
    "answer_columns",
    "answer_means",
    "check_answers",
    "answer_set",
    "answers_from_result",
    "categorise",
    "categorise_record",
    "error_table",
    "no_query_causes",
    "fetch_labels",
    "judged_frame",
    "judged_scores",
    "normalise_answer",
    "normalise_term",
    "row_f1",
    "score_prediction",
    "set_f1",
    "set_scores",
    "summarise",
]
