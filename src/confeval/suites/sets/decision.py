"""``confeval guarantee`` on multiple-choice records: answer the top option; the confidence is
its probability (the option values read as ``sets score`` reads them: the suite's
``--logit-cols``, ``--input`` and ``--precision``), right when it is the gold option."""

from __future__ import annotations

import numpy as np

from ...records import RecordSet
from ..base import Decided, Decision
from ..options import Options
from .inputs import option_values, read_sets
from .options import SetsOptions

__all__ = ["DECISION"]


def calibrate(rs: RecordSet, options: SetsOptions, choice: Options) -> Decided:
    from .scoring import tied_top_warning

    data = read_sets(rs, options)
    _, tied = tied_top_warning(data.probs)   # the answer is argmax's pick: said as sets score
    if tied:
        rs.warnings.append(tied)
    conf = data.probs.max(axis=1).astype(np.float64)
    correct = (data.probs.argmax(axis=1) == data.labels).astype(np.float64)
    return Decided(rs, conf, correct)


def confidence(rs: RecordSet, options: SetsOptions, choice: Options) -> np.ndarray:
    """The top option's probability of each row (NaN where excluded), computed as at
    calibration, without the gold option."""
    from ...conformal import to_probabilities

    values, _ = option_values(rs, logit_cols=options.logit_cols, input_kind=options.input,
                              precision=options.precision)
    conf = np.full(len(rs.frame), np.nan)
    keep = rs.mask
    if keep.any():
        probs = to_probabilities(values[keep], options.input, np.dtype(options.precision))
        conf[keep] = probs.max(axis=1).astype(np.float64)
    return conf


def words(options: SetsOptions, choice: Options) -> dict[str, str]:
    return {"act": "Answer the top option", "item": "answered items", "error": "wrong"}


def applies_to(options: SetsOptions, choice: Options) -> dict:
    return {"confidence": f"top option probability ({options.precision} "
            f"{'softmax' if options.input != 'probs' else 'renormalisation'} of the "
            f"{options.logit_cols} columns, read as {options.input})"}


DECISION = Decision(calibrate, confidence, words, applies_to)
