"""Inputs of the sets suite: multiple-choice record files -> probability matrices, and
multiple-choice datasets -> items for a live run.

Record files (``confeval sets score``): one row per question with the gold option (``answer``:
a letter, or whatever follows the last ``_`` of the option columns) and one column per option
(``logit_A``, ``logprob_B``, ...; the part after the last ``_`` names the option). An option a
question does not have is an empty cell (-inf, log 0, is an option with probability 0). Rows
are excluded and counted, never dropped silently: ``non_finite_option_value`` (+inf),
``option_value_overflows_float32`` (beyond 3.4e38 with the float32 softmax),
``probs_do_not_sum_to_1``, ``option_value_out_of_range`` (a log-prob above 0, a probability
outside [0, 1]), ``fewer_than_2_options``, ``unknown_label``, ``gold_option_missing`` (see
:class:`~confeval.records.RecordSet` for the generic reasons).

Datasets (``confeval sets run --data``): read by the one multiple-choice loader,
:func:`confeval.suites._multiple_choice.load_mc_items` (its docstring lists the layouts);
other columns (e.g. ``category``) are carried into the records.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._validation import index_in
from ...conformal import to_probabilities
from ...records import RecordSet
from .options import INPUT_KINDS, SetsOptions

__all__ = ["INPUT_KINDS", "SetsInputs", "option_values", "read_sets", "read_sets_records"]

PROBS_SUM_TOLERANCE = 0.01
"""``--input probs``: a row whose probabilities sum further than this from 1 is excluded
(``probs_do_not_sum_to_1``) rather than silently renormalised; closer ones are renormalised
(rounding in the file)."""


@dataclass
class SetsInputs:
    """What :func:`confeval.suites.sets.scoring.score_sets` takes, read from one record file:
    ``probs`` (n, K), ``labels`` (n,) gold option indices, ``groups`` (n,) or None, the option
    ``letters``, and the :class:`RecordSet` with its exclusion counts."""

    probs: np.ndarray
    labels: np.ndarray
    groups: np.ndarray | None
    letters: list[str]
    records: RecordSet


def read_sets_records(rs: RecordSet, *, label_col: str = "answer", logit_cols: str = "logit_*",
                      input_kind: str = "logits", precision: str = "float32",
                      group_col: str | None = None) -> SetsInputs:
    """Validated option probabilities of the usable rows of ``rs`` (others excluded and
    counted in ``rs``); the softmax (or renormalisation of ``probs``) in ``precision``."""
    values, letters = option_values(rs, logit_cols=logit_cols, input_kind=input_kind,
                                    precision=precision)
    gold = index_in(np.array(letters), rs.labels(label_col, allowed=letters, what="label"))
    gold_value = values[np.arange(gold.size), np.maximum(gold, 0)]
    rs.exclude(~np.isfinite(gold_value), "gold_option_missing")
    group_text = rs.groups(group_col) if group_col else None
    keep = rs.mask
    groups = None if group_text is None else group_text[keep]
    probs = to_probabilities(values[keep], input_kind, np.dtype(precision))
    return SetsInputs(probs, gold[keep], groups, letters, rs)


def read_sets(rs: RecordSet, options: SetsOptions) -> SetsInputs:
    """:func:`read_sets_records` with the suite's options: how scoring, comparing and
    certifying all read a record set."""
    return read_sets_records(rs, label_col=options.label_col, logit_cols=options.logit_cols,
                             input_kind=options.input, precision=options.precision,
                             group_col=options.group_col)


def option_values(rs: RecordSet, *, logit_cols: str = "logit_*", input_kind: str = "logits",
                  precision: str = "float32") -> tuple[np.ndarray, list[str]]:
    """(each row's option values, NaN on excluded rows and on options a row does not have;
    the option letters): the checks every sets reading makes, gold or not (a policy applied
    to new records has no gold)."""
    if input_kind not in INPUT_KINDS:
        raise ValueError(f"--input must be one of {', '.join(INPUT_KINDS)}, got {input_kind!r}")
    cols = rs.columns(logit_cols, what="option column")
    if not cols:
        raise ValueError(f"{rs.source}: --logit-cols {logit_cols!r} names no column")
    letters = [str(c).rsplit("_", 1)[-1] for c in cols]
    values = rs.numeric(cols, what="option_value", allow_missing=True,
                        lo=0.0 if input_kind == "probs" else None,
                        hi={"logprobs": 0.0, "probs": 1.0}.get(input_kind),
                        allow_inf=input_kind != "probs")
    # -inf (log 0) is an option with probability 0; +inf is no number of either kind
    rs.exclude(np.isposinf(values).any(axis=1) & rs.mask, "non_finite_option_value")
    if precision == "float32":
        with np.errstate(invalid="ignore"):
            too_big = (np.abs(values) > np.finfo(np.float32).max) & np.isfinite(values)
        rs.exclude(too_big.any(axis=1) & rs.mask, "option_value_overflows_float32")
    if input_kind == "probs":
        with np.errstate(invalid="ignore"):
            total = np.nansum(values, axis=1)
        rs.exclude((np.abs(total - 1) > PROBS_SUM_TOLERANCE) & rs.mask,
                   "probs_do_not_sum_to_1")
    values = np.where(rs.mask[:, None], values, np.nan)
    rs.exclude((np.isfinite(values).sum(axis=1) < 2) & rs.mask, "fewer_than_2_options")
    return np.where(rs.mask[:, None], values, np.nan), letters
