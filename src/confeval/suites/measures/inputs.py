"""Inputs of the measures suite: records of (question, answer option) pairs with the confidence
measures a user computed, the option's correctness and the question it belongs to.

One row per (question, option): ``--measure-cols`` (higher = more confident), optionally
``--uncertainty-cols`` (higher = *less* confident: negated, e.g. perplexity), ``--correct-col``
(1 for the gold option, 0 otherwise; MCQA-Eval's labels) and ``--group-col`` (the question id,
the unit the bootstrap resamples). Rows are excluded and counted, never dropped silently:
``missing_measure``, ``non_numeric_measure``, ``non_finite_measure``, the correctness reasons
and ``missing_question``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...records import RecordSet

__all__ = ["MeasureInputs", "read_measure_records"]


@dataclass
class MeasureInputs:
    """Measures (n, k) oriented so that higher = more confident, their names, correctness
    (n,), the question of each row (n,), and the :class:`RecordSet` with its counts."""

    values: np.ndarray
    names: list[str]
    correct: np.ndarray
    questions: np.ndarray
    records: RecordSet
    negated: list[str]  # the uncertainty columns, turned into confidences


def read_measure_records(rs: RecordSet, *, measure_cols: str | None,
                         uncertainty_cols: str | None = None, correct_col: str = "correct",
                         group_col: str = "question_id") -> MeasureInputs:
    """Validated measures of the usable rows of ``rs`` (module docstring)."""
    confident = rs.columns(measure_cols, what="measure column") if measure_cols else []
    uncertain = rs.columns(uncertainty_cols, what="measure column") if uncertainty_cols else []
    names = [*confident, *uncertain]
    if not names:
        raise ValueError(f"{rs.source}: give --measure-cols and/or --uncertainty-cols")
    if len(set(names)) != len(names):
        raise ValueError(f"{rs.source}: a column is both a measure and an uncertainty")
    values = rs.numeric(names, what="measure")
    values[:, len(confident):] *= -1
    correct = rs.labels(correct_col, allowed=["0", "1"], what="correct")
    questions = rs.groups(group_col, what="question")
    keep = rs.mask
    return MeasureInputs(values[keep], names, correct[keep].astype(np.float64),
                         questions[keep], rs, uncertain)
