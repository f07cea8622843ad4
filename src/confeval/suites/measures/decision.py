"""``confeval guarantee`` on MCQA-Eval's rows: per question, answer the option a measure
(``-c``, a measures column, default ``sl``; higher = more confident) ranks first, with that
value as the confidence; right when it is the gold option (the suite's ``--correct-col``).
Rows are read as ``measures score`` reads them (its exclusions counted). Tied first places go
to the first of the tied rows, in the file's order (as ``numpy.argmax``)."""

from __future__ import annotations

import numpy as np

from ...records import RecordSet
from ..base import Decided, Decision
from .inputs import read_measure_records
from .options import MeasureChoice, MeasuresOptions

__all__ = ["DECISION", "first_ranked"]


def first_ranked(value: np.ndarray, questions: np.ndarray) -> np.ndarray:
    """The row index of each question's highest value (ties: the first row in file order)."""
    # each question's rows together, the most confident first; stable: ties keep file order
    group = np.unique(questions, return_inverse=True)[1]
    order = np.lexsort((-value, group))
    return order[np.r_[True, group[order][1:] != group[order][:-1]]]


def calibrate(rs: RecordSet, options: MeasuresOptions, choice: MeasureChoice) -> Decided:
    data = read_measure_records(rs, measure_cols=choice.measure,
                                correct_col=options.correct_col, group_col=options.group_col)
    value = data.values[:, 0]
    first = first_ranked(value, data.questions)
    return Decided(rs, value[first], data.correct[first])


def confidence(rs: RecordSet, options: MeasuresOptions, choice: MeasureChoice) -> np.ndarray:
    """The measure of each question's first-ranked option on its row; NaN on the others and
    on excluded rows (new records: the measure only, no gold)."""
    value = rs.numeric([choice.measure], what="measure", allow_inf=True)[:, 0]
    questions = rs.groups(options.group_col, what="question")
    conf = np.full(len(rs.frame), np.nan)
    usable = np.flatnonzero(rs.mask)
    if usable.size:
        first = usable[first_ranked(value[usable], questions[usable])]
        conf[first] = value[first]
    return conf


def words(options: MeasuresOptions, choice: MeasureChoice) -> dict[str, str]:
    return {"act": f"Answer the option {choice.measure} ranks first",
            "item": "answered questions", "error": "wrong"}


def applies_to(options: MeasuresOptions, choice: MeasureChoice) -> dict:
    return {"confidence": f"{choice.measure} of the option it ranks first in each question",
            "measure_col": choice.measure}


DECISION = Decision(calibrate, confidence, words, applies_to, one_per_group=True)
