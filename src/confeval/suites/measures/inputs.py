"""Inputs of the measures suite: multiple-choice datasets -> items (for live runs), and records
of (question, answer option) pairs with the confidence measures a user computed.

Datasets: read by the one multiple-choice loader,
:func:`confeval.suites._multiple_choice.load_mc_items` (``builtin:arith-mc``, CommonsenseQA in
its Hugging Face and original layouts, generic files; items that cannot be asked are counted).

Measure records (:func:`read_measure_records`):
one row per (question, option): ``--measure-cols`` (higher = more confident), optionally
``--uncertainty-cols`` (higher = *less* confident: negated, e.g. perplexity), ``--correct-col``
(1 for the gold option, 0 otherwise; MCQA-Eval's labels) and ``--group-col`` (the question id,
the unit the bootstrap resamples). Rows are excluded and counted, never dropped silently:
``missing_measure``, ``non_numeric_measure``, the correctness reasons, ``missing_question``
and ``duplicate_option_row`` (a question's ``option`` seen again: the first row is kept). A
measure of -inf or +inf is kept as the least or most confident and counted in
``infinite_values``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...records import RUN_RECORDS, RecordSet
from .options import MEASURE_NAMES

__all__ = ["MeasureInputs", "StudyInputs", "measure_rows", "option_rows", "run_option_rows",
           "read_measure_records", "read_study_records"]


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
    incomplete: dict[str, int] = field(default_factory=dict)  # measures some rows lack
    infinite: dict[str, int] = field(default_factory=dict)  # +-inf values kept, by measure


def read_measure_records(rs: RecordSet, *, measure_cols: str | None,
                         uncertainty_cols: str | None = None, correct_col: str = "correct",
                         group_col: str = "question_id") -> MeasureInputs:
    """Validated measures of the usable rows of ``rs`` (module docstring). Without
    ``measure_cols`` and ``uncertainty_cols``, every column of
    :data:`~confeval.suites.measures.options.MEASURE_NAMES` the rows have is a measure, named
    by its display name; one that some rows lack (P(true) when a server's top-k held neither
    A nor B) is left out and listed in ``incomplete`` — measures are compared on the same
    rows, never one on a subset."""
    incomplete: dict[str, int] = {}
    labels: dict[str, str] = {}
    if measure_cols or uncertainty_cols:
        confident = rs.columns(measure_cols, what="measure column") if measure_cols else []
        uncertain = rs.columns(uncertainty_cols, what="measure column") \
            if uncertainty_cols else []
    else:
        present = [c for c in MEASURE_NAMES if c in rs.frame.columns]
        for c in present:
            missing = int(rs.frame[c].isna().sum())
            if missing == len(rs.frame):
                continue  # a measure this run could not give at all (listed as unavailable)
            if missing:
                incomplete[MEASURE_NAMES[c]] = missing
        confident = [c for c in present if c not in incomplete
                     and MEASURE_NAMES[c] not in incomplete and rs.frame[c].notna().any()]
        uncertain = []
        labels = {c: MEASURE_NAMES[c] for c in confident}
    names = [*confident, *uncertain]
    if not names:
        raise ValueError(f"{rs.source}: no measure column (give --measure-cols and/or "
                         f"--uncertainty-cols; known columns: {', '.join(MEASURE_NAMES)})")
    if len(set(names)) != len(names):
        raise ValueError(f"{rs.source}: a column is both a measure and an uncertainty")
    values = rs.numeric(names, what="measure", allow_inf=True)
    values[:, len(confident):] *= -1
    correct = rs.labels(correct_col, allowed=["0", "1"], what="correct")
    questions = rs.groups(group_col, what="question")
    if "option" in rs.frame.columns:  # the same option of a question twice would weigh double
        seen = rs.frame.loc[rs.mask, [group_col, "option"]].astype(str)
        repeated = np.zeros(len(rs.frame), dtype=bool)
        repeated[np.flatnonzero(rs.mask)[seen.duplicated().to_numpy()]] = True
        rs.exclude(repeated, "duplicate_option_row")
    keep = rs.mask
    shown = [labels.get(n, n) for n in names]
    kept, infinite = _extremes_for_infinities(values[keep], shown)
    return MeasureInputs(kept, shown, correct[keep].astype(np.float64), questions[keep], rs,
                         uncertain, incomplete, infinite)


def _extremes_for_infinities(values: np.ndarray, names: list[str]
                             ) -> tuple[np.ndarray, dict[str, int]]:
    """A measure of -inf (an option the model gives probability 0, SL = log 0) is the least
    confident, +inf the most: kept and ranked so, never dropped. Each column's infinities
    become values just beyond its finite range (1 below its minimum, 1 above its maximum),
    which every metric here reads as those extremes (AUROC, AUARC and RCE use only the order;
    histogram binning cuts at quantiles); how many there were is reported per measure."""
    values = values.copy()
    infinite = {}
    for j, name in enumerate(names):
        column = values[:, j]
        inf = np.isinf(column)
        if not inf.any():
            continue
        infinite[name] = int(inf.sum())
        finite = column[~inf]
        low, high = (finite.min(), finite.max()) if finite.size else (0.0, 0.0)
        column[np.isneginf(column)] = low - 1.0
        column[np.isposinf(column)] = high + 1.0
    return values, infinite


def run_option_rows(records: list[dict]) -> list[dict]:
    """One row per (question, option) from a live run's per-question records:
    ``question_id``, the option's measures and ``correct``, and what the question's record
    says could not be measured (``unavailable``)."""
    flat = []
    for r in records:
        if r.get("status") != "ok":
            continue
        for row in r.get("rows") or []:
            flat.append({"question_id": r["item_id"], **row,
                         "unavailable": r.get("unavailable") or {}})
    return flat


@dataclass
class StudyInputs:
    """Measures (n, k), higher = more confident, their names, and a continuous correctness
    score (n,) in [0, 1] for threshold-based evaluation (one row per answer)."""

    values: np.ndarray
    names: list[str]
    score: np.ndarray
    records: RecordSet


def read_study_records(rs: RecordSet, *, measure_cols: str | None,
                       uncertainty_cols: str | None = None, score_col: str = "score"
                       ) -> StudyInputs:
    """Validated measures and correctness scores of the usable rows of ``rs``; rows with a
    missing, non-numeric or out-of-[0, 1] score are excluded and counted (``missing_score``,
    ``non_numeric_score``, ``score_out_of_range``)."""
    confident = rs.columns(measure_cols, what="measure column") if measure_cols else []
    uncertain = rs.columns(uncertainty_cols, what="measure column") if uncertainty_cols else []
    names = [*confident, *uncertain]
    if not names:
        raise ValueError(f"{rs.source}: give --measure-cols and/or --uncertainty-cols")
    values = rs.numeric(names, what="measure")
    values[:, len(confident):] *= -1
    score = rs.numeric([score_col], lo=0.0, hi=1.0, what="score")[:, 0]
    keep = rs.mask
    return StudyInputs(values[keep], names, score[keep], rs)


def option_rows(items: list[dict]) -> list[dict]:
    """One row per (question, option), MCQA-Eval's unit: ``question_id``, ``option`` (its
    letter), ``text`` and ``correct`` (1 for the gold option)."""
    return [{"question_id": it["item_id"], "option": letter, "text": text,
             "correct": int(letter == it["answer"])}
            for it in items for letter, text in zip(it["letters"], it["options"])]


def measure_rows(path: Path) -> RecordSet:
    """The (question, option) rows of a record file, or of a ``measures run`` folder (its
    records' rows)."""
    from ...runs import load_run_records

    path = Path(path)
    if not path.is_dir():
        return RecordSet.read(path)
    rows = run_option_rows(load_run_records(path / RUN_RECORDS))
    if not rows:
        raise ValueError(f"{path}: no (question, option) rows (not a `measures run` folder, or "
                         "no question was answered)")
    return RecordSet.from_records(rows, str(path))
